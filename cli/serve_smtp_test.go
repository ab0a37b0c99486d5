package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestServeRefusesBadSMTPFlags: xr serve does not start on an SMTP relay
// address without a port, an unknown TLS mode or auth mechanism, and names
// the flag.
func TestServeRefusesBadSMTPFlags(t *testing.T) {
	dir := t.TempDir()
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	for _, c := range []struct {
		o    serveOpts
		flag string
	}{
		{serveOpts{smtpAddr: "relay.test"}, "--smtp-addr"},
		{serveOpts{smtpAddr: "relay.test:587", smtpTLS: "sometimes"}, "--smtp-tls"},
		{serveOpts{smtpAddr: "relay.test:587", smtpAuth: "ntlm"}, "--smtp-auth"},
	} {
		c.o.http, c.o.domain, c.o.noRadius = "127.0.0.1:0", "xr.test", true
		err := runServe(context.Background(), g, c.o, func(string, string) { t.Errorf("serve started with %+v", c.o) })
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Fatalf("%s: %v", c.flag, err)
		}
	}
}
