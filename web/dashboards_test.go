package web_test

import (
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
)

func dashUser(t *testing.T, k *webtest.Kit, name string, parent int64, enabled bool, exp time.Time) int64 {
	t.Helper()
	webtest.Exec(t, k, `INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, lookup_token, created_at, updated_at) VALUES (?, x'00', ?, ?, ?, ?, ?, ?)`,
		name, parent, enabled, app.FormatTime(exp), app.RandomToken(10), app.StampNow(), app.StampNow())
	var id int64
	k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM users WHERE username = ?`, name).Scan(&id)
	return id
}

func TestDashboardValuesScoped(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	res := webtest.CreateManager(k, "acme", 0, "res1", "reseller")
	resTok := k.Login("acme", "res1", webtest.Password)
	now := time.Now()
	mine := dashUser(t, k, "mine", res, true, now.Add(3*24*time.Hour)) // active, expiring within 7 days
	dashUser(t, k, "mine-off", res, false, now.Add(90*24*time.Hour))
	theirs := dashUser(t, k, "theirs", 1, true, now.Add(-time.Hour)) // expired
	webtest.Exec(t, k, `INSERT INTO user_ledger(user_id, kind, amount, balance_after, created_at) VALUES (?, 'deposit', 5000, 5000, ?), (?, 'charge', -2000, 3000, ?), (?, 'deposit', 7000, 7000, ?)`,
		mine, app.StampNow(), mine, app.StampNow(), theirs, app.StampNow())
	webtest.Exec(t, k, `INSERT INTO radius_sessions(user_id, nas_id, acct_session_id, username, start_time) VALUES (?, 1, 's1', 'mine', ?), (?, 1, 's2', 'theirs', ?)`,
		mine, app.StampNow(), theirs, app.StampNow())

	values := func(tok string) map[string]any {
		t.Helper()
		r := k.Do("GET", "acme", "/api/v1/admin/dashboards/me/values", tok, nil)
		if r.Status != 200 {
			t.Fatalf("values: %d %s", r.Status, r.Body)
		}
		return r.Data()["values"].(map[string]any)
	}
	rv := values(resTok)
	if rv["subscribers_total"] != 2.0 || rv["subscribers_active"] != 1.0 || rv["subscribers_disabled"] != 1.0 || rv["subscribers_expired"] != 0.0 ||
		rv["online_now"] != 1.0 || rv["expiring_7d"] != 1.0 || rv["new_today"] != 2.0 || rv["revenue_today"] != 2.0 {
		t.Fatalf("reseller values: %v", rv)
	}
	ov := values(owner)
	if ov["subscribers_total"] != 3.0 || ov["subscribers_expired"] != 1.0 || ov["online_now"] != 2.0 || ov["revenue_today"] != 2.0 {
		t.Fatalf("owner values: %v", ov)
	}
	// The finance tiles: deposits come from the daily rollup, per subtree.
	fin := map[string]any{"tiles": []map[string]any{{"metric": "deposits_today"}, {"metric": "subscribers_total", "type": "gauge"}}}
	r := k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", resTok, fin)
	if r.Status != 200 || r.Data()["customized"] != true {
		t.Fatalf("customize: %s", r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/admin/dashboards/me/values", resTok, nil)
	tiles := r.Data()["tiles"].([]any)
	if len(tiles) != 2 || tiles[0].(map[string]any)["value"] != 5.0 || tiles[0].(map[string]any)["type"] != "kpi" || tiles[1].(map[string]any)["value"] != 2.0 {
		t.Fatalf("customized values: %s", r.Body)
	}
	k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", owner, fin)
	if v := k.Do("GET", "acme", "/api/v1/admin/dashboards/me/values", owner, nil).Data()["tiles"].([]any)[0].(map[string]any)["value"]; v != 12.0 {
		t.Fatalf("owner deposits %v", v)
	}
}

func TestDashboardsManagerAndMine(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	webtest.CreateManager(k, "acme", 0, "res1", "reseller")
	resTok := k.Login("acme", "res1", webtest.Password)
	// 403 before validation for the manager rows.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/dashboards", resTok, map[string]any{"name": ""}), 403, app.CodeForbidden, "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/dashboards/restore-defaults", resTok, nil), 403, app.CodeForbidden, "insufficient_permissions")

	l := k.Do("GET", "acme", "/api/v1/admin/tools/dashboards", owner, nil)
	if l.Status != 200 || len(l.List()) != 3 {
		t.Fatalf("defaults: %s", l.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/dashboards", owner, map[string]any{"name": ""}), 400, app.CodeValidation, "name_required")
	bad := k.Do("POST", "acme", "/api/v1/admin/tools/dashboards", owner, map[string]any{"name": "x", "tiles": []map[string]any{{"metric": "nope"}}})
	webtest.ExpectErr(t, bad, 400, app.CodeValidation, "unknown_metric")
	if bad.Field() != "tiles[0].metric" {
		t.Fatalf("field %q", bad.Field())
	}
	c := k.Do("POST", "acme", "/api/v1/admin/tools/dashboards", owner, map[string]any{"name": "Resellers", "roles": []string{"reseller"},
		"tiles": []map[string]any{{"metric": "online_now", "type": "gauge"}}})
	if c.Status != 201 {
		t.Fatalf("create: %s", c.Body)
	}
	id := int64(c.Data()["id"].(float64))
	// The reseller's dashboard is the one for its role.
	m := k.Do("GET", "acme", "/api/v1/admin/dashboards/me", resTok, nil)
	if m.Status != 200 || m.Data()["dashboard"].(map[string]any)["name"] != "Resellers" || len(m.Data()["tiles"].([]any)) != 1 {
		t.Fatalf("mine: %s", m.Body)
	}
	if n := k.Do("GET", "acme", "/api/v1/admin/dashboards/me", owner, nil).Data()["dashboard"].(map[string]any)["name"]; n != "Overview" {
		t.Fatalf("owner's dashboard %v", n)
	}
	// Customize and reset.
	r := k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", resTok, map[string]any{"tiles": []map[string]any{{"metric": "new_today"}, {"metric": "expiring_7d"}}})
	if r.Status != 200 || len(r.Data()["tiles"].([]any)) != 2 {
		t.Fatalf("customize: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", resTok, map[string]any{}), 400, app.CodeValidation, "tiles_required")
	r = k.Do("DELETE", "acme", "/api/v1/admin/dashboards/me/customize", resTok, nil)
	if r.Status != 200 || r.Data()["customized"] != false || len(r.Data()["tiles"].([]any)) != 1 {
		t.Fatalf("reset: %s", r.Body)
	}
	// Appearance.
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/appearance", resTok, map[string]any{"theme": "neon", "density": "compact"}), 400, app.CodeValidation, "invalid_enum")
	r = k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/appearance", resTok, map[string]any{"theme": "dark", "density": "compact"})
	if r.Status != 200 || r.Data()["theme"] != "dark" || r.Data()["density"] != "compact" {
		t.Fatalf("appearance: %s", r.Body)
	}
	// Edit, break and restore the shipped ones.
	ov := l.List()[0].(map[string]any)
	ovID := int64(ov["id"].(float64))
	p := k.Do("PUT", "acme", "/api/v1/admin/tools/dashboards/"+webtest.Itoa(ovID), owner, map[string]any{"name": "Mine now", "tiles": []map[string]any{}})
	if p.Status != 200 || p.Data()["name"] != "Mine now" {
		t.Fatalf("put: %s", p.Body)
	}
	netID := int64(l.List()[1].(map[string]any)["id"].(float64))
	b := k.Do("POST", "acme", "/api/v1/admin/tools/dashboards/bulk-delete", owner, map[string]any{"ids": []int64{netID, 999}})
	if b.Status != 200 || len(b.Data()["updated"].([]any)) != 1 || b.Data()["failed"].([]any)[0].(map[string]any)["reason"] != "not_found" {
		t.Fatalf("bulk delete: %s", b.Body)
	}
	rd := k.Do("POST", "acme", "/api/v1/admin/tools/dashboards/restore-defaults", owner, nil)
	if rd.Status != 200 || len(rd.List()) != 4 {
		t.Fatalf("restore: %s", rd.Body)
	}
	var name string
	k.Acquire("acme").DB.R.QueryRow(`SELECT name FROM dashboards WHERE id = ?`, ovID).Scan(&name)
	if name != "Overview" {
		t.Fatalf("restored name %q", name)
	}
	if r := k.Do("DELETE", "acme", "/api/v1/admin/tools/dashboards/"+webtest.Itoa(id), owner, nil); r.Status != 200 && r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/tools/dashboards/"+webtest.Itoa(id), owner, nil), 404, app.CodeNotFound, "not_found")
}

// TestDashboardSeriesTopAndLocalDays: money tiles count the tenant's local
// day (a movement at 23:30 UTC is "today" in a UTC+3 tenant the next
// morning, not in a UTC-5 one), refunds come off revenue and reversed card
// redemptions off card sales; a series tile answers 30 local days, a top
// tile ranks the subtree's managers; a tile type a metric cannot take is
// refused with the metrics it can.
func TestDashboardSeriesTopAndLocalDays(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := k.Owner("acme")
	res := webtest.CreateManager(k, "acme", 0, "res1", "reseller")
	resTok := k.Login("acme", "res1", webtest.Password)
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC) // 09:00 in UTC+3
	k.App.SetClock(func() time.Time { return now })
	mine := dashUser(t, k, "mine", res, true, now.Add(30*24*time.Hour))
	theirs := dashUser(t, k, "theirs", 1, true, now.Add(30*24*time.Hour))
	late := app.FormatTime(time.Date(2026, 11, 23, 23, 30, 0, 0, time.UTC)) // 02:30 on the 24th in UTC+3
	week := app.FormatTime(now.Add(-5 * 24 * time.Hour))
	webtest.Exec(t, k, `INSERT INTO user_ledger(user_id, kind, amount, balance_after, created_at) VALUES
		(?, 'activation', -10000, 0, ?), (?, 'refund_activation', 4000, 4000, ?), (?, 'activation', -3000, 0, ?), (?, 'activation', -50000, 0, ?),
		(?, 'withdraw', -1000, 0, ?)`, mine, late, mine, late, mine, week, theirs, late, mine, late)
	webtest.Exec(t, k, `INSERT INTO settings(key, value) VALUES ('timezone', '"Asia/Riyadh"') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)

	tiles := map[string]any{"tiles": []map[string]any{{"metric": "revenue_today"}, {"metric": "revenue_today", "type": "series"},
		{"metric": "revenue_month", "type": "top"}, {"metric": "subscribers_total", "type": "top"}}}
	for _, tok := range []string{owner, resTok} {
		if r := k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", tok, tiles); r.Status != 200 {
			t.Fatalf("customize: %s", r.Body)
		}
	}
	get := func(tok string) []any {
		t.Helper()
		r := k.Do("GET", "acme", "/api/v1/admin/dashboards/me/values", tok, nil)
		if r.Status != 200 {
			t.Fatalf("values: %d %s", r.Status, r.Body)
		}
		return r.Data()["tiles"].([]any)
	}
	val := func(tl any) any { return tl.(map[string]any)["value"] }
	rt := get(resTok)
	// 10 charged less 4 refunded at 02:30 local today; the withdrawal is not revenue.
	if val(rt[0]) != 6.0 {
		t.Fatalf("reseller revenue today %v, want 6", val(rt[0]))
	}
	days := val(rt[1]).([]any)
	last := days[len(days)-1].(map[string]any)
	if len(days) != 30 || last["day"] != "2026-11-24" || last["value"] != 6.0 || days[24].(map[string]any)["value"] != 3.0 {
		t.Fatalf("series: %v", days)
	}
	if top := val(rt[2]).([]any); len(top) != 1 || top[0].(map[string]any)["manager"] != "res1" || top[0].(map[string]any)["value"] != 9.0 {
		t.Fatalf("reseller top: %v", top)
	}
	ot := get(owner)
	if val(ot[0]) != 56.0 {
		t.Fatalf("owner revenue today %v, want 56", val(ot[0]))
	}
	if top := val(ot[2]).([]any); len(top) != 2 || top[0].(map[string]any)["value"] != 50.0 || top[1].(map[string]any)["manager"] != "res1" {
		t.Fatalf("owner top: %v", top)
	}
	// West of UTC the same movements were yesterday.
	webtest.Exec(t, k, `UPDATE settings SET value = '"America/New_York"' WHERE key = 'timezone'`)
	if v := val(get(owner)[0]); v != 0.0 {
		t.Fatalf("UTC-5 revenue today %v, want 0", v)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/admin/dashboards/me/customize", owner, map[string]any{"tiles": []map[string]any{{"metric": "online_now", "type": "series"}}}),
		400, "ERR_VALIDATION", "tile_type_unsupported")
}
