package xrtest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"xr/app"
)

// A seeded instance is built once per test binary and copied per test:
// opening an instance and creating a tenant runs every migration of both
// files and hashes the owner's password (argon2id), which cost a web test
// more than its own requests did. The first test to ask builds the data
// directory with the same calls a test would make (Open, CreateTenant),
// closes it (SQLite checkpoints the WAL into the file on the last close)
// and keeps its files in memory; each test writes them into its own temp
// dir and opens that. Everything a test then does happens on its own copy.

// seed is one template: the files of a closed data directory by relative
// path, built once.
type seed struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// seeds are the templates of this test binary, one per set of modules and
// tenant slug (what a module installs may shape the tenant it provisions).
var seeds sync.Map // key string -> *seed

// Seeded is Open with tenant slug present (owner "owner" <owner@slug.test>
// with Password): a DataDir that holds no instance yet (or an empty one: a
// temp dir) gets a copy of the seeded files; one that does is opened as it
// is, and the tenant created when missing. An instance with a MasterKey or
// another Domain is built afresh. The caller closes it.
func Seeded(t testing.TB, cfg app.Config, slug string, mods ...app.Module) *app.App {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	_, err := os.Stat(filepath.Join(cfg.DataDir, "instance.db"))
	if errors.Is(err, fs.ErrNotExist) && cfg.MasterKey == nil && (cfg.Domain == "" || cfg.Domain == "xr.test") {
		copySeed(t, cfg.DataDir, slug, mods)
	}
	a := Open(t, cfg, mods...)
	if _, ok := a.TenantBySlug(slug); !ok {
		Tenant(t, a, slug)
	}
	return a
}

// TenantApp is Seeded in a temp dir, closed when the test ends.
func TenantApp(t testing.TB, slug string, mods ...app.Module) *app.App {
	t.Helper()
	a := Seeded(t, app.Config{}, slug, mods...)
	t.Cleanup(a.Close)
	return a
}

// copySeed writes the seeded files of (slug, mods) into dir, building them
// on first use.
func copySeed(t testing.TB, dir, slug string, mods []app.Module) {
	t.Helper()
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.Name
	}
	v, _ := seeds.LoadOrStore(slug+"|"+strings.Join(names, ","), &seed{})
	s := v.(*seed)
	s.once.Do(func() { s.files, s.err = buildSeed(slug, mods) })
	if s.err != nil {
		t.Fatalf("seed an instance with tenant %s: %v", slug, s.err)
	}
	for rel, b := range s.files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// buildSeed makes a data directory with tenant slug, closes it and reads
// its files back.
func buildSeed(slug string, mods []app.Module) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "xr-seed-")
	if err != nil {
		return nil, err
	}
	// A temporary folder left behind costs disk, not correctness.
	defer func() { _ = os.RemoveAll(dir) }()
	if err := seedDir(dir, slug, mods); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[rel], err = os.ReadFile(p)
		return err
	})
	return files, err
}

// seedDir opens an instance on dir, creates the tenant (as Open and
// Tenant would) and closes it.
func seedDir(dir, slug string, mods []app.Module) error {
	a, err := open(app.Config{DataDir: dir}, mods)
	if err != nil {
		return err
	}
	_, _, err = a.CreateTenant(context.Background(), withOwner(app.NewTenant{Slug: slug}))
	a.Close()
	return err
}
