package cli

import (
	"os/exec"
	"path/filepath"
	"testing"

	"xr/internal/browsertest"
)

// The whole-job browser tests share one Chromium (browsertest.Main).
func TestMain(m *testing.M) { browsertest.Main(m) }

// buildXR builds the xr binary into a test's temp dir, for tests that run
// it as separate processes (a primary and its standby, the soak run).
func buildXR(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "xr")
	build := exec.Command("go", "build", "-o", bin, "xr")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
