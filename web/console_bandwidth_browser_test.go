package web

// Browser test of the bandwidth control and dashboard pages. Helpers
// carry the prefix cbw.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleBandwidthInBrowser: a rate change for a plan is applied from
// the page (a refused rate first, beside its field, storing nothing); the
// online session's MikroTik NAS gets the CoA, the change is listed as in
// force with its ACK in the history, and revert ends it. A weekly window
// is saved and an overlapping one refused with its reason.
func TestConsoleBandwidthInBrowser(t *testing.T) {
	t.Parallel()
	k := newBWKit(t)
	k.createUser("alice")
	k.online(k.mtNAS, "alice", "a1")
	b := newBrowser(t, k.kit)
	b.ccgSignIn("owner")

	b.run("overview", chromedp.Navigate(b.base+"/tools/bandwidth"), chromedp.WaitVisible("#plan-rates", chromedp.ByQuery))
	b.axe("bandwidth control")
	b.shot("bandwidth")
	b.ccgEnter("#apply-link", chromedp.WaitVisible("#f-down", chromedp.ByQuery))
	b.axe("apply a rate")
	plan := fmt.Sprint(k.plan)
	b.run("refused rate", chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery), chromedp.SetValue("#f-down", "0", chromedp.ByQuery),
		chromedp.SetValue("#f-up", "4096", chromedp.ByQuery), chromedp.Evaluate(`document.querySelector("#f-down").removeAttribute("min")`, nil),
		chromedp.Submit("#f-down", chromedp.ByQuery), chromedp.WaitVisible("#e-down", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM bandwidth_rules`); n != 0 {
		t.Fatalf("a refused change was stored: %d", n)
	}
	b.axe("refused rate")
	b.run("apply", ccgType("#f-down", "20480"), ccgType("#f-name", "storm"), chromedp.Submit("#f-down", chromedp.ByQuery),
		chromedp.WaitVisible("#in-force tr[data-rule]", chromedp.ByQuery))
	if got := b.text(".flash"); !strings.Contains(got, "1") {
		t.Fatalf("flash %q", got)
	}
	if got := b.text("#history"); !strings.Contains(got, "alice") || !strings.Contains(got, "ACK") {
		t.Fatalf("history %q", got)
	}
	if got := b.text("#plan-rates"); !strings.Contains(got, "20480 / 4096") {
		t.Fatalf("plan rates %q", got)
	}
	if reqs := k.mt.requests(); len(reqs) != 1 || vendorValues(reqs[0], 14988, 8)[0] != "4096k/20480k" {
		t.Fatalf("the NAS got %d CoA", len(reqs))
	}
	id := ccgScalar(t, k.kit, `SELECT id FROM bandwidth_rules WHERE name = 'storm' AND target_kind = 'plan' AND rate_down_kbps = 20480 AND reverted_at IS NULL`)
	b.run("revert", ccgAccept, ccgNoFlash, chromedp.Click(fmt.Sprintf("#revert-%d", id), chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE id = ? AND reverted_at IS NOT NULL`, id); n != 1 {
		t.Fatal("not reverted")
	}
	if got := b.text("#in-force"); strings.Contains(got, "storm") {
		t.Fatalf("still in force: %q", got)
	}

	// Weekly windows.
	b.run("window form", chromedp.Navigate(b.base+"/tools/bandwidth/schedules/new"), chromedp.WaitVisible("#f-start", chromedp.ByQuery))
	b.axe("new bandwidth window")
	b.run("window", chromedp.SetValue("#f-name", "night", chromedp.ByQuery), chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery),
		chromedp.SetValue("#f-down", "51200", chromedp.ByQuery), chromedp.SetValue("#f-up", "10240", chromedp.ByQuery),
		chromedp.Click("#wd-mon", chromedp.ByQuery), chromedp.SetValue("#f-start", "22:00", chromedp.ByQuery), chromedp.SetValue("#f-end", "06:00", chromedp.ByQuery),
		chromedp.Submit("#f-name", chromedp.ByQuery), chromedp.WaitVisible("#windows tr[data-window]", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE kind = 'window' AND weekdays = 2 AND start_minute = 1320 AND end_minute = 360`); n != 1 {
		t.Fatal("window not stored")
	}
	b.run("overlap", chromedp.Navigate(b.base+"/tools/bandwidth/schedules/new"), chromedp.WaitVisible("#f-start", chromedp.ByQuery),
		chromedp.SetValue("#f-target-ids", plan, chromedp.ByQuery), chromedp.SetValue("#f-down", "1024", chromedp.ByQuery), chromedp.SetValue("#f-up", "512", chromedp.ByQuery),
		chromedp.Click("#wd-mon", chromedp.ByQuery), chromedp.SetValue("#f-start", "23:00", chromedp.ByQuery), chromedp.SetValue("#f-end", "23:30", chromedp.ByQuery),
		chromedp.Submit("#f-start", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.text(".flash"); !strings.Contains(got, "overlaps") {
		t.Fatalf("overlap message %q", got)
	}
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM bandwidth_rules WHERE kind = 'window'`); n != 1 {
		t.Fatalf("windows stored %d", n)
	}
	b.axe("refused window")
}

// TestConsoleDashboardsInBrowser: the home page and "My dashboard" show
// the caller's tiles with values; the layout is customized from checkboxes
// and reset, the appearance stored; the manager page restores the shipped
// dashboards and creates one (a missing name refused beside its field).
func TestConsoleDashboardsInBrowser(t *testing.T) {
	t.Parallel()
	k := newBWKit(t)
	k.createUser("alice")
	k.online(k.mtNAS, "alice", "a1")
	b := newBrowser(t, k.kit)
	b.ccgSignIn("owner")

	b.run("home", chromedp.Navigate(b.base+"/"), chromedp.WaitVisible(`#my-tiles [data-tile="online_now"]`, chromedp.ByQuery))
	if got := b.text(`#my-tiles [data-tile="online_now"] .n`); got != "1" {
		t.Fatalf("online tile %q", got)
	}
	b.run("mine", chromedp.Navigate(b.base+"/dashboards/me"), chromedp.WaitVisible("#customize-form", chromedp.ByQuery))
	b.axe("my dashboard")
	b.shot("my_dashboard")
	if got := b.text(`#my-tiles [data-tile="subscribers_active"] .n`); got != "1" {
		t.Fatalf("active tile %q", got)
	}
	b.run("customize", chromedp.Click("#m-nas_total", chromedp.ByQuery), chromedp.Click("#m-new_today", chromedp.ByQuery),
		chromedp.Click("#save-layout", chromedp.ByQuery), chromedp.WaitVisible("#customized", chromedp.ByQuery))
	if got := b.text(`#my-tiles [data-tile="nas_total"] .n`); got != "3" {
		t.Fatalf("nas tile %q", got)
	}
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE tiles LIKE '%nas_total%' AND tiles NOT LIKE '%new_today%'`); n != 1 {
		t.Fatal("layout not stored")
	}
	b.run("reset", ccgAccept, chromedp.Click("#reset-layout", chromedp.ByQuery), chromedp.WaitNotPresent("#customized", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE tiles IS NULL`); n != 1 {
		t.Fatal("layout not reset")
	}
	b.run("appearance", chromedp.SetValue("#f-theme", "dark", chromedp.ByQuery), chromedp.SetValue("#f-density", "compact", chromedp.ByQuery),
		ccgNoFlash, chromedp.Click("#save-appearance", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboard_prefs WHERE theme = 'dark' AND density = 'compact'`); n != 1 {
		t.Fatal("appearance not stored")
	}

	// A series and a top tile: 30 bars and a ranked list, readable.
	owner := k.Owner("acme")
	if r := k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", owner, map[string]any{"tiles": []map[string]any{
		{"metric": "revenue_today", "type": "series"}, {"metric": "subscribers_total", "type": "top"}}}); r.Status != 200 {
		t.Fatalf("customize: %s", r.Body)
	}
	b.run("series", chromedp.Navigate(b.base+"/dashboards/me"), chromedp.WaitVisible(`[data-tile="revenue_today"][data-type="series"] svg`, chromedp.ByQuery))
	var bars int
	b.run("bars", chromedp.Evaluate(`document.querySelectorAll('[data-tile="revenue_today"][data-type="series"] svg rect').length`, &bars))
	if bars != 30 {
		t.Fatalf("series bars %d, want 30", bars)
	}
	if got := b.text(`[data-tile="subscribers_total"][data-type="top"] ol`); !strings.Contains(got, "1") {
		t.Fatalf("top tile %q", got)
	}
	b.axe("series and top tiles")

	b.run("manager", chromedp.Navigate(b.base+"/tools/dashboards"), chromedp.WaitVisible("#dashboards", chromedp.ByQuery))
	b.axe("dashboard manager")
	b.run("no name", chromedp.Click("#m-online_now", chromedp.ByQuery), chromedp.Click("#create-dashboard", chromedp.ByQuery), chromedp.WaitVisible("#e-name", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboards`); n != 3 {
		t.Fatalf("dashboards %d", n)
	}
	b.axe("refused dashboard")
	b.run("create", chromedp.SetValue("#f-name", "Ops", chromedp.ByQuery), chromedp.SetValue("#f-roles", "reseller", chromedp.ByQuery),
		chromedp.Click("#create-dashboard", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboards WHERE name = 'Ops' AND roles = '["reseller"]' AND tiles LIKE '%online_now%'`); n != 1 {
		t.Fatal("dashboard not stored")
	}
	dashExec(t, k.kit, `UPDATE dashboards SET name = 'Changed' WHERE builtin = 'overview'`)
	b.run("restore", ccgAccept, ccgNoFlash, chromedp.Click("#restore-defaults", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k.kit, `SELECT COUNT(*) FROM dashboards WHERE builtin = 'overview' AND name = 'Overview'`); n != 1 {
		t.Fatal("not restored")
	}
}
