package web_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"xr/web"
)

// TestOpenAPIReasonsTable documents, in one go, the reasons a test run
// received: run the suite with XR_CONTRACT_RECORD=FILE (mismatches are
// written to FILE instead of failing), then
//
//	XR_CONTRACT_RECORD=FILE go test ./web -run TestOpenAPIReasonsTable -update
//
// merges every 4xx reason FILE saw on a built row into
// web/openapi_reasons_table.go (5xx answers stay under "default").
func TestOpenAPIReasonsTable(t *testing.T) {
	t.Parallel()
	file := os.Getenv("XR_CONTRACT_RECORD")
	if !*updateGolden || file == "" {
		t.Skip("only with -update and XR_CONTRACT_RECORD")
	}
	byKey := map[string]*web.Route{}
	for _, r := range (&web.Server{}).Table() {
		byKey[r.M+" "+r.FullPath()] = r
	}
	table := map[string]map[string]bool{}
	for k, rs := range web.OpReasons {
		table[k] = map[string]bool{}
		for _, x := range rs {
			table[k][x] = true
		}
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) < 2 {
			continue
		}
		r := byKey[parts[0]]
		st, reason, _ := strings.Cut(parts[1], " ")
		if r == nil || r.H == nil || reason == "" || st[0] != '4' {
			continue
		}
		kind := false
		for _, k := range r.KindReasons() {
			kind = kind || k == parts[1]
		}
		if kind {
			continue
		}
		if table[parts[0]] == nil {
			table[parts[0]] = map[string]bool{}
		}
		table[parts[0]][parts[1]] = true
	}
	var b bytes.Buffer
	src, err := os.ReadFile(filepath.Join("openapi_reasons_table.go"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := bytes.Cut(src, []byte("var opReasons = map[string][]string{"))
	b.Write(head)
	b.WriteString("var opReasons = map[string][]string{\n")
	for _, k := range slices.Sorted(maps.Keys(table)) {
		var rs []string
		for x := range table[k] {
			rs = append(rs, fmt.Sprintf("%q", x))
		}
		sort.Strings(rs)
		fmt.Fprintf(&b, "\t%q: {%s},\n", k, strings.Join(rs, ", "))
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("openapi_reasons_table.go", out, 0o644); err != nil {
		t.Fatal(err)
	}
}
