package web_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"xr/internal/webtest"
)

var reportPaths = []string{"activation-stats", "activations", "cards-transfer", "cards-usage", "claims-managers", "debtors-managers",
	"debtors-users", "debts", "gateway-txns", "manager-invoices", "manager-journal", "manager-receipts", "money-transfer", "profits",
	"sessions", "suspicious", "traffic", "users"}

var reportPerms = []string{"prm_report_activation_stats", "prm_report_activations", "prm_report_cards_log", "prm_report_cards_usage",
	"prm_report_debts", "prm_report_gateway_transactions", "prm_managers_invoices", "prm_managers_journal", "prm_managers_receipts",
	"prm_report_money_transfer", "prm_report_profits", "prm_report_sessions", "prm_report_suspicious", "prm_report_traffic", "prm_report_users"}

// repShape checks the list envelope every report answers.
func repShape(t *testing.T, name string, r webtest.Resp) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", name, r.Status, r.Body)
	}
	if _, ok := r.JSON["data"].([]any); !ok {
		t.Fatalf("%s: data is not an array: %s", name, r.Body)
	}
	m := r.Meta()
	for _, k := range []string{"page", "page_size", "total", "has_next", "aggregates"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("%s: meta.%s missing: %s", name, k, r.Body)
		}
	}
	if _, ok := m["aggregates"].(map[string]any); !ok {
		t.Fatalf("%s: aggregates is not an object: %s", name, r.Body)
	}
}

func repAgg(r webtest.Resp, key string) float64 {
	v, _ := r.Meta()["aggregates"].(map[string]any)[key].(float64)
	return v
}

func repWant(t *testing.T, name string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v, want %v", name, got, want)
	}
}

func TestReportsEmptyTenant(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.App.Limiter = webtest.AllowAll{}
	tok := k.Owner("acme")
	for _, p := range reportPaths {
		r := k.Do("GET", "acme", "/api/v1/admin/reports/"+p, tok, nil)
		repShape(t, p, r)
		repWant(t, p+" total", r.Meta()["total"], 0)
		repWant(t, p+" rows", len(r.List()), 0)
		for key, v := range r.Meta()["aggregates"].(map[string]any) {
			repWant(t, p+" aggregate "+key, v, 0)
		}
		bad := k.Do("GET", "acme", "/api/v1/admin/reports/"+p+"?filter[from]=yesterday", tok, nil)
		if bad.Status != 400 || bad.Reason() != "invalid_filter" || bad.Field() != "filter[from]" {
			t.Errorf("%s malformed from: %d %s", p, bad.Status, bad.Body)
		}
	}
}

// repSeed writes a small tenant history: reseller R (subscribers ur, ur2)
// and reseller O (otherres, subscriber ouser), all in January 2026.
func repSeed(t *testing.T, k *webtest.Kit, root, rID, oID int64) {
	t.Helper()
	ts := "2026-01-01 00:00:00"
	st := []string{
		`INSERT INTO profiles(id, name, price, created_at, updated_at) VALUES (901, 'Fiber50', 10000, '` + ts + `', '` + ts + `')`,
		fmt.Sprintf(`INSERT INTO users(id, username, password_sealed, parent_id, profile_id, lookup_token, expiration, created_at, updated_at)
			VALUES (901, 'ur', x'00', %d, 901, 'lt901', '2099-01-01 00:00:00', '%s', '%s')`, rID, ts, ts),
		fmt.Sprintf(`INSERT INTO users(id, username, password_sealed, parent_id, profile_id, lookup_token, balance, created_at, updated_at)
			VALUES (902, 'ur2', x'00', %d, 901, 'lt902', -5000, '%s', '%s')`, rID, ts, ts),
		fmt.Sprintf(`INSERT INTO users(id, username, password_sealed, parent_id, profile_id, lookup_token, created_at, updated_at)
			VALUES (903, 'ouser', x'00', %d, 901, 'lt903', '%s', '%s')`, oID, ts, ts),
		`INSERT INTO user_ledger(user_id, kind, amount, balance_after, created_at) VALUES (902, 'adjust', -5000, -5000, '2026-01-15 09:00:00')`,
		`INSERT INTO user_activations(user_id, profile_id, price, payer, added_seconds, new_expiration, old_bytes_limit, old_seconds_limit,
			old_used_bytes, old_used_seconds, actor_id, created_at) VALUES (901, 901, 10000, 'subscriber', 2592000, '2099-01-01 00:00:00', 0, 0, 0, 0, ` + fmt.Sprint(rID) + `, '2026-01-10 10:00:00')`,
		`INSERT INTO user_activations(user_id, profile_id, price, payer, added_seconds, new_expiration, old_bytes_limit, old_seconds_limit,
			old_used_bytes, old_used_seconds, refunded_at, created_at) VALUES (901, 901, 3000, 'subscriber', 2592000, '2099-01-01 00:00:00', 0, 0, 0, 0, '2026-01-11 12:00:00', '2026-01-11 11:00:00')`,
		fmt.Sprintf(`INSERT INTO user_activations(user_id, profile_id, price, payer, payer_manager_id, added_seconds, new_expiration, old_bytes_limit, old_seconds_limit,
			old_used_bytes, old_used_seconds, created_at) VALUES (903, 901, 20000, 'reseller', %d, 2592000, '2026-02-10 10:00:00', 0, 0, 0, 0, '2026-01-10 15:00:00')`, oID),
		`INSERT INTO addons(id, name, kind, amount, price, created_at, updated_at) VALUES (901, 'Extra', 'data', 1000, 2000, '` + ts + `', '` + ts + `')`,
		`INSERT INTO user_addons(user_id, addon_id, quantity, price, payer, created_at) VALUES (901, 901, 1, 2000, 'subscriber', '2026-01-10 16:00:00')`,
		fmt.Sprintf(`INSERT INTO manager_journal(id, manager_id, kind, amount, balance_after, actor_id, document_no, created_at) VALUES (901, %d, 'deposit', 50000, 50000, %d, 'INV-901', '2026-01-05 10:00:00')`, rID, root),
		fmt.Sprintf(`INSERT INTO manager_journal(id, manager_id, kind, amount, balance_after, actor_id, document_no, created_at) VALUES (902, %d, 'deposit', 70000, 70000, %d, 'INV-902', '2026-01-05 11:00:00')`, oID, root),
		fmt.Sprintf(`INSERT INTO manager_journal(id, manager_id, kind, amount, balance_after, actor_id, created_at) VALUES (903, %d, 'withdraw', -5000, 65000, %d, '2026-01-06 11:00:00')`, oID, root),
		fmt.Sprintf(`UPDATE managers SET balance = -2000 WHERE id = %d`, oID),
		fmt.Sprintf(`INSERT INTO manager_loans(manager_id, kind, amount, outstanding_after, created_at) VALUES (%d, 'loan', 30000, 30000, '2026-01-07 10:00:00')`, rID),
		fmt.Sprintf(`INSERT INTO manager_loans(manager_id, kind, amount, outstanding_after, created_at) VALUES (%d, 'loan', 10000, 10000, '2026-01-07 11:00:00')`, oID),
		fmt.Sprintf(`INSERT INTO manager_loans(manager_id, kind, amount, outstanding_after, created_at) VALUES (%d, 'repayment', 4000, 6000, '2026-01-08 11:00:00')`, oID),
		fmt.Sprintf(`INSERT INTO manager_documents(manager_id, kind, number, amount, journal_id, created_at) VALUES (%d, 'invoice', 'INV-901', 50000, 901, '2026-01-05 10:00:00')`, rID),
		fmt.Sprintf(`INSERT INTO manager_documents(manager_id, kind, number, amount, journal_id, created_at) VALUES (%d, 'invoice', 'INV-902', 70000, 902, '2026-01-05 11:00:00')`, oID),
		fmt.Sprintf(`INSERT INTO manager_documents(manager_id, kind, number, amount, created_at) VALUES (%d, 'receipt', 'RCT-901', 4000, '2026-01-08 11:00:00')`, oID),
		fmt.Sprintf(`INSERT INTO card_batches(id, name, card_mode, quantity, face_value, code_length, code_charset, expiration, status, owner_manager_id, created_by, created_at, updated_at)
			VALUES (901, 'Series R', 'refill_balance', 2, 5000, 8, 'numeric', '2099-01-01 00:00:00', 'ready', %d, %d, '%s', '%s')`, rID, root, ts, ts),
		fmt.Sprintf(`INSERT INTO cards(id, batch_id, seq, serial, code, owner_manager_id, expires_at, created_at) VALUES (901, 901, 1, 'S901', 'C901', %d, '2099-01-01 00:00:00', '%s')`, rID, ts),
		fmt.Sprintf(`INSERT INTO cards(id, batch_id, seq, serial, code, owner_manager_id, expires_at, created_at) VALUES (902, 901, 2, 'S902', 'C902', %d, '2099-01-01 00:00:00', '%s')`, rID, ts),
		`INSERT INTO card_redemptions(card_id, batch_id, card_mode, channel, user_id, face_value, effect_type, effect_amount, request_id, created_at)
			VALUES (901, 901, 'refill_balance', 'staff', 901, 5000, 'balance', 5000, 'r1', '2026-01-12 10:00:00')`,
		`INSERT INTO card_redemptions(card_id, batch_id, card_mode, channel, user_id, face_value, effect_type, effect_amount, request_id, reversed_at, created_at)
			VALUES (902, 901, 'refill_balance', 'staff', 901, 5000, 'balance', 5000, 'r2', '2026-01-12 12:00:00', '2026-01-12 11:00:00')`,
		fmt.Sprintf(`INSERT INTO card_transfers(kind, batch_id, from_manager_id, to_manager_id, card_count, unit_price, amount, request_id, created_at)
			VALUES ('series', 901, %d, %d, 5, 5000, 25000, 't1', '2026-01-09 10:00:00')`, root, rID),
		fmt.Sprintf(`INSERT INTO card_transfers(kind, from_manager_id, to_manager_id, card_count, unit_price, amount, request_id, created_at)
			VALUES ('cards', %d, %d, 3, 5000, 15000, 't2', '2026-01-09 11:00:00')`, root, oID),
	}
	for i, mac := range []string{"AA:01", "AA:02", "AA:03"} {
		st = append(st, fmt.Sprintf(`INSERT INTO radius_sessions(acct_session_id, user_id, username, calling_station_id, start_time, stop_time, session_time,
			input_octets, output_octets, close_reason) VALUES ('s%d', 901, 'ur', '%s', '2026-01-20 0%d:00:00', '2026-01-20 0%d:30:00', %d, 1000, 2000, 'nas')`,
			i, mac, i+1, i+1, []int{100, 200, 30}[i]))
	}
	st = append(st, `INSERT INTO radius_sessions(acct_session_id, user_id, username, calling_station_id, start_time, stop_time, session_time,
		input_octets, output_octets, close_reason) VALUES ('s9', 903, 'ouser', 'BB:01', '2026-01-20 05:00:00', '2026-01-20 06:00:00', 50, 500, 500, 'stale')`)
	// The rollups accounting wrote with those sessions (the users report reads them).
	st = append(st, `INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions) VALUES
		(901, 'h', unixepoch('2026-01-20 01:00:00'), 1000, 2000, 100, 1), (901, 'h', unixepoch('2026-01-20 02:00:00'), 1000, 2000, 200, 1),
		(901, 'h', unixepoch('2026-01-20 03:00:00'), 1000, 2000, 30, 1), (901, 'd', unixepoch('2026-01-20'), 3000, 6000, 330, 3),
		(903, 'h', unixepoch('2026-01-20 05:00:00'), 500, 500, 50, 1), (903, 'd', unixepoch('2026-01-20'), 500, 500, 50, 1)`)
	err := k.Acquire("acme").Write(context.Background(), func(tx *sql.Tx) error {
		for _, s := range st {
			if _, err := tx.Exec(s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReportsSeeded(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.App.Limiter = webtest.AllowAll{}
	webtest.CreateRole(k, "acme", "Reporter", reportPerms...)
	root := webtest.OwnerID(k, "acme")
	rID := webtest.CreateManager(k, "acme", 0, "resel", "Reporter")
	oID := webtest.CreateManager(k, "acme", 0, "otherres", "Reporter")
	repSeed(t, k, root, rID, oID)
	owner := k.Owner("acme")
	const period = "filter[from]=2026-01-01&filter[to]=2026-01-31"
	get := func(tok, path, extra string) webtest.Resp {
		t.Helper()
		r := k.Do("GET", "acme", "/api/v1/admin/reports/"+path+"?"+period+extra, tok, nil)
		repShape(t, path, r)
		return r
	}
	row := func(r webtest.Resp) map[string]any { return r.List()[0].(map[string]any) }

	// Every report on seeded data answers the list shape.
	for _, p := range reportPaths {
		get(owner, p, "")
	}

	// activations: page of one, aggregates over all three.
	r := get(owner, "activations", "&page_size=1")
	repWant(t, "activations total", r.Meta()["total"], 3)
	repWant(t, "activations rows", len(r.List()), 1)
	repWant(t, "activations has_next", r.Meta()["has_next"], true)
	repWant(t, "activations revenue", repAgg(r, "revenue"), 30)
	repWant(t, "activations refunded", repAgg(r, "refunded"), 3)
	repWant(t, "activations reseller_paid", repAgg(r, "reseller_paid"), 20)
	repWant(t, "activations newest", row(r)["refunded"], true)
	r = get(owner, "activations", "&filter[payer]=reseller")
	repWant(t, "activation row", sp(row(r)["username"], row(r)["price"], row(r)["payer_manager"], row(r)["profile"]), "ouser 20 otherres Fiber50")

	r = get(owner, "activation-stats", "&page_size=1")
	repWant(t, "stats total", r.Meta()["total"], 2)
	repWant(t, "stats aggs", sp(repAgg(r, "activations"), repAgg(r, "revenue"), repAgg(r, "refunded")), "3 30 1")
	repWant(t, "stats first day", row(r)["day"], "2026-01-11")
	r = get(owner, "activation-stats", "&sort=day&order=asc")
	repWant(t, "stats row", sp(row(r)["day"], row(r)["activations"], row(r)["revenue"], row(r)["users"]), "2026-01-10 2 30 2")

	r = get(owner, "cards-transfer", "&page_size=1")
	repWant(t, "transfers aggs", sp(r.Meta()["total"], repAgg(r, "cards"), repAgg(r, "amount")), "2 8 40")
	repWant(t, "transfer row", sp(row(r)["to_manager"], row(r)["cards"]), "otherres 3")

	r = get(owner, "cards-usage", "")
	repWant(t, "usage aggs", sp(repAgg(r, "redemptions"), repAgg(r, "reversed"), repAgg(r, "face_value")), "1 1 5")
	repWant(t, "usage row", sp(row(r)["series"], row(r)["day"], row(r)["plan_id"]), "Series R 2026-01-12 <nil>")

	r = get(owner, "claims-managers", "&page_size=1")
	repWant(t, "claims aggs", sp(r.Meta()["total"], repAgg(r, "outstanding"), repAgg(r, "loaned"), repAgg(r, "repaid")), "2 36 40 4")
	r = get(owner, "claims-managers", "&sort=outstanding&order=asc")
	repWant(t, "claim row", sp(row(r)["manager"], row(r)["outstanding"]), "otherres 6")

	r = get(owner, "debtors-managers", "&sort=total_owed")
	repWant(t, "debtors-managers aggs", sp(r.Meta()["total"], repAgg(r, "total_owed"), repAgg(r, "negative_balance")), "2 38 2")
	repWant(t, "debtors-managers row", sp(row(r)["manager"], row(r)["total_owed"]), "resel 30")

	r = get(owner, "debtors-users", "")
	repWant(t, "debtors-users", sp(r.Meta()["total"], repAgg(r, "debt"), row(r)["username"], row(r)["debt"]), "1 5 ur2 5")

	r = get(owner, "debts", "&page_size=1")
	repWant(t, "debts aggs", sp(r.Meta()["total"], repAgg(r, "total_owed"), repAgg(r, "users_owed"), repAgg(r, "managers")), "3 43 5 2")
	r = get(owner, "debts", "&filter[kind]=user")
	repWant(t, "debts user row", sp(row(r)["kind"], row(r)["name"], row(r)["owed"]), "user ur2 5")

	r = get(owner, "gateway-txns", "")
	repWant(t, "gateway", sp(r.Meta()["total"], repAgg(r, "amount")), "0 0")

	r = get(owner, "manager-invoices", "&page_size=1")
	repWant(t, "invoices", sp(r.Meta()["total"], repAgg(r, "amount"), row(r)["number"]), "2 120 INV-902")
	r = get(owner, "manager-receipts", "")
	repWant(t, "receipts", sp(r.Meta()["total"], repAgg(r, "amount"), row(r)["manager"]), "1 4 otherres")

	r = get(owner, "manager-journal", "&page_size=1")
	repWant(t, "journal aggs", sp(r.Meta()["total"], repAgg(r, "credits"), repAgg(r, "debits"), repAgg(r, "net")), "3 120 5 115")
	repWant(t, "journal row", sp(row(r)["kind"], row(r)["amount"], row(r)["actor"]), "withdraw -5 owner")

	r = get(owner, "money-transfer", fmt.Sprintf("&filter[manager_id]=%d", rID))
	repWant(t, "transfer aggs", sp(r.Meta()["total"], repAgg(r, "total_in"), repAgg(r, "total_out")), "1 50 0")
	repWant(t, "transfer row", sp(row(r)["direction"], row(r)["counterpart"], row(r)["amount"]), "in owner 50")

	r = get(owner, "profits", "&page_size=1")
	repWant(t, "profits aggs", sp(repAgg(r, "revenue"), repAgg(r, "reseller_cost"), repAgg(r, "net"), repAgg(r, "addons")), "32 20 12 1")
	r = get(owner, "profits", fmt.Sprintf("&filter[manager_id]=%d", rID))
	repWant(t, "profit row", sp(row(r)["manager"], row(r)["activation_revenue"], row(r)["addon_revenue"], row(r)["net"]), "resel 10 2 12")

	r = get(owner, "sessions", "&page_size=1")
	repWant(t, "sessions aggs", sp(r.Meta()["total"], repAgg(r, "seconds"), repAgg(r, "total_bytes"), repAgg(r, "users")), "4 380 10000 2")
	repWant(t, "sessions row", sp(row(r)["username"], row(r)["duration"], row(r)["total_bytes"], row(r)["close_reason"]), "ouser 50 1000 stale")

	r = get(owner, "suspicious", "")
	repWant(t, "suspicious", sp(r.Meta()["total"], repAgg(r, "many_macs"), row(r)["username"], row(r)["distinct_macs"], row(r)["reasons"]), "1 1 ur 3 [many_macs]")
	r = get(owner, "suspicious", "&filter[min_stale]=1&filter[min_macs]=9")
	repWant(t, "suspicious stale", sp(r.Meta()["total"], row(r)["username"], repAgg(r, "stale_closed")), "1 ouser 1")

	r = get(owner, "traffic", "&page_size=1&sort=total_bytes")
	repWant(t, "traffic", sp(r.Meta()["total"], repAgg(r, "total_bytes"), row(r)["username"], row(r)["total_bytes"]), "2 10000 ur 9000")
	r = get(owner, "traffic", "&filter[group_by]=day")
	repWant(t, "traffic day", sp(r.Meta()["total"], row(r)["day"], row(r)["users"], row(r)["sessions"]), "1 2026-01-20 2 4")
	if b := k.Do("GET", "acme", "/api/v1/admin/reports/traffic?filter[group_by]=week", owner, nil); b.Status != 400 || b.Reason() != "invalid_filter" {
		t.Errorf("traffic group_by=week: %d %s", b.Status, b.Body)
	}

	r = get(owner, "users", "&page_size=1&sort=total_bytes")
	repWant(t, "users aggs", sp(r.Meta()["total"], repAgg(r, "active"), repAgg(r, "total_bytes"), repAgg(r, "activation_revenue"), repAgg(r, "balance")), "3 1 10000 30 -5")
	repWant(t, "users row", sp(row(r)["username"], row(r)["state"], row(r)["sessions"], row(r)["total_bytes"], row(r)["activations"]), "ur active 3 9000 1")

	// A period before the history: empty, zero aggregates.
	r = k.Do("GET", "acme", "/api/v1/admin/reports/activations?filter[from]=2025-01-01&filter[to]=2025-12-31", owner, nil)
	repWant(t, "old period", sp(r.Meta()["total"], repAgg(r, "revenue")), "0 0")

	// Scope: reseller R sees its subtree only.
	rtok := idSession(k, "acme", "resel")
	for _, p := range reportPaths {
		rr := get(rtok, p, "")
		if strings.Contains(string(rr.Body), "otherres") || strings.Contains(string(rr.Body), "ouser") {
			t.Errorf("%s: reseller sees another subtree: %s", p, rr.Body)
		}
	}
	r = get(rtok, "activations", "")
	repWant(t, "scoped activations", sp(r.Meta()["total"], repAgg(r, "revenue"), repAgg(r, "reseller_paid")), "2 10 0")
	r = get(rtok, "claims-managers", "")
	repWant(t, "scoped claims", sp(r.Meta()["total"], repAgg(r, "outstanding")), "1 30")
	r = get(rtok, "sessions", "")
	repWant(t, "scoped sessions", sp(r.Meta()["total"], repAgg(r, "total_bytes")), "3 9000")
	r = get(rtok, "cards-transfer", "")
	repWant(t, "scoped transfers", sp(r.Meta()["total"], repAgg(r, "cards")), "1 5")
	r = get(rtok, "debts", "")
	repWant(t, "scoped debts", sp(r.Meta()["total"], repAgg(r, "total_owed")), "2 35")
	r = get(rtok, "users", "")
	repWant(t, "scoped users", sp(r.Meta()["total"], repAgg(r, "total_bytes")), "2 9000")
	// Narrowing to a manager outside the subtree gives nothing.
	r = get(rtok, "manager-journal", fmt.Sprintf("&filter[manager_id]=%d", oID))
	repWant(t, "out-of-scope narrowing", r.Meta()["total"], 0)
}

// repRecorder records the bucket keys a request is counted on.
type repRecorder struct{ keys []string }

func (r *repRecorder) Allow(key string, _ int) bool { r.keys = append(r.keys, key); return true }

func TestReportsHeavyBucket(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	for _, p := range reportPaths {
		rec := &repRecorder{}
		k.App.Limiter = rec
		k.Do("GET", "acme", "/api/v1/admin/reports/"+p, tok, nil)
		heavy := false
		for _, key := range rec.keys {
			heavy = heavy || strings.HasSuffix(key, ":t_heavy")
		}
		if heavy != (p != "gateway-txns") {
			t.Errorf("%s: counted on %v", p, rec.keys)
		}
	}
}

// sp joins values with spaces.
func sp(v ...any) string { return strings.TrimSpace(fmt.Sprintln(v...)) }
