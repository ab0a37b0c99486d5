package console_test

// Browser test of the bandwidth control and dashboard pages. Helpers
// carry the prefix cbw.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleBandwidthInBrowser: a rate change for a plan is applied from
// the page (a refused rate first, beside its field, storing nothing); the
// online session's MikroTik NAS gets the CoA, the change is listed as in
// force with its ACK in the history, and revert ends it. A weekly window
// is saved and an overlapping one refused with its reason.
func TestConsoleBandwidthInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	k.CreateUser("alice")
	k.Online(k.MTNAS, "alice", "a1")
	b := browsertest.New(t, k.Kit)
	b.SignIn("owner")

	b.Run("overview", chromedp.Navigate(b.Base+"/tools/bandwidth"), chromedp.WaitVisible("#plan-rates", chromedp.ByQuery))
	b.Axe("bandwidth control")
	b.Shot("bandwidth")
	ccgEnter(b, "#apply-link", chromedp.WaitVisible("#f-down", chromedp.ByQuery))
	b.Axe("apply a rate")
	plan := fmt.Sprint(k.Plan)
	b.Run("refused rate", chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery), chromedp.SetValue("#f-down", "0", chromedp.ByQuery),
		chromedp.SetValue("#f-up", "4096", chromedp.ByQuery), chromedp.Evaluate(`document.querySelector("#f-down").removeAttribute("min")`, nil),
		chromedp.Submit("#f-down", chromedp.ByQuery), chromedp.WaitVisible("#e-down", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM bandwidth_rules`); n != 0 {
		t.Fatalf("a refused change was stored: %d", n)
	}
	b.Axe("refused rate")
	b.Run("apply", ccgType("#f-down", "20480"), ccgType("#f-name", "storm"), chromedp.Submit("#f-down", chromedp.ByQuery),
		chromedp.WaitVisible("#in-force tr[data-rule]", chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "1") {
		t.Fatalf("flash %q", got)
	}
	if got := b.Text("#history"); !strings.Contains(got, "alice") || !strings.Contains(got, "ACK") {
		t.Fatalf("history %q", got)
	}
	if got := b.Text("#plan-rates"); !strings.Contains(got, "20.48 Mbit/s / 4.096 Mbit/s") {
		t.Fatalf("plan rates %q", got)
	}
	if reqs := k.MT.Requests(); len(reqs) != 1 || webtest.VendorValues(reqs[0], 14988, 8)[0] != "4096k/20480k" {
		t.Fatalf("the NAS got %d CoA", len(reqs))
	}
	id := ccgScalar(t, k.Kit, `SELECT id FROM bandwidth_rules WHERE name = 'storm' AND target_kind = 'plan' AND rate_down_kbps = 20480 AND reverted_at IS NULL`)
	b.Run("revert", ccgAccept, ccgNoFlash, chromedp.Click(fmt.Sprintf("#revert-%d", id), chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE id = ? AND reverted_at IS NOT NULL`, id); n != 1 {
		t.Fatal("not reverted")
	}
	if got := b.Text("#in-force"); strings.Contains(got, "storm") {
		t.Fatalf("still in force: %q", got)
	}

	// Weekly windows.
	b.Run("window form", chromedp.Navigate(b.Base+"/tools/bandwidth/schedules/new"), chromedp.WaitVisible("#f-start", chromedp.ByQuery))
	b.Axe("new bandwidth window")
	b.Run("window", chromedp.SetValue("#f-name", "night", chromedp.ByQuery), chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery),
		chromedp.SetValue("#f-down", "51200", chromedp.ByQuery), chromedp.SetValue("#f-up", "10240", chromedp.ByQuery),
		chromedp.Click("#wd-mon", chromedp.ByQuery), chromedp.SetValue("#f-start", "22:00", chromedp.ByQuery), chromedp.SetValue("#f-end", "06:00", chromedp.ByQuery),
		chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#windows tr[data-window]", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE kind = 'window' AND weekdays = 2 AND start_minute = 1320 AND end_minute = 360`); n != 1 {
		t.Fatal("window not stored")
	}
	b.Run("overlap", chromedp.Navigate(b.Base+"/tools/bandwidth/schedules/new"), chromedp.WaitVisible("#f-start", chromedp.ByQuery),
		chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery), chromedp.SetValue("#f-down", "1024", chromedp.ByQuery), chromedp.SetValue("#f-up", "512", chromedp.ByQuery),
		chromedp.Click("#wd-mon", chromedp.ByQuery), chromedp.SetValue("#f-start", "23:00", chromedp.ByQuery), chromedp.SetValue("#f-end", "23:30", chromedp.ByQuery),
		chromedp.Submit("#f-start", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "overlaps") {
		t.Fatalf("overlap message %q", got)
	}
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE kind = 'window'`); n != 1 {
		t.Fatalf("windows stored %d", n)
	}
	b.Axe("refused window")
}

// TestConsoleDashboardsInBrowser: the home page and "My dashboard" show
// the caller's tiles with values; the layout is customized from checkboxes
// and reset, the appearance stored; the manager page restores the shipped
// dashboards and creates one (a missing name refused beside its field).
func TestConsoleDashboardsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	k.CreateUser("alice")
	k.Online(k.MTNAS, "alice", "a1")
	b := browsertest.New(t, k.Kit)
	b.SignIn("owner")

	b.Run("home", chromedp.Navigate(b.Base+"/"), chromedp.WaitVisible(`#my-tiles [data-tile="online_now"]`, chromedp.ByQuery))
	if got := b.Text(`#my-tiles [data-tile="online_now"] .n`); got != "1" {
		t.Fatalf("online tile %q", got)
	}
	b.Run("mine", chromedp.Navigate(b.Base+"/dashboards/me"), chromedp.WaitVisible("#customize-form", chromedp.ByQuery))
	b.Axe("my dashboard")
	b.Shot("my_dashboard")
	if got := b.Text(`#my-tiles [data-tile="subscribers_active"] .n`); got != "1" {
		t.Fatalf("active tile %q", got)
	}
	b.Run("customize", chromedp.Click("#m-nas_total", chromedp.ByQuery), chromedp.Click("#m-new_today", chromedp.ByQuery),
		chromedp.Click("#save-layout", chromedp.ByQuery), chromedp.WaitVisible("#customized", chromedp.ByQuery))
	if got := b.Text(`#my-tiles [data-tile="nas_total"] .n`); got != "3" {
		t.Fatalf("nas tile %q", got)
	}
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE tiles LIKE '%nas_total%' AND tiles NOT LIKE '%new_today%'`); n != 1 {
		t.Fatal("layout not stored")
	}
	b.Run("reset", ccgAccept, chromedp.Click("#reset-layout", chromedp.ByQuery), chromedp.WaitNotPresent("#customized", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE tiles IS NULL`); n != 1 {
		t.Fatal("layout not reset")
	}
	b.Run("appearance", chromedp.SetValue("#f-theme", "dark", chromedp.ByQuery), chromedp.SetValue("#f-density", "compact", chromedp.ByQuery),
		ccgNoFlash, chromedp.Click("#save-appearance", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE theme = 'dark' AND density = 'compact'`); n != 1 {
		t.Fatal("appearance not stored")
	}

	// A series and a top tile: 30 bars and a ranked list, readable.
	owner := k.Owner("acme")
	if r := k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", owner, map[string]any{"tiles": []map[string]any{
		{"metric": "revenue_today", "type": "series"}, {"metric": "subscribers_total", "type": "top"}}}); r.Status != 200 {
		t.Fatalf("customize: %s", r.Body)
	}
	b.Run("series", chromedp.Navigate(b.Base+"/dashboards/me"), chromedp.WaitVisible(`[data-tile="revenue_today"][data-type="series"] svg`, chromedp.ByQuery))
	var bars int
	b.Run("bars", chromedp.Evaluate(`document.querySelectorAll('[data-tile="revenue_today"][data-type="series"] svg rect').length`, &bars))
	if bars != 30 {
		t.Fatalf("series bars %d, want 30", bars)
	}
	if got := b.Text(`[data-tile="subscribers_total"][data-type="top"] ol`); !strings.Contains(got, "1") {
		t.Fatalf("top tile %q", got)
	}
	b.Axe("series and top tiles")

	b.Run("manager", chromedp.Navigate(b.Base+"/tools/dashboards"), chromedp.WaitVisible("#dashboards", chromedp.ByQuery))
	b.Axe("dashboard manager")
	b.Run("no name", chromedp.Click("#m-online_now", chromedp.ByQuery), chromedp.Click("#create-dashboard", chromedp.ByQuery), chromedp.WaitVisible("#e-name", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboards`); n != 3 {
		t.Fatalf("dashboards %d", n)
	}
	b.Axe("refused dashboard")
	b.Run("create", chromedp.SetValue("#f-name", "Ops", chromedp.ByQuery), chromedp.SetValue("#f-roles", "reseller", chromedp.ByQuery),
		chromedp.Click("#create-dashboard", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboards WHERE name = 'Ops' AND roles = '["reseller"]' AND tiles LIKE '%online_now%'`); n != 1 {
		t.Fatal("dashboard not stored")
	}
	webtest.Exec(t, k.Kit, `UPDATE dashboards SET name = 'Changed' WHERE builtin = 'overview'`)
	b.Run("restore", ccgAccept, ccgNoFlash, chromedp.Click("#restore-defaults", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.Kit, `SELECT COUNT(*) FROM dashboards WHERE builtin = 'overview' AND name = 'Overview'`); n != 1 {
		t.Fatal("not restored")
	}
}
