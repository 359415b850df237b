package serve

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key into dir, and
// returns a pool that trusts it.
func selfSigned(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "exopower test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

// serve takes TLS from the web config as exporter-toolkit does (HTTP/2
// unless it says otherwise, the certificate's files named relative to
// the config's), and a file broken under it fails no handshake: the last
// TLS config that loaded serves on, while the passwords fail closed.
func TestServeTakesTLSFromTheWebConfig(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"), "tls_server_config: {cert_file: cert.pem, key_file: key.pem}")
	pool := selfSigned(t, filepath.Dir(path))
	s, _ := offline(t, newClock(), Config{WebConfigFile: path})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(time.Second)
	done := make(chan error, 1)
	go func() { done <- s.Serve(hs, Listen(ln, DefaultMaxConnections)) }()
	defer func() {
		hs.Close()
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	}()
	get := func(password string) (int, int) {
		t.Helper()
		// A client of its own each time: a new connection, a new
		// handshake.
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodGet, "https://"+ln.Addr().String()+"/v1/status", nil)
		if password != "" {
			req.SetBasicAuth("prom", password)
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.ProtoMajor
	}
	if code, proto := get("s3cret"); code != http.StatusOK || proto != 2 {
		t.Errorf("with the password: %d over HTTP/%d, want 200 over HTTP/2", code, proto)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("without the password: %d, want 401", code)
	}
	if err := os.WriteFile(path, []byte("tls_server_config: {cert_file: cert.pem, key_file: "), 0o600); err != nil {
		t.Fatal(err)
	}
	// This machine is answered as without passwords.
	if code, _ := get(""); code != http.StatusOK {
		t.Errorf("the file broken: %d from this machine, want 200", code)
	}
}
