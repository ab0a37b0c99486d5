package modules_test

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

// walkGo parses every non-test Go file under the module root (testdata and
// hidden directories left out) and calls fn with it.
func walkGo(t *testing.T, fn func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above app/modules/: %v", err)
	}
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		fn(path, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("walked only %d Go files under %s", files, root)
	}
}

// isPermType tells whether a const spec's type is Perm (the kernel) or
// app.Perm (an area).
func isPermType(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "Perm"
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "app" && x.Sel.Name == "Perm"
	}
	return false
}

// permDecl is a Perm constant as declared.
type permDecl struct{ name, code, at string }

// permConsts reads every Perm constant of the tree and the arguments of
// every PermGroup call (the catalogue rows of the modules); foreign are
// the unexported ones: another area's code named again where its home
// package cannot be imported (a cycle).
func permConsts(t *testing.T) (consts, foreign []permDecl, groupArgs []ast.Expr, fset *token.FileSet) {
	t.Helper()
	walkGo(t, func(path string, fs *token.FileSet, f *ast.File) {
		fset = fs
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GenDecl:
				if x.Tok != token.CONST {
					return true
				}
				for _, spec := range x.Specs {
					s := spec.(*ast.ValueSpec)
					if s.Type == nil || !isPermType(s.Type) {
						continue
					}
					if len(s.Names) == 1 && len(s.Values) == 1 && !s.Names[0].IsExported() {
						if lit, ok := s.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							code, _ := strconv.Unquote(lit.Value)
							foreign = append(foreign, permDecl{s.Names[0].Name, code, fs.Position(s.Pos()).String()})
						}
						continue
					}
					if len(s.Names) != 1 || len(s.Values) != 1 {
						t.Errorf("%s: const %v: want one `PermX app.Perm = \"prm_x\"` per line", fs.Position(s.Pos()), s.Names)
						continue
					}
					lit, ok := s.Values[0].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: const %s: value is not a string literal", fs.Position(s.Pos()), s.Names[0].Name)
						continue
					}
					code, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					consts = append(consts, permDecl{s.Names[0].Name, code, fs.Position(s.Pos()).String()})
				}
			case *ast.CallExpr:
				fun := x.Fun
				if sel, ok := fun.(*ast.SelectorExpr); ok {
					fun = sel.Sel
				}
				if id, ok := fun.(*ast.Ident); ok && id.Name == "PermGroup" && len(x.Args) > 0 {
					groupArgs = append(groupArgs, x.Args[1:]...)
				}
			}
			return true
		})
	})
	return consts, foreign, groupArgs, fset
}

// Outside the constants' declarations, non-test Go code names permissions
// only by their constants: no string literal starting with "prm_" (a
// misspelt code would compile and never match).
func TestNoBarePermissionLiterals(t *testing.T) {
	t.Parallel()
	walkGo(t, func(path string, fset *token.FileSet, f *ast.File) {
		declared := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if s, ok := n.(*ast.ValueSpec); ok && s.Type != nil && isPermType(s.Type) {
				for _, v := range s.Values {
					if lit, ok := v.(*ast.BasicLit); ok {
						declared[lit] = true
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || declared[lit] {
				return true
			}
			if v, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(v, "prm_") && v != "prm_" {
				t.Errorf("%s: string literal %s: use the Perm constant", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	})
}
