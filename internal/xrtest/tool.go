package xrtest

import (
	"os"
	"os/exec"
	"testing"
)

// Tool is the path of a program a test runs (eapol_test, radsecproxy,
// radclient: clients no one here wrote). Without it the test is skipped,
// saying which Debian package has it, except under CI=true (.ci/run
// installs them), where that is a failure.
func Tool(t testing.TB, name, debianPackage string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (Debian %s) is missing; .ci/run installs it", name, debianPackage)
		}
		t.Skipf("SKIPPED: %s is not installed (apt-get install %s): this test needs it", name, debianPackage)
	}
	return bin
}
