package cli

import (
	"strings"
	"testing"
)

// xr dev tenants makes the tenants bench/tenants.sh measures: the first
// --nas of them get a loopback NAS (the operator's tool may name one) and
// the others none.
func TestDevTenants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustOK(t, runXR(t, dir, "dev", "tenants", "--count", "3", "--nas", "2"))
	list := mustOK(t, runXR(t, dir, "tenant", "list")).stdout
	if n := strings.Count(list, "\n"); n < 3 {
		t.Fatalf("tenant list after dev tenants --count 3: %q", list)
	}
	for i, want := range []int{1, 1, 0} {
		slug := benchSlug("bench", i+1)
		got := mustOK(t, runXR(t, dir, "nas", "list", "--tenant", slug, "--json")).json(t)["nas"].([]any)
		if len(got) != want {
			t.Fatalf("%s has %d NAS, want %d", slug, len(got), want)
		}
		if want == 1 && got[0].(map[string]any)["ip"] != benchNASIP(i+1) {
			t.Fatalf("%s NAS address %v", slug, got[0])
		}
	}
	mustFail(t, runXR(t, dir, "dev", "tenants", "--count", "2", "--nas", "3"), "out_of_range")
}
