package console_test

// Browser test of the backup pages and the factory reset. Helpers carry
// the prefix cbk.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/backups"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

func cbkInst(t *testing.T, k *webtest.Kit, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := k.App.Inst.R.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestConsoleBackupsInBrowser: "Back up now" shows the job's progress and
// the verified backup in the list; its download goes through a single-use
// ticket; a corrupted upload is refused beside the field with nothing
// stored, the downloaded file is accepted; the schedule form refuses a
// weekly schedule without weekdays and stores a good one; a restore (after
// its confirmation) brings the data back; the factory reset shows what
// goes and what stays, refuses a wrong password and keeps the owner.
func TestConsoleBackupsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{BackupDirs: []string{t.TempDir()}}, nil, nil)
	ctx := webtest.RunJobsBackground(t, k.App)
	dest, err := backups.CreateDestination(ctx, k.System("acme"), backups.DestinationInput{Name: "usb", Kind: "local",
		Config: map[string]any{"path": filepath.Join(k.App.Cfg.BackupDirs[0], "acme")}})
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	yes := chromedp.Evaluate(`window.confirm = () => true`, nil)

	b.Run("backups", chromedp.Navigate(b.Base+"/backups"), chromedp.WaitVisible("#backups", chromedp.ByQuery))
	b.Axe("backups, empty")
	b.Run("back up now", chromedp.Click("#backup-now-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`#job-progress[data-job-state="done"] #job-next`, chromedp.ByQuery))
	b.Axe("backup progress")
	b.Run("to the list", chromedp.Click("#job-next", chromedp.ByQuery), chromedp.WaitVisible(`tr[data-kind="manual"]`, chromedp.ByQuery))
	if v := b.Text(`tr[data-kind="manual"] .verification`); !strings.Contains(v, "Verified") {
		t.Fatalf("verification shown %q", v)
	}
	id := cbkInst(t, k, `SELECT id FROM backups WHERE kind = 'manual' AND verification = 'ok'`)
	b.Axe("backups, one")
	b.Shot("backups")

	// Download: the button mints a ticket and the browser follows it.
	dir := t.TempDir()
	b.Run("downloads", cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(dir).WithBrowserContextID(b.Context))
	b.Run("download", chromedp.Click(fmt.Sprintf("#download-%d", id), chromedp.ByQuery))
	var file string
	want := cbkInst(t, k, `SELECT size FROM backups WHERE id = ?`, id)
	xrtest.Eventually(t, "the downloaded file", func() bool {
		// Complete: Chromium writes a .crdownload first, and the named file
		// may exist short for a moment under load.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".crdownload") {
				return false
			}
		}
		for _, e := range ents {
			if info, err := e.Info(); err == nil && strings.HasSuffix(e.Name(), ".xrbak.zst") && info.Size() == want {
				file = filepath.Join(dir, e.Name())
				return true
			}
		}
		return false
	})
	if n := cbkInst(t, k, `SELECT COUNT(*) FROM backup_tickets WHERE backup_id = ? AND used_at IS NOT NULL`, id); n != 1 {
		t.Fatalf("%d used tickets", n)
	}

	// Upload: a corrupted file is refused beside the field.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.xrbak.zst")
	broken := append([]byte{}, raw...)
	broken[len(broken)/2] ^= 0xff
	if err := os.WriteFile(bad, broken, 0o600); err != nil {
		t.Fatal(err)
	}
	// The form's navigation that became the download may still be closing
	// in the tab: a navigation now can come back net::ERR_ABORTED, which
	// says nothing of the page. Once more then.
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	err = chromedp.Run(ctx, chromedp.Navigate(b.Base+"/backups"))
	cancel()
	if err != nil {
		if !strings.Contains(err.Error(), "ERR_ABORTED") {
			t.Fatalf("backups again: %v", err)
		}
		t.Logf("navigation after the download: %v; again", err)
		b.Run("backups again", chromedp.Navigate(b.Base+"/backups"))
	}
	b.Run("backups again", chromedp.WaitVisible("#backup-upload", chromedp.ByQuery))
	b.Run("bad upload", chromedp.SetUploadFiles("#f-file", []string{bad}, chromedp.ByQuery), chromedp.Click("#upload-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-file", chromedp.ByQuery))
	if e := b.Text("#e-file"); !strings.Contains(e, "not a usable") {
		t.Fatalf("upload error %q", e)
	}
	if n := cbkInst(t, k, `SELECT COUNT(*) FROM backups`); n != 1 {
		t.Fatalf("a refused upload was stored: %d", n)
	}
	b.Axe("refused upload")
	b.Run("good upload", chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery), chromedp.Click("#upload-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`tr[data-kind="uploaded"]`, chromedp.ByQuery))

	// Schedule.
	b.Run("weekly without days", chromedp.Click("#f-enabled", chromedp.ByQuery), chromedp.SetValue("#f-frequency", "weekly", chromedp.ByQuery),
		chromedp.Click("#schedule-save", chromedp.ByQuery), chromedp.WaitVisible("#e-weekdays", chromedp.ByQuery))
	b.Axe("refused schedule")
	b.Run("weekly on monday", chromedp.Click("#wd-mon", chromedp.ByQuery), chromedp.Click(fmt.Sprintf("#dest-%d", dest.ID), chromedp.ByQuery), chromedp.SetValue("#f-time", "02:30", chromedp.ByQuery),
		chromedp.Click("#schedule-save", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if s := b.Text("#schedule-state"); !strings.Contains(s, "Next run") {
		var html string
		b.Run("html", chromedp.OuterHTML("#backup-schedule", &html, chromedp.ByQuery))
		t.Fatalf("schedule state %q\n%s", s, html)
	}
	ten := k.Acquire("acme")
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM schedules WHERE key = 'backup' AND frequency = 'weekly' AND minute_of_day = 150 AND enabled = 1
		AND json_extract(payload, '$.destination_ids[0]') = ?`, dest.ID); n != 1 {
		t.Fatal("schedule not stored")
	}

	// Restore, after the confirmation.
	xrtest.Exec(t, ten, `UPDATE managers SET firstname = 'later' WHERE parent_id IS NULL`)
	b.Run("restore", yes, chromedp.Click(fmt.Sprintf("#restore-%d", id), chromedp.ByQuery), chromedp.WaitVisible(`tr[data-kind="safety"]`, chromedp.ByQuery))
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM managers WHERE firstname = 'later'`); n != 0 {
		t.Fatal("the restore did not bring the data back")
	}
	b.NoDialog("restore")

	// Factory reset.
	webtest.CreateManager(k, "acme", 0, "clerk", "cashier")
	b.Run("reset page", chromedp.Navigate(b.Base+"/factory-reset"), chromedp.WaitVisible("#reset-form", chromedp.ByQuery))
	if kept := b.Text("#reset-kept"); !strings.Contains(kept, "owner") {
		t.Fatalf("kept %q", kept)
	}
	if n := cwhCount(b, `#reset-deleted tr[data-kind="managers"]`); n != 1 {
		t.Fatal("the preview does not list the managers")
	}
	// Words, never table names.
	deleted := b.Text("#reset-deleted")
	if !strings.Contains(deleted, "Managers and roles other than yours") {
		t.Fatalf("the preview's staff row: %q", deleted)
	}
	for _, table := range []string{"managers", "manager_tree", "auth_sessions", "profiles"} {
		if strings.Contains(deleted, table) {
			t.Fatalf("the preview shows the table name %s: %q", table, deleted)
		}
	}
	b.Axe("factory reset")
	b.Run("wrong password", yes, chromedp.SendKeys("#f-password", "not-my-password", chromedp.ByQuery), chromedp.Click("#reset-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-password", chromedp.ByQuery))
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM managers`); n != 2 {
		t.Fatalf("a refused reset deleted managers: %d left", n)
	}
	b.Axe("factory reset refused")
	b.Run("reset", yes, chromedp.SendKeys("#f-password", webtest.Password, chromedp.ByQuery), chromedp.Click("#reset-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#backups", chromedp.ByQuery))
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM managers`); n != 1 {
		t.Fatalf("%d managers after the reset", n)
	}
	if n := cbkInst(t, k, `SELECT COUNT(*) FROM backups WHERE kind = 'safety'`); n != 2 {
		t.Fatalf("%d safety backups", n)
	}
}
