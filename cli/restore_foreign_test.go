package cli

import (
	"path/filepath"
	"testing"
)

// A backup of the same slug taken on another instance holds secrets
// sealed under that instance's keys: xr restore refuses it
// (backup_sealed_with_other_keys, nothing changed) unless --source-data
// names that instance, whose keys then re-seal every secret under this
// instance's key: afterwards none is unreadable.
func TestRestoreFromAnotherInstance(t *testing.T) {
	t.Parallel()
	here, there := t.TempDir(), t.TempDir()
	mustOK(t, runXR(t, here, createArgs("acme")...))
	mustOK(t, runXR(t, there, createArgs("acme")...))
	mustOK(t, runXR(t, there, "nas", "add", "--tenant", "acme", "--name", "far", "--ip", "10.9.0.1", "--secret", "a-much-longer-random-secret"))
	out := filepath.Join(t.TempDir(), "acme.xrbak")
	mustOK(t, runXR(t, there, "backup", "--tenant", "acme", "--out", out))

	mustFail(t, runXR(t, here, "restore", "--tenant", "acme", "--from", out), "backup_sealed_with_other_keys")
	if l := mustOK(t, runXR(t, here, "nas", "list", "--tenant", "acme", "--json")).json(t)["nas"].([]any); len(l) != 0 {
		t.Fatalf("a refused restore changed the tenant: %v", l)
	}
	// The wrong instance's keys open nothing.
	other := t.TempDir()
	mustOK(t, runXR(t, other, createArgs("beta")...))
	mustFail(t, runXR(t, here, "restore", "--tenant", "acme", "--from", out, "--source-data", other), "backup_sealed_with_other_keys")

	r := mustOK(t, runXR(t, here, "restore", "--tenant", "acme", "--from", out, "--source-data", there, "--json")).json(t)
	if r["resealed"].(float64) < 1 {
		t.Fatalf("%v", r)
	}
	st := mustOK(t, runXR(t, here, "keys", "status", "--json")).json(t)
	if st["sealed_unreadable"] != float64(0) || st["sealed_current"].(float64) < 1 {
		t.Fatalf("after the restore: %v", st)
	}
	if l := mustOK(t, runXR(t, here, "nas", "list", "--tenant", "acme", "--json")).json(t)["nas"].([]any); len(l) != 1 {
		t.Fatalf("%v", l)
	}
}
