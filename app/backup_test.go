package app

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"xr/db"
)

func fndFill(t testing.TB, tt *Tenant, from, to int) {
	t.Helper()
	err := tt.Write(context.Background(), func(tx *sql.Tx) error {
		for i := from; i <= to; i++ {
			if _, err := tx.Exec(`INSERT INTO fnd_rows(id, v) VALUES (?, ?)`, i, "row"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A backup restores into the live tenant while readers keep reading: every
// read sees the old or the new content, never an error or a mix.
func TestRestoreTenantWhileReading(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	tt := fndTenant(t, a, "bk")
	fndExec(t, tt, `CREATE TABLE fnd_rows(id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	fndFill(t, tt, 1, 100)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "bk.db")
	if err := a.BackupTenant(ctx, tt, file); err != nil {
		t.Fatal(err)
	}
	// A second backup to the same path is refused, not overwritten.
	if err := a.BackupTenant(ctx, tt, file); err == nil {
		t.Fatal("backup overwrote an existing file")
	}
	fndFill(t, tt, 101, 250)
	fndExec(t, tt, `UPDATE settings SET value = '"ar"' WHERE key = 'default_language'`)

	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var n, max int
				err := tt.Read(ctx, func(tx *sql.Tx) error {
					if err := tx.QueryRow(`SELECT COUNT(*) FROM fnd_rows`).Scan(&n); err != nil {
						return err
					}
					return tx.QueryRow(`SELECT MAX(id) FROM fnd_rows`).Scan(&max)
				})
				if err != nil {
					errs <- err.Error()
					return
				}
				if !(n == 250 && max == 250) && !(n == 100 && max == 100) {
					errs <- "mixed read"
					return
				}
				reads.Add(1)
			}
		}()
	}
	fndEventually(t, 5*time.Second, "readers to start", func() bool { return reads.Load() > 10 })
	if err := a.RestoreTenant(ctx, tt, file, false); err != nil {
		t.Fatal(err)
	}
	before := reads.Load()
	fndEventually(t, 5*time.Second, "readers to go on after the restore", func() bool { return reads.Load() > before+10 })
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("reader: %s", e)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM fnd_rows`); n != 100 {
		t.Fatalf("restored rows: %d", n)
	}
	if v, err := rawSettingForTest(ctx, tt, "default_language"); err != nil || v != `"en"` {
		t.Fatal("settings not restored")
	}
	// The restored tenant is fully usable: writes, and the owner's password.
	fndFill(t, tt, 101, 101)
	var hash string
	if err := tt.DB.R.QueryRow(`SELECT password_hash FROM managers WHERE username = 'owner' AND status = 'active'`).Scan(&hash); err != nil || !VerifyPassword(hash, fndPassword) {
		t.Fatalf("the owner cannot sign in to the restored tenant: %v", err)
	}
	if v, _ := db.FileMeta(ctx, tt.DB.Path, "tenant_slug"); v != "bk" {
		t.Fatalf("slug marker %q", v)
	}
}

// Refusals change nothing in the live tenant.
func TestRestoreTenantRefusals(t *testing.T) {
	t.Parallel()
	a := fndApp(t)
	ctx := context.Background()
	tt := fndTenant(t, a, "one")
	other := fndTenant(t, a, "two")
	fndExec(t, tt, `CREATE TABLE fnd_rows(id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	fndFill(t, tt, 1, 5)
	fndExec(t, other, `CREATE TABLE fnd_rows(id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
	fndFill(t, other, 1, 42)
	dir := t.TempDir()

	otherFile := filepath.Join(dir, "two.db")
	if err := a.BackupTenant(ctx, other, otherFile); err != nil {
		t.Fatal(err)
	}
	ownFile := filepath.Join(dir, "one.db")
	if err := a.BackupTenant(ctx, tt, ownFile); err != nil {
		t.Fatal(err)
	}

	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 400)), 0o600)

	plain := filepath.Join(dir, "plain.db") // a healthy SQLite file that is not xr's
	c, _ := sql.Open("sqlite", plain)
	c.Exec(`CREATE TABLE t(x)`)
	c.Close()

	instance := filepath.Join(a.Cfg.DataDir, "instance.db") // an xr file, but not a tenant's

	newer := filepath.Join(dir, "newer.db")
	fndCopyFile(t, ownFile, newer)
	c, _ = sql.Open("sqlite", newer)
	if _, err := c.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'from_the_future.sql', '2099-01-01 00:00:00')`, db.LatestVersion("tenant")+1); err != nil {
		t.Fatal(err)
	}
	c.Close()

	truncated := filepath.Join(dir, "truncated.db")
	b, _ := os.ReadFile(ownFile)
	os.WriteFile(truncated, b[:len(b)/2], 0o600)

	header := filepath.Join(dir, "header.db")
	hb := append([]byte{}, b...)
	copy(hb[0:16], "garbage garbage!")
	os.WriteFile(header, hb, 0o600)

	cases := map[string]string{
		text:                          "invalid_backup_file",
		plain:                         "invalid_backup_file",
		instance:                      "invalid_backup_file",
		newer:                         "invalid_backup_file",
		truncated:                     "invalid_backup_file",
		header:                        "invalid_backup_file",
		filepath.Join(dir, "missing"): "invalid_backup_file",
		otherFile:                     "backup_of_other_tenant",
	}
	for file, reason := range cases {
		err := a.RestoreTenant(ctx, tt, file, false)
		e := fndErr(t, err, 400, CodeValidation, reason)
		if e.Field != "from" {
			t.Errorf("%s: field %q", filepath.Base(file), e.Field)
		}
		if n := fndCount(t, tt, `SELECT COUNT(*) FROM fnd_rows`); n != 5 {
			t.Fatalf("refused restore of %s changed the tenant: %d rows", filepath.Base(file), n)
		}
	}
	if e := AsError(a.RestoreTenant(ctx, tt, newer, false)); !strings.Contains(e.Details["cause"].(string), "newer") {
		t.Fatalf("cause of the newer schema refusal: %v", e.Details)
	}

	// With force, another tenant's backup is taken in and re-marked as ours.
	if err := a.RestoreTenant(ctx, tt, otherFile, true); err != nil {
		t.Fatal(err)
	}
	if n := fndCount(t, tt, `SELECT COUNT(*) FROM fnd_rows`); n != 42 {
		t.Fatalf("forced restore: %d rows", n)
	}
	if v, _ := db.FileMeta(ctx, tt.DB.Path, "tenant_slug"); v != "one" {
		t.Fatalf("slug marker after a forced restore: %q", v)
	}
	// The other tenant is untouched.
	if n := fndCount(t, other, `SELECT COUNT(*) FROM fnd_rows`); n != 42 {
		t.Fatalf("source tenant changed: %d", n)
	}
}

func fndCopyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
