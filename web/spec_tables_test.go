package web_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The group tables of the spec's 01-core.md that the route tests check
// the route table against (TestSpecTablesMatchRouteTable) are read from a
// committed copy, so a lone clone runs them too; TestSpecTablesCopyIsCurrent
// keeps the copy equal to the spec whenever shared/spec is beside the
// checkout (developers' machines and CI).

// specCoreGroups are the group tables copied.
var specCoreGroups = []string{"Auth group", "Managers group", "Roles group", "Webhooks group"}

var (
	specCorePath   = filepath.Join("..", "..", "shared", "spec", "01-core.md")
	specTablesCopy = filepath.Join("testdata", "spec_core_tables.md")
)

// extractSpecTables is the copy's text: each group's heading and the lines
// of its table, in the spec's order.
func extractSpecTables(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	out.WriteString("<!-- The group tables of shared/spec/01-core.md the route tests read (web/spec_tables_test.go). -->\n")
	keep := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "## "):
			keep = false
		case strings.HasPrefix(trimmed, "### "):
			keep = false
			for _, g := range specCoreGroups {
				if strings.TrimPrefix(trimmed, "### ") == g {
					keep = true
					out.WriteString("\n" + trimmed + "\n\n")
				}
			}
		case keep && strings.HasPrefix(trimmed, "|"):
			out.WriteString(trimmed + "\n")
		}
	}
	return out.Bytes(), sc.Err()
}

// openSpecTables opens the committed copy. Without it the route tests have
// nothing to check: a skip on a developer's machine, a failure in CI.
func openSpecTables(t testing.TB) *os.File {
	t.Helper()
	f, err := os.Open(specTablesCopy)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v: the spec tables the route tests check are missing", err)
		}
		t.Skipf("%v (go test ./web -run TestSpecTablesCopyIsCurrent -update writes it from %s)", err, specCorePath)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestSpecTablesCopyIsCurrent(t *testing.T) {
	t.Parallel()
	src, err := os.Open(specCorePath)
	if err != nil {
		if _, cerr := os.Stat(specTablesCopy); cerr != nil && os.Getenv("CI") == "true" {
			t.Fatalf("neither %s nor %s", specCorePath, specTablesCopy)
		}
		t.Logf("no %s beside the checkout; the copy in testdata is used as is", specCorePath)
		return
	}
	defer src.Close()
	want, err := extractSpecTables(src)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(want, []byte("\n### ")) != len(specCoreGroups) {
		t.Fatalf("%s: expected the tables of %v", specCorePath, specCoreGroups)
	}
	if *updateGolden {
		if err := os.WriteFile(specTablesCopy, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(specTablesCopy)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the tables of %s: go test ./web -run TestSpecTablesCopyIsCurrent -update", specTablesCopy, specCorePath)
	}
}
