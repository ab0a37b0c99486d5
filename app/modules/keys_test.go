package modules_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"xr/app"
	"xr/app/aaa"
	"xr/app/modules"
	"xr/db"
	"xr/internal/xrtest"
)

func keysOpen(t testing.TB, dir string, master []byte) (*app.App, error) {
	t.Helper()
	app.LowerPasswordCostForTests()
	a, err := app.Open(app.Config{DataDir: dir, Domain: "xr.test", MasterKey: master, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		a.Use(modules.All()...)
	}
	return a, err
}

func mustKeysOpen(t testing.TB, dir string, master []byte) *app.App {
	t.Helper()
	a, err := keysOpen(t, dir, master)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func keysNAS(t testing.TB, a *app.App, slug, ip, secret string) int64 {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	n, err := aaa.CreateNAS(context.Background(), xrtest.System(t, tt), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "n-" + ip},
		IP: app.Opt[string]{Set: true, V: ip}, Secret: app.Opt[string]{Set: true, V: secret}})
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

func keysSecret(t testing.TB, a *app.App, slug string, id int64) (string, error) {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := aaa.NASSecret(context.Background(), a, tt, id)
	return string(b), err
}

// TestMasterKeyWrapsInstanceKeys: with a master key the instance keys are
// stored wrapped; a copy of the data directory without the master key
// opens nothing and says why (naming the flag), a wrong key is refused,
// and no stored blob works as a sealing key.
func TestMasterKeyWrapsInstanceKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	master, err := app.ParseMasterKey([]byte(app.NewMasterKey()))
	if err != nil {
		t.Fatal(err)
	}
	a := mustKeysOpen(t, dir, master)
	xrtest.Tenant(t, a, "acme")
	id := keysNAS(t, a, "acme", "10.9.0.1", "nas-secret-one-long")
	a.Close()

	for name, blob := range xrtest.InstanceKeys(t, filepath.Join(dir, "instance.db")) {
		if !bytes.HasPrefix(blob, []byte(wrapPrefix)) || len(blob) == 32 {
			t.Fatalf("key %s stored plain (%d bytes)", name, len(blob))
		}
	}
	cp := t.TempDir()
	xrtest.CopyDir(t, dir, cp)
	_, err = keysOpen(t, cp, nil)
	if !errors.Is(err, app.ErrMasterKeyMissing) || !strings.Contains(err.Error(), "--master-key-file") || !strings.Contains(err.Error(), "XR_MASTER_KEY") {
		t.Fatalf("copy opened without the master key: %v", err)
	}
	if _, err := keysOpen(t, cp, bytes.Repeat([]byte{7}, 32)); !errors.Is(err, app.ErrMasterKeyWrong) {
		t.Fatalf("a wrong master key: %v", err)
	}
	// Nothing in the copy works as the sealing key of the NAS secret.
	d, err := sql.Open("sqlite", "file:"+db.TenantPath(cp, "acme")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var sealed []byte
	if err := d.QueryRow(`SELECT secret_sealed FROM nas WHERE id = ?`, id).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	d.Close()
	for name, blob := range xrtest.InstanceKeys(t, filepath.Join(cp, "instance.db")) {
		for _, k := range [][]byte{blob, blob[len(wrapPrefix):][:32], blob[len(blob)-32:]} {
			if _, err := app.OpenWithKeys([][]byte{k}, sealed); err == nil {
				t.Fatalf("the stored row %s opens a sealed secret without the master key", name)
			}
		}
	}
	// With the master key the copy is a working instance.
	b := mustKeysOpen(t, cp, master)
	defer b.Close()
	if s, err := keysSecret(t, b, "acme", id); err != nil || s != "nas-secret-one-long" {
		t.Fatalf("NAS secret with the master key: %q %v", s, err)
	}
	// The NAS secret is sealed twice: in the tenant and in the instance's
	// NAS directory.
	st, err := b.KeyStatus(context.Background())
	if err != nil || !st.Wrapped || !st.Opens || st.SealedCurrent != 2 || st.SealedPrevious != 0 {
		t.Fatalf("status: %+v %v", st, err)
	}
	if st, err := app.InspectKeys(context.Background(), cp, nil); err != nil || !st.Wrapped || st.Opens || !strings.Contains(st.Problem, "--master-key-file") {
		t.Fatalf("inspect without the key: %+v %v", st, err)
	}
}

// TestWrapExistingKeys: plain keys of an existing directory are wrapped in
// place (the keys, and so every sealed secret, stay the same), re-wrapped
// under a new master key and unwrapped again; a master key given for plain
// keys is refused.
func TestWrapExistingKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := mustKeysOpen(t, dir, nil)
	xrtest.Tenant(t, a, "acme")
	id := keysNAS(t, a, "acme", "10.9.0.2", "nas-secret-two-long")
	m1 := bytes.Repeat([]byte{1}, 32)
	m2 := bytes.Repeat([]byte{2}, 32)
	if n, err := a.WrapKeys(context.Background(), m1); err != nil || n != 2 {
		t.Fatalf("wrap: %d %v", n, err)
	}
	a.Close()
	if _, err := keysOpen(t, dir, nil); !errors.Is(err, app.ErrMasterKeyMissing) {
		t.Fatalf("after wrap, without the key: %v", err)
	}
	a = mustKeysOpen(t, dir, m1)
	if s, err := keysSecret(t, a, "acme", id); err != nil || s != "nas-secret-two-long" {
		t.Fatalf("after wrap: %q %v", s, err)
	}
	if _, err := a.WrapKeys(context.Background(), m2); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := keysOpen(t, dir, m1); !errors.Is(err, app.ErrMasterKeyWrong) {
		t.Fatalf("the old master key after re-wrap: %v", err)
	}
	a = mustKeysOpen(t, dir, m2)
	if _, err := a.WrapKeys(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := keysOpen(t, dir, m2); !errors.Is(err, app.ErrKeysNotWrapped) {
		t.Fatalf("a master key for plain keys: %v", err)
	}
	a = mustKeysOpen(t, dir, nil)
	defer a.Close()
	if s, err := keysSecret(t, a, "acme", id); err != nil || s != "nas-secret-two-long" {
		t.Fatalf("after unwrap: %q %v", s, err)
	}
}

// TestParseMasterKey: hex, base64 or 32 raw bytes; anything else refused.
func TestParseMasterKey(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{0xab}, 32)
	for _, in := range []string{strings.Repeat("ab", 32), app.NewMasterKey() + "\n"} {
		if k, err := app.ParseMasterKey([]byte(in)); err != nil || len(k) != 32 {
			t.Fatalf("%q: %v", in, err)
		}
	}
	if k, err := app.ParseMasterKey(raw); err != nil || !bytes.Equal(k, raw) {
		t.Fatalf("raw: %v", err)
	}
	for _, in := range []string{"", "short", strings.Repeat("ab", 31), "passphrase-of-any-length-is-not-a-key"} {
		if _, err := app.ParseMasterKey([]byte(in)); err == nil {
			t.Fatalf("%q accepted", in)
		}
	}
}

// TestSealedColumnsCoverMigrations: every column the migrations mark as
// sealed is declared by a module (so a rotation re-seals it), and every
// declared column exists.
func TestSealedColumnsCoverMigrations(t *testing.T) {
	t.Parallel()
	ms, err := db.Migrations("tenant")
	if err != nil {
		t.Fatal(err)
	}
	a := fndApp(t)
	sealed := a.Registry().SealedColumns()
	listed := map[string]bool{}
	for _, c := range sealed {
		listed[c.Column] = true
	}
	re := regexp.MustCompile(`(?m)^\s*(\w+)\s+BLOB[^\n]*(?:--\s*sealed)|(?m)^\s*(\w+_sealed)\s`)
	found := 0
	for _, m := range ms {
		for _, g := range re.FindAllStringSubmatch(m.SQL, -1) {
			col := g[1] + g[2]
			found++
			if !listed[col] {
				t.Errorf("%s: sealed column %s is declared by no module (Module.SealedColumns)", m.Name, col)
			}
		}
	}
	if found < 5 { // password_sealed, secret_sealed, token_sealed, totp_secret, totp_pending
		t.Fatalf("the pattern found %d sealed columns in the migrations", found)
	}
	tt := fndTenant(t, a, "acme")
	for _, c := range sealed {
		var n int
		if err := tt.DB.R.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, c.Table, c.Column).Scan(&n); err != nil || n != 1 {
			t.Errorf("%s.%s does not exist (%v)", c.Table, c.Column, err)
		}
	}
}

// TestInstanceSealedColumnsCoverMigrations: every sealed column of an
// instance migration is declared by a module (Module.InstanceSealedColumns),
// so a key rotation re-seals it.
func TestInstanceSealedColumnsCoverMigrations(t *testing.T) {
	t.Parallel()
	ms, err := db.Migrations("instance")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, c := range fndApp(t).Registry().InstanceSealedColumns() {
		listed[c.Table+"."+c.Column] = true
	}
	re := regexp.MustCompile(`(?m)^CREATE TABLE (\w+)\(|^\s*(\w+_sealed)\s`)
	found := 0
	for _, m := range ms {
		table := ""
		for _, g := range re.FindAllStringSubmatch(m.SQL, -1) {
			if g[1] != "" {
				table = g[1]
				continue
			}
			found++
			if !listed[table+"."+g[2]] {
				t.Errorf("%s: sealed column %s.%s is declared by no module (Module.InstanceSealedColumns)", m.Name, table, g[2])
			}
		}
	}
	if found < 5 { // backup destinations, the NAS directory, the RadSec CA and certificates
		t.Fatalf("the pattern found %d sealed columns in the instance migrations", found)
	}
}
