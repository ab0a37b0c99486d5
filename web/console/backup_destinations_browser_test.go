package console_test

// Browser test of the backup destination pages. Helpers carry the prefix cbd.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

func cbdScalar(t *testing.T, k *webtest.Kit, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := k.App.Inst.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestConsoleBackupDestinationsInBrowser: an S3 destination is added from
// the form of its kind against an in-process S3 server (a refused bucket
// name shown beside its field first), tested (probe written, read back and
// deleted), edited with its secret kept; a local directory that is gone
// fails its test naming the step; the encryption passphrase is refused
// when short, then set; delete asks first and a refusal keeps the row.
// The page never shows a credential.
func TestConsoleBackupDestinationsInBrowser(t *testing.T) {
	t.Parallel()
	backupDirs := t.TempDir() // the operator's folder (xr serve --backup-dirs)
	// The S3 server is on loopback.
	k := webtest.NewWith(t, app.Config{AllowPrivateEgress: true, BackupDirs: []string{backupDirs}}, nil, nil)
	ep := webtest.FakeS3(t)
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("list", chromedp.Navigate(b.Base+"/backup-destinations"), chromedp.WaitVisible("#destinations", chromedp.ByQuery))
	b.Axe("backup destinations")
	ccgEnter(b, "#new-destination", chromedp.WaitVisible("#f-endpoint", chromedp.ByQuery))
	b.Axe("new backup destination")

	// A refused bucket name: shown beside its field, nothing stored, and
	// the secret typed is not sent back.
	b.Run("fill s3", chromedp.SendKeys("#f-name", "cloud", chromedp.ByQuery),
		chromedp.SendKeys("#f-endpoint", ep, chromedp.ByQuery),
		chromedp.SendKeys("#f-bucket", "Bad_Bucket", chromedp.ByQuery),
		chromedp.SendKeys("#f-region", "us-east-1", chromedp.ByQuery),
		chromedp.Click("#f-use_tls", chromedp.ByQuery), chromedp.Click("#f-path_style", chromedp.ByQuery),
		chromedp.SendKeys("#f-access_key", "AKIDVISIBLE", chromedp.ByQuery),
		chromedp.SendKeys("#f-secret_key", webtest.S3SecretKey, chromedp.ByQuery))
	ccgEnter(b, "#save", chromedp.WaitVisible("#e-bucket", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations`); n != 0 {
		t.Fatalf("a refused destination was stored: %d", n)
	}
	if strings.Contains(ccgHTML(b), webtest.S3SecretKey) {
		t.Fatal("the refused form echoes the secret key")
	}
	b.Axe("refused backup destination")
	b.Run("fix", ccgType("#f-bucket", "xr-backups"), chromedp.SendKeys("#f-access_key", "AKIDVISIBLE", chromedp.ByQuery),
		chromedp.SendKeys("#f-secret_key", webtest.S3SecretKey, chromedp.ByQuery))
	ccgEnter(b, "#save", chromedp.WaitVisible(`#destinations tr[data-name="cloud"]`, chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'cloud' AND kind = 's3'
		AND json_extract(config, '$.use_tls') = 0 AND json_extract(config, '$.path_style') = 1 AND secrets_sealed IS NOT NULL`); n != 1 {
		t.Fatal("the destination is not stored as entered")
	}

	// Test: the probe goes through.
	b.Run("no flash", ccgNoFlash)
	ccgEnter(b, "#test-cloud", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.Text(".flash.ok"); !strings.Contains(got, "test passed") {
		t.Fatalf("test flash %q", got)
	}
	b.Shot("backup-destinations")

	// A local directory (in the tenant's folder of the operator's) that
	// disappears: the test names the failed step.
	dir := filepath.Join(backupDirs, "acme", "usb")
	b.Run("new local", chromedp.Navigate(b.Base+"/backup-destinations/new?kind=local"), chromedp.WaitVisible("#f-path", chromedp.ByQuery),
		chromedp.SendKeys("#f-name", "usb", chromedp.ByQuery), chromedp.SendKeys("#f-path", dir, chromedp.ByQuery))
	b.Axe("new local destination")
	ccgEnter(b, "#save", chromedp.WaitVisible(`#destinations tr[data-name="usb"]`, chromedp.ByQuery))
	if err := os.RemoveAll(backupDirs); err != nil {
		t.Fatal(err)
	}
	b.Run("no flash", ccgNoFlash)
	ccgEnter(b, "#test-usb", chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	if got := b.Text(".flash.bad"); !strings.Contains(got, "storage") || !strings.Contains(got, "does not exist") {
		t.Fatalf("failed test flash %q", got)
	}
	b.Axe("failed destination test")

	// Edit: the secrets are not shown and, left blank, kept.
	var id int64
	if err := k.App.Inst.R.QueryRow(`SELECT id FROM backup_destinations WHERE name = 'cloud'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	b.Run("edit", chromedp.Navigate(fmt.Sprintf("%s/backup-destinations/%d/edit", b.Base, id)), chromedp.WaitVisible("#f-bucket", chromedp.ByQuery))
	if h := ccgHTML(b); strings.Contains(h, webtest.S3SecretKey) || strings.Contains(h, "AKIDVISIBLE") {
		t.Fatal("the edit form shows a credential")
	}
	b.Axe("edit backup destination")
	b.Run("change", ccgType("#f-prefix", "nightly"), ccgNoFlash)
	ccgEnter(b, "#save", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE id = ? AND json_extract(config, '$.prefix') = 'nightly'`, id); n != 1 {
		t.Fatal("edit not stored")
	}
	b.Run("no flash", ccgNoFlash)
	ccgEnter(b, "#test-cloud", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery)) // the secrets were kept

	// Encryption passphrase: too short, then set.
	b.Run("short", chromedp.SendKeys("#f-passphrase", "short", chromedp.ByQuery))
	ccgEnter(b, "#set-passphrase", chromedp.WaitVisible("#e-passphrase", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_encryption`); n != 0 {
		t.Fatal("a refused passphrase was stored")
	}
	b.Axe("refused passphrase")
	b.Run("good", chromedp.SendKeys("#f-passphrase", "a long and careful passphrase", chromedp.ByQuery))
	ccgEnter(b, "#set-passphrase", chromedp.WaitVisible(`#encryption-state[data-encrypted="true"]`, chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_encryption`); n != 1 {
		t.Fatal("passphrase not stored")
	}

	// Delete asks first: refused, the row stays; accepted, it goes.
	b.Run("refuse", chromedp.Evaluate(`window.confirm = () => false`, nil), chromedp.Click("#delete-usb", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'usb'`); n != 1 {
		t.Fatal("deleted without confirmation")
	}
	b.Run("accept", ccgAccept, ccgNoFlash)
	ccgEnter(b, "#delete-usb", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'usb'`); n != 0 {
		t.Fatal("not deleted")
	}
	if h := ccgHTML(b); strings.Contains(h, webtest.S3SecretKey) || strings.Contains(h, "AKIDVISIBLE") || strings.Contains(h, "careful passphrase") {
		t.Fatal("the list shows a credential")
	}
	b.NoDialog("backup destinations")
}
