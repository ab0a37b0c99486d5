package console_test

// Browser test of the operator tools pages (announcements, bulk changes).
// Helpers carry the prefix ctl.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/subs"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

func ctlUser(t *testing.T, k *webtest.Kit, name, email string) int64 {
	t.Helper()
	c, err := subs.Create(context.Background(), k.System("acme"), subs.CreateInput{Username: name, Password: "pw-" + name, Email: email})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// TestConsoleToolsInBrowser: an announcement is composed on the page, its
// recipients counted, an unknown variable refused beside the body with
// nothing stored, then sent and followed to done; a bulk change is
// previewed (matched count and before/after sample) and applied, and its
// log shows each row done with what the preview showed, as stored.
func TestConsoleToolsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, nil, nil)
	webtest.DeliverWebhooks(t, k)
	u1 := ctlUser(t, k, "tina", "tina@example.test")
	u2 := ctlUser(t, k, "tom", "")
	ctlUser(t, k, "tara", "tara@example.test")
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("announcements", chromedp.Navigate(b.Base+"/tools/announcements"), chromedp.WaitVisible("#announce-form", chromedp.ByQuery),
		ccgType("#f-title", "Maintenance tonight"), ccgType("#f-body", "Dear {username}, {speed}"),
		chromedp.Click("#f-ch-email", chromedp.ByQuery))
	b.Run("count", chromedp.Click("#count", chromedp.ByQuery), chromedp.WaitVisible("#reach", chromedp.ByQuery))
	if got := b.Text("#reach-total"); got != "3" {
		t.Fatalf("recipients %q", got)
	}
	if got := b.Text(`#reach li[data-channel="email"]`); !strings.HasSuffix(got, "2") {
		t.Fatalf("email reach %q", got)
	}
	b.Axe("announcements")
	b.Run("unknown variable", chromedp.Click("#send", chromedp.ByQuery), chromedp.WaitVisible("#e-body", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM announcements`); n != 0 {
		t.Fatal("a refused announcement was stored")
	}
	b.Axe("refused announcement")
	b.Run("send", ccgType("#f-body", "Dear {username}, expect a short outage."), chromedp.Click("#send", chromedp.ByQuery),
		chromedp.WaitVisible("#announcement", chromedp.ByQuery))
	id := ccgScalar(t, k, `SELECT id FROM announcements`)
	xrtest.Eventually(t, "announcement fanned out", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM announcements WHERE state = 'done'`) == 1
	})
	b.Run("reload", chromedp.Navigate(fmt.Sprintf("%s/tools/announcements/%d", b.Base, id)), chromedp.WaitVisible("#announcement", chromedp.ByQuery))
	if got := b.Text("#a-processed"); got != "3" {
		t.Fatalf("processed %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM outbox_messages WHERE cause = ?`, fmt.Sprintf("announcement:%d", id)); n != 5 {
		t.Fatalf("%d messages, want 3 inbox + 2 email", n)
	}
	b.Axe("announcement")
	b.Shot("announcement")

	// Bulk change: preview, then apply (a future expiration, so both count from it).
	xrtest.Exec(t, k.Acquire("acme"), `UPDATE users SET expiration = '2099-01-01 00:00:00'`)
	b.Run("bulk", chromedp.Navigate(b.Base+"/tools/bulk"), chromedp.WaitVisible("#bulk-form", chromedp.ByQuery),
		ccgType("#f-ids", fmt.Sprintf("%d, %d", u1, u2)), ccgType("#f-op-days", "5"),
		chromedp.Click("#preview", chromedp.ByQuery), chromedp.WaitVisible("#bulk-preview", chromedp.ByQuery))
	if got := b.Text("#preview-matched"); got != "2" {
		t.Fatalf("matched %q", got)
	}
	previewed := b.Text(fmt.Sprintf(`#preview-sample tr[data-user="%d"] td:nth-child(3)`, u1))
	b.Axe("bulk preview")
	b.Run("apply", ccgAccept, chromedp.Click("#apply", chromedp.ByQuery), chromedp.WaitVisible("#bulk-job", chromedp.ByQuery))
	bid := ccgScalar(t, k, `SELECT id FROM bulk_changes`)
	xrtest.Eventually(t, "bulk change applied", func() bool {
		return ccgScalar(t, k, `SELECT COUNT(*) FROM bulk_changes WHERE state = 'done' AND ok = 2`) == 1
	})
	b.Run("reload bulk", chromedp.Navigate(fmt.Sprintf("%s/tools/bulk/%d", b.Base, bid)), chromedp.WaitVisible("#bulk-log", chromedp.ByQuery))
	if got := b.Text(fmt.Sprintf(`#bulk-log tr[data-user="%d"] td:nth-child(4)`, u1)); got != previewed {
		t.Fatalf("applied %q, previewed %q", got, previewed)
	}
	st, err := subs.ReadRowState(context.Background(), k.Acquire("acme").DB.R, u1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(previewed, app.FormatTime(st.Expiration.Time)) {
		t.Fatalf("stored expiration %v, previewed %q", st.Expiration, previewed)
	}
	b.Axe("bulk job")
	b.Shot("bulk-job")
}
