package web_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// importRules are the arrows between the HTTP products and the layers
// under them: a package matching From may not depend, directly or through
// another package, on one matching To (a name ending in "/..." matches the
// package and every package under it).
var importRules = []struct{ From, To, Why string }{
	{"xr/web", "xr/web/console/...", "the platform mounts the console, it does not know it"},
	{"xr/web", "xr/web/my/...", "the platform mounts the subscriber pages, it does not know them"},
	{"xr/web/console/...", "xr/web/my/...", "one product of pages does not reach into another"},
	{"xr/web/my/...", "xr/web/console/...", "one product of pages does not reach into another"},
	{"xr/app/...", "xr/web/...", "arrows point one way: web calls app"},
}

// TestImportArrows: the products' packages keep to their arrows, in the
// code that ships (the tests may compose them: internal/webtest mounts
// every product).
func TestImportArrows(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "xr/...").Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		deps[f[0]] = f[1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"xr/web", "xr/web/console", "xr/web/my", "xr/app"} {
		if _, ok := deps[must]; !ok {
			t.Fatalf("go list did not list %s", must)
		}
	}
	for _, r := range importRules {
		for pkg, ds := range deps {
			if !matches(r.From, pkg) {
				continue
			}
			for _, d := range ds {
				if matches(r.To, d) {
					t.Errorf("%s depends on %s: %s", pkg, d, r.Why)
				}
			}
		}
	}
}

// matches tells whether pkg is pattern, or under it when the pattern ends
// in "/...".
func matches(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}
