package radiusd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"xr/radiusd/sim"
)

// TestSimulatorAgainstServer drives every simulator mode against the real
// server over loopback (small counts; the benchmarks do the heavy runs).
func TestSimulatorAgainstServer(t *testing.T) {
	t.Parallel()
	acct := &memAccounter{commitDelay: time.Millisecond}
	srv, auth, acctAddr := startServerT(t, acct)
	ctx := context.Background()
	base := sim.Config{AuthAddr: auth, AcctAddr: acctAddr, Secret: benchSecret, Users: 500, Concurrency: 16, Timeout: time.Second, Retries: 2}

	cfg := base
	cfg.Mode, cfg.Count = sim.ModeAuth, 500
	rep, err := sim.Run(ctx, cfg)
	if err != nil || rep.Accepted != 500 || rep.Failed != 0 || rep.BadReplies != 0 || rep.Requests != 500 {
		t.Fatalf("auth: %v\n%s", err, rep)
	}
	if !strings.Contains(rep.String(), "accept 500") {
		t.Errorf("report text:\n%s", rep)
	}

	cfg.PasswordFormat = "wrong"
	cfg.Count = 50
	if rep, err = sim.Run(ctx, cfg); err != nil || rep.Rejected != 50 || rep.BadReplies != 0 {
		t.Fatalf("reject: %v\n%s", err, rep)
	}

	cfg = base
	cfg.Mode, cfg.Sessions, cfg.Count = sim.ModeAcctInterim, 100, 300
	if rep, err = sim.Run(ctx, cfg); err != nil || rep.AcctAcked != 300 || rep.Failed != 0 {
		t.Fatalf("interim: %v\n%s", err, rep)
	}

	cfg = base
	cfg.Mode, cfg.Sessions = sim.ModeStorm, 400
	if rep, err = sim.Run(ctx, cfg); err != nil || rep.SessionsStarted != 400 || rep.SessionsLost != 0 || rep.Accepted != 400 {
		t.Fatalf("storm: %v\n%s", err, rep)
	}
	// Accounting-On + 300 interims + 400 starts.
	if n := acct.records.Load(); n != 701 {
		t.Fatalf("%d records committed", n)
	}
	if srv.Metrics.Drops("bad_authenticator") != 0 {
		t.Fatal("simulator packets failed authentication")
	}

	// Duration-bounded run without Message-Authenticator: the NAS requires it.
	cfg = base
	cfg.Mode, cfg.Duration, cfg.Count, cfg.NoMessageAuthenticator, cfg.Retries, cfg.Timeout = sim.ModeAuth, 100*time.Millisecond, 0, true, 0, 50*time.Millisecond
	if rep, err = sim.Run(ctx, cfg); err != nil || rep.Requests != 0 || rep.Failed == 0 {
		t.Fatalf("no-MA run: %v\n%s", err, rep)
	}
}
