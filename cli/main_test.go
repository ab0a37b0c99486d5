package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"xr/internal/browsertest"
)

// The whole-job browser tests share one Chromium (browsertest.Main); the
// xr binary buildXR made is removed after the tests.
func TestMain(m *testing.M) {
	browsertest.Main(m, func() {
		if xrBinary.dir != "" {
			_ = os.RemoveAll(xrBinary.dir)
		}
	})
}

// xrBinary is the xr binary built once for the test binary's tests.
var xrBinary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildXR is the xr binary, built once per test binary (a link of the whole
// program costs seconds), for tests that run it as separate processes (a
// primary and its standby, the soak run).
func buildXR(t *testing.T) string {
	t.Helper()
	xrBinary.once.Do(func() {
		if xrBinary.dir, xrBinary.err = os.MkdirTemp("", "xr-cli-test-"); xrBinary.err != nil {
			return
		}
		xrBinary.path = filepath.Join(xrBinary.dir, "xr")
		build := exec.Command("go", "build", "-o", xrBinary.path, "xr")
		build.Dir = ".."
		if out, err := build.CombinedOutput(); err != nil {
			xrBinary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if xrBinary.err != nil {
		t.Fatal(xrBinary.err)
	}
	return xrBinary.path
}
