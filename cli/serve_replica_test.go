package cli

import (
	"context"
	"database/sql"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"xr/app/replica"
)

// xr serve --replicate-to streams instance.db: a tenant another command
// creates while it runs is in the replica once serve has stopped (its
// shutdown ships what is left). A replica it cannot use is refused before
// anything starts.
func TestServeReplicateTo(t *testing.T) {
	dir, rdir := t.TempDir(), t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	base := serveOpts{http: "127.0.0.1:0", domain: "xr.test", noRadius: true}

	for _, bad := range []string{"sftp://backup@host/xr", "/mnt/replica", "file://"} {
		o := base
		o.replicateTo = bad
		err := runServe(context.Background(), g, o, func(string, string) { t.Errorf("serve started with --replicate-to %s", bad) })
		if err == nil || !strings.Contains(err.Error(), "--replicate-to") {
			t.Fatalf("--replicate-to %s: %v", bad, err)
		}
	}

	o := base
	o.replicateTo = "file://" + rdir
	served := serveXR(t, dir, o)
	mustOK(t, runXR(t, dir, createArgs("late")...))
	served.stop()

	target, err := replica.ParseTarget(o.replicateTo)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "instance.db")
	if err := replica.Restore(context.Background(), target, "instance.db", out); err != nil {
		t.Fatal(err)
	}
	c, err := sql.Open("sqlite", "file:"+out+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow(`SELECT COUNT(*) FROM tenants WHERE slug IN ('acme', 'late')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("the replica of instance.db has %d of acme and late, want 2", n)
	}
}
