package radiusd

import (
	"os/exec"
	"strings"
	"testing"

	"xr/internal/xrtest"
)

// TestRadclient talks to the server with FreeRADIUS' radclient (Debian
// package freeradius-utils), when it is installed: an independent client
// for PAP, CHAP, Status-Server and accounting. The invocations are the
// ones documented in docs/radius.md.
func TestRadclient(t *testing.T) {
	t.Parallel()
	bin := xrtest.Tool(t, "radclient", "freeradius-utils")
	e := newEnv(t, NASTypeMikrotik, true, nil)
	e.authz.setUser("alice", Authorization{Found: true, Password: "wonderland", SessionTimeout: 3600, RateDownKbps: 4096, RateUpKbps: 1024})
	run := func(input, addr, kind string) string {
		t.Helper()
		cmd := exec.Command(bin, "-x", "-r", "1", "-t", "2", addr, kind, testSecret)
		cmd.Stdin = strings.NewReader(input)
		out, _ := cmd.CombinedOutput() // radclient exits 1 on Access-Reject
		return string(out)
	}
	for _, tc := range []struct {
		name, input, addr, kind string
		want                    []string
	}{
		{"pap", "User-Name = alice, User-Password = wonderland, Message-Authenticator = 0x00", e.authAddr, "auth",
			[]string{"Received Access-Accept", "Session-Timeout = 3600", `Mikrotik-Rate-Limit = "1024k/4096k"`}},
		{"pap wrong", "User-Name = alice, User-Password = nope, Message-Authenticator = 0x00", e.authAddr, "auth",
			[]string{"Received Access-Reject", `Reply-Message = "invalid username or password"`}},
		{"chap", "User-Name = alice, CHAP-Password = wonderland, Message-Authenticator = 0x00", e.authAddr, "auth",
			[]string{"Received Access-Accept"}},
		{"status", "Message-Authenticator = 0x00", e.authAddr, "status",
			[]string{"Received Access-Accept"}},
		{"acct", "Acct-Status-Type = Interim-Update, Acct-Session-Id = 81000001, User-Name = alice, Acct-Input-Octets = 10, Acct-Input-Gigawords = 1", e.acctAddr, "acct",
			[]string{"Received Accounting-Response"}},
	} {
		out := run(tc.input, tc.addr, tc.kind)
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q not in radclient output:\n%s", tc.name, w, out)
			}
		}
	}
	if recs := e.acct.records(); len(recs) != 1 || recs[0].InputOctets != 1<<32+10 {
		t.Errorf("records %+v", recs)
	}
}
