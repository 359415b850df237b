package fakellm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Start serves a fake with config c on a free port of 127.0.0.1. It
// returns the server's URL, with no path (its API is under /v1), and stop,
// which ends every request still served, stops the server and waits for
// all of its handlers.
func Start(c Config) (url string, stop func(), err error) {
	return NewHandler(c).Start("127.0.0.1:0")
}

// Start is the package's Start for s, on the address addr, which must be
// a loopback one; port 0 picks a free port.
func (s *Server) Start(addr string) (url string, stop func(), err error) {
	if s.err != nil {
		return "", nil, s.err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakellm: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", nil, fmt.Errorf("fakellm: address %q: the fake serves on a loopback address only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("fakellm: %w", err)
	}
	// Cancelling base ends every request's context, so that a stalled
	// stream ends on stop rather than holding it.
	base, cancel := context.WithCancel(context.Background())
	var handlers sync.WaitGroup
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handlers.Add(1)
			defer handlers.Done()
			s.ServeHTTP(w, r)
		}),
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		// No WriteTimeout: a stream is held open for as long as its
		// schedule or its fault says.
		IdleTimeout:    time.Minute,
		MaxHeaderBytes: 1 << 20,
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		ctx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-served
		// Shutdown leaves hijacked connections alone: the handlers that
		// took them close them before they return.
		handlers.Wait()
	})
	return "http://" + ln.Addr().String(), stop, nil
}
