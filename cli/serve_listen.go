package cli

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"time"

	"xr/app"
	"xr/web"
)

// webServers are what xr serve answers HTTP with: the plain listener and,
// when xr serves HTTPS itself (serve_tls.go), the TLS one, the plain one
// then answering only ACME challenges and redirects.
type webServers struct {
	plain, secure     *http.Server
	plainLn, secureLn net.Listener
}

// listenWeb opens the listeners of o and builds their servers around h.
func listenWeb(o serveOpts, a *app.App, dataDir string, h http.Handler) (*webServers, error) {
	ln, err := o.socks.listen(o.http)
	if err != nil {
		return nil, err
	}
	w := &webServers{plainLn: ln, plain: newHTTPServer(h)}
	if !o.tls.on() {
		return w, nil
	}
	if w.secureLn, err = o.socks.listen(o.tls.https); err != nil {
		w.close()
		return nil, err
	}
	_, port, _ := net.SplitHostPort(w.secureLn.Addr().String())
	tcfg, challenges, err := o.tls.config(a, dataDir, port)
	if err != nil {
		w.close()
		return nil, err
	}
	w.plain.Handler = challenges
	w.secure = newHTTPServer(strictTransport(h))
	w.secure.ConnContext = web.ConnContext
	w.secureLn = tls.NewListener(w.secureLn, tcfg)
	return w, nil
}

func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
}

// addrs are the bound addresses ("" for HTTPS when there is none).
func (w *webServers) addrs() (plain, secure string) {
	plain = w.plainLn.Addr().String()
	if w.secureLn != nil {
		secure = w.secureLn.Addr().String()
	}
	return plain, secure
}

// serve serves every listener, each through the JSON error wrapper; each
// server's end is sent on errc (room for two).
func (w *webServers) serve(errc chan<- error) {
	go func() { errc <- w.plain.Serve(web.JSONErrorListener(w.plainLn)) }()
	if w.secure != nil {
		go func() { errc <- w.secure.Serve(web.JSONErrorListener(w.secureLn)) }()
	}
}

// shutdown stops accepting and waits for in-flight requests until ctx
// ends (a shutdown cut short still completes: it is logged).
func (w *webServers) shutdown(ctx context.Context, log *slog.Logger) {
	for _, s := range []*http.Server{w.plain, w.secure} {
		if s == nil {
			continue
		}
		if err := s.Shutdown(ctx); err != nil {
			log.Error("http shutdown cut in-flight requests short", "err", err)
		}
	}
}

// close closes listeners never served.
func (w *webServers) close() {
	for _, ln := range []net.Listener{w.plainLn, w.secureLn} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}
