package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// permConstName is the constant a catalogue code must have: "prm_" dropped,
// the rest CamelCased, "Perm" in front (prm_nas_devices_remote →
// PermNasDevicesRemote).
func permConstName(code string) string {
	var b strings.Builder
	b.WriteString("Perm")
	for _, w := range strings.Split(strings.TrimPrefix(code, "prm_"), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// permConsts reads perms.go: the Perm constants (name → code) and the
// expression of each row's code in the Permissions literal.
func permConsts(t *testing.T) (consts map[string]string, rowCodes []ast.Expr) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "perms.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	consts = map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			switch s := spec.(type) {
			case *ast.ValueSpec:
				if g.Tok == token.CONST {
					if id, ok := s.Type.(*ast.Ident); !ok || id.Name != "Perm" || len(s.Names) != 1 || len(s.Values) != 1 {
						t.Errorf("const %v: want one `PermX Perm = \"prm_x\"` per line", s.Names)
						continue
					}
					lit, ok := s.Values[0].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("const %s: value is not a string literal", s.Names[0].Name)
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					consts[s.Names[0].Name] = v
				}
				if g.Tok == token.VAR && len(s.Names) == 1 && s.Names[0].Name == "Permissions" && len(s.Values) == 1 {
					cl, ok := s.Values[0].(*ast.CompositeLit)
					if !ok {
						t.Fatal("Permissions is not a composite literal")
					}
					for _, el := range cl.Elts {
						row, ok := el.(*ast.CompositeLit)
						if !ok || len(row.Elts) == 0 {
							t.Fatalf("Permissions row %T is not {Code, Area}", el)
						}
						rowCodes = append(rowCodes, row.Elts[0])
					}
				}
			}
		}
	}
	return consts, rowCodes
}

// Every catalogue code has its constant, every constant is in the
// catalogue, constants are named from their code, and the catalogue is
// written with the constants (so the two cannot drift).
func TestPermConstantsMatchCatalogue(t *testing.T) {
	t.Parallel()
	consts, rowCodes := permConsts(t)
	if len(consts) == 0 || len(rowCodes) != len(Permissions) {
		t.Fatalf("parsed %d constants and %d catalogue rows, catalogue has %d", len(consts), len(rowCodes), len(Permissions))
	}
	byCode := map[string]string{}
	for name, code := range consts {
		if want := permConstName(code); name != want {
			t.Errorf("constant %s = %q: want the name %s", name, code, want)
		}
		if other, dup := byCode[code]; dup {
			t.Errorf("%q has two constants, %s and %s", code, other, name)
		}
		byCode[code] = name
		if !KnownPermission(code) {
			t.Errorf("constant %s = %q is not in Permissions", name, code)
		}
	}
	inCatalogue := map[Perm]bool{}
	for i, p := range Permissions {
		if inCatalogue[p.Code] {
			t.Errorf("Permissions lists %q twice", p.Code)
		}
		inCatalogue[p.Code] = true
		if !strings.HasPrefix(string(p.Code), "prm_") || p.Area == "" {
			t.Errorf("Permissions row %q (area %q) misnamed", p.Code, p.Area)
		}
		name, ok := byCode[string(p.Code)]
		if !ok {
			t.Errorf("catalogue code %q has no constant (want %s)", p.Code, permConstName(string(p.Code)))
			continue
		}
		if id, ok := rowCodes[i].(*ast.Ident); !ok || id.Name != name {
			t.Errorf("Permissions row %q: write its code as %s", p.Code, name)
		}
	}
	if len(inCatalogue) != len(consts) {
		t.Errorf("%d constants, %d catalogue codes", len(consts), len(inCatalogue))
	}
	// The boundary conversions agree with the catalogue.
	if all := AllPerms(); len(all) != len(Permissions) || len(AllPermissionCodes()) != len(all) {
		t.Errorf("AllPerms %d, AllPermissionCodes %d, catalogue %d", len(all), len(AllPermissionCodes()), len(Permissions))
	}
	if KnownPermission("prm_users_indx") || !KnownPermission(string(PermUsersIndex)) {
		t.Error("KnownPermission does not follow the catalogue")
	}
}

// Outside the catalogue, non-test Go code names permissions only by their
// constants: no string literal starting with "prm_" (a misspelt code would
// compile and never match).
func TestNoBarePermissionLiterals(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above app/: %v", err)
	}
	catalogue := filepath.Join(root, "app", "perms.go")
	fset := token.NewFileSet()
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || path == catalogue {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(v, "prm_") {
				t.Errorf("%s: string literal %s: use the app.Perm constant", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked only %d Go files under %s", files, root)
	}
}
