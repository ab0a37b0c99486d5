package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"xr/internal/xrtest"
)

// TestKeysWrapStatusRotate: xr keys wrap puts the instance keys under a
// master key kept outside the data directory; afterwards every command
// needs it (flag or env) and refuses with a message naming the flag without
// it, a copy of the directory opens nothing, xr keys status tells, and xr
// keys rotate re-seals every secret under a new key.
func TestKeysWrapStatusRotate(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	mustOK(t, runXR(t, dir, "nas", "add", "--tenant", "acme", "--name", "one", "--ip", "10.4.0.1", "--secret", "a-much-longer-random-secret"))

	st := mustOK(t, runXR(t, dir, "keys", "status", "--json")).json(t)
	// The NAS secret is sealed twice: in the tenant and in the instance's
	// NAS directory.
	if st["wrapped"] != false || st["opens"] != true || st["sealed_current"] != float64(2) {
		t.Fatalf("status of plain keys: %v", st)
	}
	if out := mustOK(t, runXR(t, dir, "keys", "status")).stdout; !strings.Contains(out, "NOT wrapped") {
		t.Fatalf("status text: %q", out)
	}
	mustFail(t, runXR(t, dir, "keys", "wrap"), "--master-key-file")

	keyDir := t.TempDir()
	keyFile := filepath.Join(keyDir, "master.key")
	key := strings.TrimSpace(mustOK(t, runXR(t, dir, "keys", "generate")).stdout)
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(dir, "master.key")
	if err := os.WriteFile(inside, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	mustFail(t, runXR(t, dir, "--master-key-file", inside, "keys", "wrap"), "outside the data directory")
	os.Remove(inside)
	// A plain instance refuses a master key until wrapped.
	mustFail(t, runXR(t, dir, "--master-key-file", keyFile, "tenant", "list"), "xr keys wrap")

	if w := mustOK(t, runXR(t, dir, "--master-key-file", keyFile, "keys", "wrap", "--json")).json(t); w["wrapped"] != float64(2) {
		t.Fatalf("wrap: %v", w)
	}
	mustFail(t, runXR(t, dir, "tenant", "list"), "--master-key-file")
	mustFail(t, runXR(t, dir, "nas", "list", "--tenant", "acme"), "XR_MASTER_KEY")
	mustOK(t, runXR(t, dir, "--master-key-file", keyFile, "nas", "list", "--tenant", "acme"))
	t.Setenv("XR_MASTER_KEY", key)
	mustOK(t, runXR(t, dir, "tenant", "list"))
	t.Setenv("XR_MASTER_KEY", "")

	st = mustOK(t, runXR(t, dir, "keys", "status", "--json")).json(t)
	if st["wrapped"] != true || st["opens"] != false || !strings.Contains(st["problem"].(string), "--master-key-file") {
		t.Fatalf("status without the master key: %v", st)
	}
	if out := mustOK(t, runXR(t, dir, "keys", "status")).stdout; !strings.Contains(out, "wrapped by a master key") || !strings.Contains(out, "cannot open") {
		t.Fatalf("status text: %q", out)
	}

	// A copy of the data directory without the master key opens nothing.
	cp := t.TempDir()
	xrtest.CopyDir(t, dir, cp)
	mustFail(t, runXR(t, cp, "nas", "list", "--tenant", "acme"), "--master-key-file")
	mustOK(t, runXR(t, cp, "--master-key-file", keyFile, "nas", "list", "--tenant", "acme"))

	rep := mustOK(t, runXR(t, dir, "--master-key-file", keyFile, "keys", "rotate", "--settle", "0", "--json")).json(t)
	if rep["resealed"] != float64(2) || rep["tenants"] != float64(1) || rep["previous_kept"] != false {
		t.Fatalf("rotate: %v", rep)
	}
	st = mustOK(t, runXR(t, dir, "--master-key-file", keyFile, "keys", "status", "--json")).json(t)
	if st["wrapped"] != true || st["sealed_current"] != float64(2) || st["sealed_previous"] != float64(0) || st["previous_keys"] != float64(0) {
		t.Fatalf("status after rotate: %v", st)
	}
	// The copy taken before the rotation still has its own (old) key.
	mustOK(t, runXR(t, cp, "--master-key-file", keyFile, "nas", "list", "--tenant", "acme"))

	// Re-wrap under a new master key, then unwrap.
	key2File := filepath.Join(keyDir, "master2.key")
	os.WriteFile(key2File, []byte(strings.TrimSpace(mustOK(t, runXR(t, dir, "keys", "generate")).stdout)), 0o600)
	mustFail(t, runXR(t, dir, "--master-key-file", key2File, "keys", "wrap"), "--old-master-key-file")
	mustOK(t, runXR(t, dir, "--master-key-file", key2File, "keys", "wrap", "--old-master-key-file", keyFile))
	mustFail(t, runXR(t, dir, "--master-key-file", keyFile, "tenant", "list"), "does not unwrap")
	mustOK(t, runXR(t, dir, "--master-key-file", key2File, "keys", "unwrap"))
	mustOK(t, runXR(t, dir, "nas", "list", "--tenant", "acme"))
}

// TestServeRefusesWithoutMasterKey: xr serve on wrapped keys without the
// master key does not start, and says which flag is missing.
func TestServeRefusesWithoutMasterKey(t *testing.T) {
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, createArgs("acme")...))
	keyFile := filepath.Join(t.TempDir(), "k")
	os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)), 0o600)
	mustOK(t, runXR(t, dir, "--master-key-file", keyFile, "keys", "wrap"))
	g := &globals{data: dir, out: io.Discard, errOut: io.Discard, logLevel: "error"}
	err := runServe(context.Background(), g, serveOpts{http: "127.0.0.1:0", domain: "xr.test", noRadius: true}, func(string, string) {
		t.Error("serve started without the master key")
	})
	if err == nil || !strings.Contains(err.Error(), "--master-key-file") {
		t.Fatalf("serve without the master key: %v", err)
	}
}
