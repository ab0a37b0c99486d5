package app

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// xr hashes with OWASP's argon2id minimum; the lower test cost is used
// only where a test kit asks for it, and xr's own code never does. Not
// parallel: it flips the process's cost while no other test runs.
func TestPasswordCost(t *testing.T) {
	if passes, kib := argonCost(false); passes != 2 || kib != 19*1024 || argonThreads != 1 || argonKeyLen != 32 {
		t.Fatalf("production cost t=%d m=%d p=%d len=%d, want t=2 m=19456 p=1 len=32", passes, kib, argonThreads, argonKeyLen)
	}
	// A hash carries its cost: one made at either verifies.
	for _, low := range []bool{false, true} {
		passes, kib := argonCost(low)
		old := lowPasswordCost.Swap(low)
		h := HashPassword("Pass-word-1")
		lowPasswordCost.Store(old)
		if want := fmt.Sprintf("$m=%d,t=%d,p=1$", kib, passes); !strings.Contains(h, want) {
			t.Fatalf("hash %s lacks %s", h, want)
		}
		if !VerifyPassword(h, "Pass-word-1") || VerifyPassword(h, "Pass-word-2") {
			t.Fatalf("hash at low=%v does not verify as it should", low)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		if rel, _ := filepath.Rel(root, path); rel == filepath.Join("app", "crypto.go") || strings.HasPrefix(rel, filepath.Join("internal", "xrtest")+string(filepath.Separator)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "LowerPasswordCostForTests") {
			t.Errorf("%s lowers the password cost: only the test kit (internal/xrtest) may", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
