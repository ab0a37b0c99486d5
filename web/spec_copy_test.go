package web_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"xr/internal/webtest"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata")

// TestSpecCopyIsCurrent: the copy of the spec's endpoint list that the
// route tests read is the spec's own, whenever shared/spec is beside the
// checkout (developers' machines and CI); a lone clone runs on the copy.
func TestSpecCopyIsCurrent(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "..", "shared", "spec", "endpoints.tsv")
	want, err := os.ReadFile(src)
	if err != nil {
		t.Logf("no %s beside the checkout; the copy in testdata is used as is", src)
		return
	}
	got, err := os.ReadFile(filepath.Join("testdata", "endpoints.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("web/testdata/endpoints.tsv differs from %s: copy it again", src)
	}
}

// TestOpenAPIRoutesUnchanged compares the operations of /openapi.json
// (method, path, implemented, permissions) with a committed copy, so a
// refactoring that changes the surface is seen. After a deliberate change:
// go test ./web -run TestOpenAPIRoutesUnchanged -update
func TestOpenAPIRoutesUnchanged(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	r := k.Do("GET", "", "/openapi.json", "", nil)
	if r.Status != 200 {
		t.Fatalf("openapi: %d", r.Status)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Implemented bool     `json:"x-implemented"`
			Perms       []string `json:"x-permissions"`
			Access      string   `json:"x-access"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for p, ops := range doc.Paths {
		for m, op := range ops {
			impl := "501"
			if op.Implemented {
				impl = "built"
			}
			perms := append([]string(nil), op.Perms...)
			sort.Strings(perms)
			lines = append(lines, strings.ToUpper(m)+" "+p+"\t"+impl+"\t"+op.Access+"\t"+strings.Join(perms, ","))
		}
	}
	sort.Strings(lines)
	got := []byte(strings.Join(lines, "\n") + "\n")
	golden := filepath.Join("testdata", "openapi_routes.golden")
	if *updateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		gs, ws := map[string]bool{}, map[string]bool{}
		for _, l := range gl {
			gs[l] = true
		}
		for _, l := range wl {
			ws[l] = true
		}
		var diff []string
		for _, l := range wl {
			if !gs[l] {
				diff = append(diff, "- "+l)
			}
		}
		for _, l := range gl {
			if !ws[l] {
				diff = append(diff, "+ "+l)
			}
		}
		t.Fatalf("the API surface changed (run with -update if deliberate):\n%s", strings.Join(diff, "\n"))
	}
}
