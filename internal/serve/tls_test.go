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
	"strings"
	"testing"
	"time"

	"github.com/exopower/exopower/internal/testfiles"
)

// serveTLS serves s through Serve on a loopback port, as exopower serve
// does, and returns the address; the server is closed when the test ends.
func serveTLS(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := s.HTTPServer(time.Second)
	done := make(chan error, 1)
	go func() { done <- s.Serve(hs, Listen(ln, DefaultMaxConnections)) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// getTLS asks addr for /v1/status over a connection of its own (a new
// handshake), trusting pool, as prom with password when it is not "",
// and with the client certificate when it is not nil.
func getTLS(addr string, pool *x509.CertPool, password string, cert *tls.Certificate) (*http.Response, error) {
	cfg := &tls.Config{RootCAs: pool}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/v1/status", nil)
	if password != "" {
		req.SetBasicAuth("prom", password)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	return resp, nil
}

// serve takes TLS from the web config as exporter-toolkit does (HTTP/2
// unless it says otherwise, the certificate's files named relative to
// the config's), and a file broken under it fails no handshake: the last
// TLS config serves on, and the last users stay in force.
func TestServeTakesTLSFromTheWebConfig(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"), "tls_server_config: {cert_file: cert.pem, key_file: key.pem}")
	pool := testfiles.SelfSigned(t, filepath.Dir(path))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	addr := serveTLS(t, s)
	get := func(password string) (int, int) {
		t.Helper()
		resp, err := getTLS(addr, pool, password, nil)
		if err != nil {
			t.Fatal(err)
		}
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
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("the file broken, without the password: %d from this machine, want 401", code)
	}
	if code, _ := get("s3cret"); code != http.StatusOK {
		t.Errorf("the file broken, with the password: %d, want 200", code)
	}
}

// Whether serve speaks TLS is decided once, from the web config that its
// start checked: before, Serve read the file again, and a save under way
// at that moment had serve speak plain HTTP for good, passwords and all,
// without a word.
func TestServeSpeaksTLSAsTheWebConfigItsStartCheckedSays(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"), "tls_server_config: {cert_file: cert.pem, key_file: key.pem}")
	pool := testfiles.SelfSigned(t, filepath.Dir(path))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	if err := os.WriteFile(path, nil, 0o600); err != nil { // `cat new > web.yml`, under way
		t.Fatal(err)
	}
	addr := serveTLS(t, s)
	resp, err := getTLS(addr, pool, "s3cret", nil)
	if err != nil {
		t.Fatalf("serve speaks no TLS: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the password: %d, want 200", resp.StatusCode)
	}
}

// A serve that speaks plain HTTP, whose web config comes to set TLS,
// refuses every request (503, saying to start serve again) rather than
// take passwords in clear text as if nothing had changed.
func TestAServeOfPlainHTTPRefusesWhenItsWebConfigComesToSetTLS(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"))
	testfiles.SelfSigned(t, filepath.Dir(path))
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path)})
	h := s.Handler()
	if err := os.WriteFile(path, []byte(usersLine(t, "prom", "s3cret")+"\ntls_server_config: {cert_file: cert.pem, key_file: key.pem}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{"127.0.0.1:40000", "192.0.2.7:40000"} {
		req := request{"GET", "/metrics", nil}.to("127.0.0.1:10241")
		req.SetBasicAuth("prom", "s3cret")
		msg := errorBody(t, serveFrom(h, req, remote), http.StatusServiceUnavailable)
		for _, want := range []string{path, "sets TLS", "start serve again"} {
			if !strings.Contains(msg, want) {
				t.Errorf("from %s: error %q does not say %q", remote, msg, want)
			}
		}
	}
}

// A file that TLS needs taken away while the web config can be used (a
// client CA, the key) fails the next handshakes: before, the last TLS
// config that loaded served on, and a client CA deleted to revoke its
// clients revoked nothing. While the web config itself cannot be used, a
// save under way, the last TLS config serves on.
func TestAFileThatTLSNeedsTakenAwayFailsTheHandshake(t *testing.T) {
	path := writeWebConfig(t, usersLine(t, "prom", "s3cret"),
		"tls_server_config: {cert_file: cert.pem, key_file: key.pem, client_ca_file: ca.pem, client_auth_type: RequireAndVerifyClientCert}")
	dir := filepath.Dir(path)
	pool := testfiles.SelfSigned(t, dir)
	client := clientCert(t, filepath.Join(dir, "ca.pem"))
	var log lockedBuffer
	s, _ := offline(t, newClock(), Config{Web: loadWebConfig(t, path), Log: &log})
	addr := serveTLS(t, s)
	served := func(what string) {
		t.Helper()
		if resp, err := getTLS(addr, pool, "s3cret", client); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %v, %v; want 200", what, resp, err)
		}
	}
	refused := func(what string) {
		t.Helper()
		if resp, err := getTLS(addr, pool, "s3cret", client); err == nil {
			t.Errorf("%s: %d, want a failed handshake", what, resp.StatusCode)
		}
	}
	served("the client CA's client")
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "ca.pem"))
	refused("the client CA deleted")
	if want := "TLS handshakes fail until it is fixed: client_ca_file: "; !strings.Contains(log.String(), want) {
		t.Errorf("serve's log does not say %q:\n%s", want, log.String())
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	served("the web config emptied, the last TLS config (with the CA) serving on")
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	refused("the web config back, the client CA still gone")
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca, 0o600); err != nil {
		t.Fatal(err)
	}
	served("the client CA back")
	os.Remove(filepath.Join(dir, "key.pem"))
	refused("the key deleted")
}

// clientCert writes a self-signed client certificate to path, as the
// client CA that trusts it, and returns it with its key.
func clientCert(t *testing.T, path string) *tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(2),
		Subject:               pkix.Name{CommonName: "exopower test client"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
