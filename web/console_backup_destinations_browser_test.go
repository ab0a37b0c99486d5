package web

// Browser test of the backup destination pages. Helpers carry the prefix cbd.

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func cbdScalar(t *testing.T, k *kit, q string, args ...any) int64 {
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
	k := newKit(t)
	k.App.Cfg.AllowPrivateEgress = true // the S3 server is on loopback
	ep := bdS3(t)
	b := newBrowser(t, k)
	b.ccgSignIn("owner")

	b.run("list", chromedp.Navigate(b.base+"/backup-destinations"), chromedp.WaitVisible("#destinations", chromedp.ByQuery))
	b.axe("backup destinations")
	b.ccgEnter("#new-destination", chromedp.WaitVisible("#f-endpoint", chromedp.ByQuery))
	b.axe("new backup destination")

	// A refused bucket name: shown beside its field, nothing stored, and
	// the secret typed is not sent back.
	b.run("fill s3", chromedp.SendKeys("#f-name", "cloud", chromedp.ByQuery),
		chromedp.SendKeys("#f-endpoint", ep, chromedp.ByQuery),
		chromedp.SendKeys("#f-bucket", "Bad_Bucket", chromedp.ByQuery),
		chromedp.SendKeys("#f-region", "us-east-1", chromedp.ByQuery),
		chromedp.Click("#f-use_tls", chromedp.ByQuery), chromedp.Click("#f-path_style", chromedp.ByQuery),
		chromedp.SendKeys("#f-access_key", "AKIDVISIBLE", chromedp.ByQuery),
		chromedp.SendKeys("#f-secret_key", bdSecretKey, chromedp.ByQuery))
	b.ccgEnter("#save", chromedp.WaitVisible("#e-bucket", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations`); n != 0 {
		t.Fatalf("a refused destination was stored: %d", n)
	}
	if strings.Contains(b.ccgHTML(), bdSecretKey) {
		t.Fatal("the refused form echoes the secret key")
	}
	b.axe("refused backup destination")
	b.run("fix", ccgType("#f-bucket", "xr-backups"), chromedp.SendKeys("#f-access_key", "AKIDVISIBLE", chromedp.ByQuery),
		chromedp.SendKeys("#f-secret_key", bdSecretKey, chromedp.ByQuery))
	b.ccgEnter("#save", chromedp.WaitVisible(`#destinations tr[data-name="cloud"]`, chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'cloud' AND kind = 's3'
		AND json_extract(config, '$.use_tls') = 0 AND json_extract(config, '$.path_style') = 1 AND secrets_sealed IS NOT NULL`); n != 1 {
		t.Fatal("the destination is not stored as entered")
	}

	// Test: the probe goes through.
	b.run("no flash", ccgNoFlash)
	b.ccgEnter("#test-cloud", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if got := b.text(".flash.ok"); !strings.Contains(got, "test passed") {
		t.Fatalf("test flash %q", got)
	}
	b.shot("backup-destinations")

	// A local directory that disappears: the test names the failed step.
	dir := t.TempDir()
	b.run("new local", chromedp.Navigate(b.base+"/backup-destinations/new?kind=local"), chromedp.WaitVisible("#f-path", chromedp.ByQuery),
		chromedp.SendKeys("#f-name", "usb", chromedp.ByQuery), chromedp.SendKeys("#f-path", dir, chromedp.ByQuery))
	b.axe("new local destination")
	b.ccgEnter("#save", chromedp.WaitVisible(`#destinations tr[data-name="usb"]`, chromedp.ByQuery))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	b.run("no flash", ccgNoFlash)
	b.ccgEnter("#test-usb", chromedp.WaitVisible(".flash.bad", chromedp.ByQuery))
	if got := b.text(".flash.bad"); !strings.Contains(got, "storage") || !strings.Contains(got, "does not exist") {
		t.Fatalf("failed test flash %q", got)
	}
	b.axe("failed destination test")

	// Edit: the secrets are not shown and, left blank, kept.
	var id int64
	if err := k.App.Inst.R.QueryRow(`SELECT id FROM backup_destinations WHERE name = 'cloud'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	b.run("edit", chromedp.Navigate(fmt.Sprintf("%s/backup-destinations/%d/edit", b.base, id)), chromedp.WaitVisible("#f-bucket", chromedp.ByQuery))
	if h := b.ccgHTML(); strings.Contains(h, bdSecretKey) || strings.Contains(h, "AKIDVISIBLE") {
		t.Fatal("the edit form shows a credential")
	}
	b.axe("edit backup destination")
	b.run("change", ccgType("#f-prefix", "nightly"), ccgNoFlash)
	b.ccgEnter("#save", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE id = ? AND json_extract(config, '$.prefix') = 'nightly'`, id); n != 1 {
		t.Fatal("edit not stored")
	}
	b.run("no flash", ccgNoFlash)
	b.ccgEnter("#test-cloud", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery)) // the secrets were kept

	// Encryption passphrase: too short, then set.
	b.run("short", chromedp.SendKeys("#f-passphrase", "short", chromedp.ByQuery))
	b.ccgEnter("#set-passphrase", chromedp.WaitVisible("#e-passphrase", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_encryption`); n != 0 {
		t.Fatal("a refused passphrase was stored")
	}
	b.axe("refused passphrase")
	b.run("good", chromedp.SendKeys("#f-passphrase", "a long and careful passphrase", chromedp.ByQuery))
	b.ccgEnter("#set-passphrase", chromedp.WaitVisible(`#encryption-state[data-encrypted="true"]`, chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_encryption`); n != 1 {
		t.Fatal("passphrase not stored")
	}

	// Delete asks first: refused, the row stays; accepted, it goes.
	b.run("refuse", chromedp.Evaluate(`window.confirm = () => false`, nil), chromedp.Click("#delete-usb", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'usb'`); n != 1 {
		t.Fatal("deleted without confirmation")
	}
	b.run("accept", ccgAccept, ccgNoFlash)
	b.ccgEnter("#delete-usb", chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := cbdScalar(t, k, `SELECT COUNT(*) FROM backup_destinations WHERE name = 'usb'`); n != 0 {
		t.Fatal("not deleted")
	}
	if h := b.ccgHTML(); strings.Contains(h, bdSecretKey) || strings.Contains(h, "AKIDVISIBLE") || strings.Contains(h, "careful passphrase") {
		t.Fatal("the list shows a credential")
	}
	b.noDialog("backup destinations")
}
