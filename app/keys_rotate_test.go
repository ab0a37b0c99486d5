package app

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// Key rotation over the sealed columns modules declare, on the kernel
// alone: a test module declares one (kt_secrets.secret, a table each test
// tenant gets). That every real sealed column is declared is checked with
// every area installed (app/modules, TestSealedColumnsCoverMigrations).

var ktModule = Module{Name: "keys-test", SealedColumns: []SealedColumn{{Table: "kt_secrets", Column: "secret"}}}

// ktOpenApp opens the kernel with the test module on dir.
func ktOpenApp(t testing.TB, dir string, master []byte) *App {
	t.Helper()
	a, err := Open(Config{DataDir: dir, Domain: "xr.test", MasterKey: master, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	a.Use(ktModule)
	return a
}

// ktSecret creates slug's kt_secrets table when missing and stores
// secret sealed in it; it returns the row's id.
func ktSecret(t testing.TB, a *App, slug, _ string, secret string) int64 {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var id int64
	err = tt.Write(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE IF NOT EXISTS kt_secrets(id INTEGER PRIMARY KEY, secret BLOB)`); err != nil {
			return err
		}
		return tx.QueryRow(`INSERT INTO kt_secrets(secret) VALUES (?) RETURNING id`, a.Keys.Seal([]byte(secret))).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// ktOpen reads and opens the secret id of slug.
func ktOpen(t testing.TB, a *App, slug string, id int64) (string, error) {
	t.Helper()
	tt, release, err := a.Acquire(slug)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	var sealed []byte
	if err := tt.DB.R.QueryRow(`SELECT secret FROM kt_secrets WHERE id = ?`, id).Scan(&sealed); err != nil {
		return "", err
	}
	b, err := a.Keys.Open(sealed)
	return string(b), err
}

// TestRotateKeysWhileAServerRuns: a second process rotates the sealing key
// while a "server" on the same directory keeps working: the server picks up
// the new key through the registry generation, every sealed value ends
// under the new key, the retired key is gone, and both processes read
// every secret throughout.
func TestRotateKeysWhileAServerRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	master := bytes.Repeat([]byte{9}, 32)
	srv := ktOpenApp(t, dir, master)
	defer srv.Close()
	fndCreate(t, srv, "acme")
	fndCreate(t, srv, "beta")
	ids := map[string]int64{"acme": ktSecret(t, srv, "acme", "10.9.1.1", "acme-secret-x"), "beta": ktSecret(t, srv, "beta", "10.9.1.2", "beta-secret-x")}
	oldEnc, _ := srv.Keys.sealing()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.WatchRegistry(ctx, 20*time.Millisecond)

	cli := ktOpenApp(t, dir, master)
	defer cli.Close()
	rep, err := cli.RotateKeys(context.Background(), RotateOptions{Settle: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Tenants != 2 || rep.Resealed < 2 || rep.Unreadable != 0 || rep.PreviousKept {
		t.Fatalf("report %+v", rep)
	}
	newEnc, prev := cli.Keys.sealing()
	if bytes.Equal(newEnc, oldEnc) || len(prev) != 0 {
		t.Fatal("the rotating process kept the old key")
	}
	fndEventually(t, 20*time.Second, "the running server switched keys", func() bool {
		k, p := srv.Keys.sealing()
		return bytes.Equal(k, newEnc) && len(p) == 0
	})
	for slug, id := range ids {
		for _, a := range []*App{srv, cli} {
			if s, err := ktOpen(t, a, slug, id); err != nil || s != slug+"-secret-x" {
				t.Fatalf("%s secret after rotation: %q %v", slug, s, err)
			}
		}
	}
	st, err := cli.KeyStatus(context.Background())
	if err != nil || st.SealedPrevious != 0 || st.SealedUnusable != 0 || st.SealedCurrent != rep.Resealed || st.PreviousKeys != 0 || !st.Wrapped {
		t.Fatalf("status after rotation %+v %v (report %+v)", st, err, rep)
	}
	for name, blob := range ktKeyRows(t, filepath.Join(dir, "instance.db")) {
		if !isWrapped(blob) {
			t.Fatalf("rotation stored %s plain", name)
		}
	}
	// What the server seals now, the other process opens: one key.
	if p, err := cli.Keys.Open(srv.Keys.Seal([]byte("x"))); err != nil || string(p) != "x" {
		t.Fatal("server and CLI disagree on the key")
	}
	if _, err := openWith(oldEnc, srv.Keys.Seal([]byte("x")), nil); err == nil {
		t.Fatal("the server still seals under the old key")
	}
}

// TestRotateResumesAfterInterruption: a rotation cut off after installing
// its key (retired key kept, values under it) loses nothing: the next
// rotation re-seals values under either older key.
func TestRotateResumesAfterInterruption(t *testing.T) {
	t.Parallel()
	a := ktApp(t)
	fndCreate(t, a, "acme")
	id := ktSecret(t, a, "acme", "10.9.2.1", "acme-secret-y")
	// A rotation cut off right after installing its key.
	if _, _, err := a.installSealingKey(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, err := a.KeyStatus(context.Background())
	if err != nil || st.PreviousKeys != 1 || st.SealedPrevious != 1 {
		t.Fatalf("after the interruption: %+v %v", st, err)
	}
	if s, err := ktOpen(t, a, "acme", id); err != nil || s != "acme-secret-y" {
		t.Fatalf("mid-rotation: %q %v", s, err)
	}
	rep, err := a.RotateKeys(context.Background(), RotateOptions{Settle: -1})
	if err != nil || rep.Resealed != 1 || rep.PreviousKept {
		t.Fatalf("second rotation %+v %v", rep, err)
	}
	if st, _ := a.KeyStatus(context.Background()); st.PreviousKeys != 0 || st.SealedCurrent != 1 {
		t.Fatalf("after the second rotation %+v", st)
	}
	if s, err := ktOpen(t, a, "acme", id); err != nil || s != "acme-secret-y" {
		t.Fatalf("after: %q %v", s, err)
	}
}

func ktApp(t testing.TB) *App {
	t.Helper()
	a := ktOpenApp(t, t.TempDir(), nil)
	t.Cleanup(a.Close)
	return a
}

// ktKeyRows reads instance_keys of an instance file.
func ktKeyRows(t testing.TB, path string) map[string][]byte {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows, err := d.Query(`SELECT name, key FROM instance_keys`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var n string
		var k []byte
		if err := rows.Scan(&n, &k); err != nil {
			t.Fatal(err)
		}
		out[n] = k
	}
	return out
}
