package web_test

import (
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"

	"xr/internal/webtest"
	"xr/web"
)

// idemCase is one idempotent route: a first body a, answered fresh; a again,
// answered as a replay; then b (another body under the same request_id),
// answered 409 with reason (request_id_conflict unless named). A route whose
// body holds nothing but request_id (b == nil) cannot be sent another body:
// an extra field is 400 unknown_field instead.
type idemCase struct {
	route  string // "POST /users/{id}/deposit", as in the route table
	path   string // the path sent, ids filled in
	token  string
	a, b   map[string]any
	reason string
	bulk   bool   // the conflict is reported per row in a 200 bulk result
	method string // "" = POST
}

// TestIdempotencyFingerprintEveryRoute: on every route whose body takes a
// request_id, the same key with the same body replays, with a different
// body answers 409 request_id_conflict (activation_request_conflict for
// the activation) and changes nothing; the stored fingerprint of the first
// request decides. The table must name every such route of the table.
func TestIdempotencyFingerprintEveryRoute(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	webtest.StartJobs(t, s.Kit)
	plan := s.Plan(map[string]any{"name": "Idem", "price": 5, "duration_days": 30})
	u := s.User("", map[string]any{"username": "idem-u", "password": "radius-u", "profile_id": plan})
	v := s.User("", map[string]any{"username": "idem-v", "profile_id": plan})
	w := s.User("", map[string]any{"username": "idem-w", "profile_id": plan})
	for _, id := range []int64{u, v, w} {
		if r := s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 500, "request_id": fmt.Sprintf("seed-%d", id)}); r.Status != 200 {
			t.Fatalf("seed deposit: %d %s", r.Status, r.Body)
		}
	}
	// v is activated (for the refund) and in debt (for pay-debt).
	if r := s.Call("POST", fmt.Sprintf("/users/%d/activation", v), s.Tok, map[string]any{"request_id": "seed-act-v"}); r.Status != 200 {
		t.Fatalf("seed activation: %d %s", r.Status, r.Body)
	}
	s.Exec(`UPDATE users SET balance = -20000 WHERE id = ?`, w)
	s.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('points_value', '0.5')`)
	s.Exec(`UPDATE users SET points_balance = 100 WHERE id = ?`, u)
	addon := s.Call("POST", "/admin/addons", s.Tok, map[string]any{"name": "+1 day", "kind": "days", "amount": 1, "price": 1})
	if addon.Status != 201 {
		t.Fatalf("addon: %d %s", addon.Status, addon.Body)
	}
	if r := s.Call("POST", fmt.Sprintf("/users/%d/activation", u), s.Tok, map[string]any{"request_id": "seed-act-u"}); r.Status != 200 {
		t.Fatalf("seed activation u: %d %s", r.Status, r.Body)
	}
	// Managers: m's wallet holds 100 and owes 50.
	m, _ := s.Manager(s.OwnerID, "idem-m")
	if r := s.Call("POST", fmt.Sprintf("/managers/%d/wallet/topup", m), s.Tok, map[string]any{"amount": 50, "request_id": "seed-top"}); r.Status != 200 {
		t.Fatalf("seed topup: %d %s", r.Status, r.Body)
	}
	if r := s.Call("POST", fmt.Sprintf("/managers/%d/wallet/deposit", m), s.Tok, map[string]any{"amount": 50, "request_id": "seed-dep"}); r.Status != 200 {
		t.Fatalf("seed wallet deposit: %d %s", r.Status, r.Body)
	}
	r1, _ := cdReseller(t, s.Kit, "idem-r1")
	r2, _ := cdReseller(t, s.Kit, "idem-r2")
	// Cards: a refill series (staff, counter, wallet, portal redemptions and
	// transfers), a voucher series (public sign-up), a series to move whole.
	refill := webtest.CreateSeries(t, s.Kit, s.Tok, map[string]any{"type": "refill", "quantity": 12, "face_value": 5, "expiration": webtest.NextYear, "request_id": "seed-s1"})
	codes := webtest.SeriesCodes(t, s.Kit, s.Tok, refill)
	voucher := webtest.CreateSeries(t, s.Kit, s.Tok, map[string]any{"type": "prepaid", "quantity": 2, "face_value": 2, "expiration": webtest.NextYear, "plan_profile_id": plan, "request_id": "seed-s2"})
	vcodes := webtest.SeriesCodes(t, s.Kit, s.Tok, voucher)
	whole := webtest.CreateSeries(t, s.Kit, s.Tok, map[string]any{"type": "refill", "quantity": 1, "face_value": 5, "expiration": webtest.NextYear, "request_id": "seed-s3"})
	red := s.Call("POST", "/cards/redeem", s.Tok, map[string]any{"code": codes[11], "user_id": u, "request_id": "seed-red"})
	if red.Status != 200 {
		t.Fatalf("seed redeem: %d %s", red.Status, red.Body)
	}
	tr := s.Call("POST", "/cards/transfers", s.Tok, map[string]any{"to_manager_id": r1, "card_ids": []int64{s.Scalar(`SELECT id FROM cards WHERE code = ?`, codes[10])}, "request_id": "seed-tr"})
	if tr.Status != 200 {
		t.Fatalf("seed transfer: %d %s", tr.Status, tr.Body)
	}
	card := func(i int) int64 { return s.Scalar(`SELECT id FROM cards WHERE code = ?`, codes[i]) }
	p := fmt.Sprintf
	tpl := s.Call("POST", "/card-templates", s.Tok, map[string]any{"name": "Idem", "type": "refill", "quantity": 1, "face_value": 5, "expiration": webtest.NextYear})
	if tpl.Status != 201 {
		t.Fatalf("seed card template: %d %s", tpl.Status, tpl.Body)
	}
	portal := webtest.PortalLogin(t, s, "idem-u", "radius-u")
	portalV := webtest.PortalLogin(t, s, "idem-v", "secret-idem-v")
	// Self-service: the plan offers changes, free extensions and boosts.
	plan2 := s.Plan(map[string]any{"name": "Idem 2", "price": 5, "duration_days": 30})
	plan3 := s.Plan(map[string]any{"name": "Idem 3", "price": 5, "duration_days": 30})
	if r := s.Call("PUT", p("/admin/profiles/%d/self-service", plan), s.Tok, map[string]any{"change_targets": []int64{plan2, plan3},
		"extension": map[string]any{"days": 1, "price": 0, "max_per_month": 9}, "boosts": []map[string]any{
			{"rate_down_kbps": 2048, "rate_up_kbps": 512, "duration_minutes": 30, "price": 0}, {"rate_down_kbps": 4096, "rate_up_kbps": 512, "duration_minutes": 30, "price": 0}}}); r.Status != 200 {
		t.Fatalf("seed self-service: %d %s", r.Status, r.Body)
	}
	boost := func(i int) int64 {
		return s.Scalar(`SELECT id FROM ss_boost_options WHERE profile_id = ? ORDER BY position LIMIT 1 OFFSET ?`, plan, i)
	}

	if r := s.Call("POST", "/pos/shifts", s.Tok, map[string]any{}); r.Status != 201 { // the till sells in an open shift
		t.Fatalf("seed shift: %d %s", r.Status, r.Body)
	}
	cases := []idemCase{
		{route: "POST /users/{id}/deposit", path: p("/users/%d/deposit", u), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 2}},
		{route: "POST /users/{id}/withdraw", path: p("/users/%d/withdraw", u), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 1, "note": "other"}},
		{route: "POST /users/{id}/pay-debt", path: p("/users/%d/pay-debt", w), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 3}},
		{route: "POST /users/{id}/activation", path: p("/users/%d/activation", u), a: map[string]any{"note": "a"}, b: map[string]any{"note": "b"}, reason: "activation_request_conflict"},
		{route: "POST /users/{id}/addons", path: p("/users/%d/addons", u), a: map[string]any{"addon_id": addon.Data()["id"]}, b: map[string]any{"addon_id": addon.Data()["id"], "quantity": 2}},
		{route: "POST /users/{id}/redeem-points", path: p("/users/%d/redeem-points", u), a: map[string]any{"points": 2}, b: map[string]any{"points": 4}},
		{route: "POST /users/{id}/refund-activation", path: p("/users/%d/refund-activation", v), a: map[string]any{"note": "a"}, b: map[string]any{"note": "b"}},
		{route: "POST /users/bulk-deposit", path: "/users/bulk-deposit", a: map[string]any{"ids": []int64{u}, "amount": 1}, b: map[string]any{"ids": []int64{u}, "amount": 2}, bulk: true},
		{route: "POST /users/bulk-withdraw", path: "/users/bulk-withdraw", a: map[string]any{"ids": []int64{u}, "amount": 1}, b: map[string]any{"ids": []int64{u}, "amount": 2}, bulk: true},
		{route: "POST /users/bulk-extend", path: "/users/bulk-extend", a: map[string]any{"ids": []int64{u}}, b: map[string]any{"ids": []int64{u}, "profile_id": plan}, bulk: true},
		{route: "POST /users/bulk-reset-balance", path: "/users/bulk-reset-balance", a: map[string]any{"ids": []int64{w}, "note": "a"}, b: map[string]any{"ids": []int64{w}, "note": "b"}, bulk: true},
		{route: "POST /managers/{id}/wallet/deposit", path: p("/managers/%d/wallet/deposit", m), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 2}},
		{route: "POST /managers/{id}/wallet/withdraw", path: p("/managers/%d/wallet/withdraw", m), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 2}},
		{route: "POST /managers/{id}/wallet/pay-debt", path: p("/managers/%d/wallet/pay-debt", m), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 2}},
		{route: "POST /managers/{id}/wallet/topup", path: p("/managers/%d/wallet/topup", m), a: map[string]any{"amount": 1}, b: map[string]any{"amount": 2}},
		{route: "POST /exports", path: "/exports", a: map[string]any{"resource": "users", "format": "csv"}, b: map[string]any{"resource": "users", "format": "xlsx"}},
		{route: "POST /cards/redeem", path: "/cards/redeem", a: map[string]any{"code": codes[0], "user_id": u}, b: map[string]any{"code": codes[0], "user_id": v}},
		{route: "POST /admin/cards/redeem-otc", path: "/admin/cards/redeem-otc", a: map[string]any{"code": codes[1], "user_id": u}, b: map[string]any{"code": codes[1], "user_id": u, "paid_amount": 4}},
		{route: "POST /cards/redeem-create", path: "/cards/redeem-create", a: map[string]any{"code": vcodes[0], "username": "idem-new", "password": "idem-pass-1"}, b: map[string]any{"code": vcodes[0], "username": "idem-other", "password": "idem-pass-1"}},
		{route: "POST /admin/cards/redeem-to-wallet", path: "/admin/cards/redeem-to-wallet", a: map[string]any{"code": codes[2]}, b: map[string]any{"code": codes[3]}},
		{route: "POST /admin/cards/redemptions/{id}/reversals", path: p("/admin/cards/redemptions/%d/reversals", webtest.Num(red.Data()["redemption_id"])), a: map[string]any{"note": "a"}, b: map[string]any{"note": "b"}},
		{route: "POST /cards/transfers", path: "/cards/transfers", a: map[string]any{"to_manager_id": r1, "card_ids": []int64{card(4)}}, b: map[string]any{"to_manager_id": r1, "card_ids": []int64{card(5)}}},
		{route: "POST /card-batches/{id}/transfer", path: p("/card-batches/%d/transfer", whole), a: map[string]any{"to_manager_id": r1}, b: map[string]any{"to_manager_id": r2}},
		{route: "POST /cards/transfers/{id}/revert", path: p("/cards/transfers/%d/revert", webtest.Num(tr.Data()["id"])), a: map[string]any{}},
		{route: "POST /card-batches", path: "/card-batches", a: map[string]any{"type": "refill", "quantity": 1, "face_value": 5, "expiration": webtest.NextYear}, b: map[string]any{"type": "refill", "quantity": 2, "face_value": 5, "expiration": webtest.NextYear}},
		{route: "POST /card-batches/{id}/regenerate", path: p("/card-batches/%d/regenerate", voucher), a: map[string]any{}},
		{route: "POST /card-templates/{id}/generate", path: p("/card-templates/%d/generate", webtest.Num(tpl.Data()["id"])), a: map[string]any{"quantity": 1}, b: map[string]any{"quantity": 2}},
		{route: "POST /portal/cards/redeem", path: "/portal/cards/redeem", token: portal, a: map[string]any{"code": codes[6]}, b: map[string]any{"code": codes[7]}},
		{route: "POST /user/cards/redeem", path: "/user/cards/redeem", token: portal, a: map[string]any{"code": codes[8]}, b: map[string]any{"code": codes[9]}},
		{route: "POST /portal/renew", path: "/portal/renew", token: portal, a: map[string]any{}},
		{route: "POST /user/renew", path: "/user/renew", token: portal, a: map[string]any{}},
		{route: "POST /portal/change-profile", path: "/portal/change-profile", token: portal, a: map[string]any{"intent": "change_at_renewal", "profile_id": plan2},
			b: map[string]any{"intent": "change_at_renewal", "profile_id": plan3}},
		{route: "POST /user/change-profile", path: "/user/change-profile", token: portal, a: map[string]any{"intent": "change_at_renewal", "profile_id": plan3},
			b: map[string]any{"intent": "change_at_renewal", "profile_id": plan2}},
		{route: "POST /portal/extend", path: "/portal/extend", token: portal, a: map[string]any{}},
		{route: "POST /user/extend", path: "/user/extend", token: portal, a: map[string]any{}},
		{route: "PUT /portal/speed", method: "PUT", path: "/portal/speed", token: portal, a: map[string]any{"option_id": boost(0)}, b: map[string]any{"option_id": boost(1)}},
		{route: "PUT /user/speed", method: "PUT", path: "/user/speed", token: portalV, a: map[string]any{"option_id": boost(0)}, b: map[string]any{"option_id": boost(1)}},
		{route: "POST /pos/sales", path: "/pos/sales", a: map[string]any{"lines": []any{map[string]any{"kind": "topup", "user_id": u, "amount": 1}}},
			b: map[string]any{"lines": []any{map[string]any{"kind": "topup", "user_id": u, "amount": 2}}}},
	}

	// Every route whose body declares request_id is in the table.
	named := map[string]bool{}
	for _, c := range cases {
		named[c.route] = true
	}
	var missing []string
	for _, r := range s.Srv.Routes() {
		if r.H == nil || r.Req == nil || r.Root {
			continue
		}
		rt := reflect.TypeOf(r.Req)
		if rt.Kind() != reflect.Struct {
			continue
		}
		fields := map[string]reflect.Type{}
		web.StructFields(rt, fields)
		if _, ok := fields["request_id"]; ok && !named[r.M+" "+r.P] && !idemExempt[r.M+" "+r.P] {
			missing = append(missing, r.M+" "+r.P)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("idempotent routes not in the table: %s", strings.Join(missing, ", "))
	}

	for i, c := range cases {
		key := fmt.Sprintf("idem-fp-%d", i)
		tok := c.token
		if tok == "" {
			tok = s.Tok
		}
		with := func(body map[string]any) map[string]any {
			out := map[string]any{"request_id": key}
			for k, v := range body {
				out[k] = v
			}
			return out
		}
		method := c.method
		if method == "" {
			method = "POST"
		}
		first := s.Call(method, c.path, tok, with(c.a))
		if first.Status >= 300 {
			t.Errorf("%s first: %d %s", c.route, first.Status, first.Body)
			continue
		}
		if c.bulk && len(first.Data()["failed"].([]any)) != 0 {
			t.Errorf("%s first: %s", c.route, first.Body)
			continue
		}
		replay := s.Call(method, c.path, tok, with(c.a))
		if replay.Status != http.StatusOK || (c.bulk && len(replay.Data()["failed"].([]any)) != 0) {
			t.Errorf("%s replay: %d %s", c.route, replay.Status, replay.Body)
			continue
		}
		like := key
		if c.bulk {
			like = key + "|%"
		}
		stored := s.Scalar(`SELECT count(*) FROM idempotency WHERE key LIKE ? AND fingerprint != ''`, like)
		if c.b == nil {
			extra := with(c.a)
			extra["note"] = "x"
			webtest.ExpectErr(t, s.Call(method, c.path, tok, extra), 400, "ERR_VALIDATION", "unknown_field")
			continue
		}
		if stored == 0 {
			t.Errorf("%s: no fingerprint stored for %s", c.route, key)
		}
		ledger := s.Scalar(idemMoneyRows)
		second := s.Call(method, c.path, tok, with(c.b))
		reason := c.reason
		if reason == "" {
			reason = "request_id_conflict"
		}
		if c.bulk {
			f, _ := second.Data()["failed"].([]any)
			if second.Status != 200 || len(f) != 1 || len(second.Data()["updated"].([]any)) != 0 {
				t.Errorf("%s other body: %d %s", c.route, second.Status, second.Body)
			}
		} else if second.Status != 409 || second.Code() != "ERR_CONFLICT" || second.Reason() != reason {
			t.Errorf("%s other body: %d %s, want 409 %s", c.route, second.Status, second.Body, reason)
		}
		if n := s.Scalar(`SELECT count(*) FROM idempotency WHERE key LIKE ? AND fingerprint != ''`, like); n != stored {
			t.Errorf("%s: idempotency rows %d → %d", c.route, stored, n)
		}
		if n := s.Scalar(idemMoneyRows); n != ledger {
			t.Errorf("%s: the other body moved money (%d → %d ledger rows)", c.route, ledger, n)
		}
	}
}

// idemMoneyRows counts every row a money or stock movement writes.
const idemMoneyRows = `SELECT (SELECT count(*) FROM user_ledger) + (SELECT count(*) FROM manager_journal) +
	(SELECT count(*) FROM card_redemptions) + (SELECT count(*) FROM card_transfers) + (SELECT count(*) FROM jobs)`

// idemExempt are request_id routes not in the table: backups, restore and
// factory reset keep their outcomes in the instance's own store
// (backup_ops, app/backups), not in a tenant's idempotency table; they
// bind a key to a subject there.
var idemExempt = map[string]bool{
	"POST /admin/tools/backup":              true,
	"POST /admin/tools/backup/{id}/restore": true,
	"POST /admin/tools/factory-reset":       true,
	// Payment initiation keys are UUIDs kept on the payment itself (scoped
	// by payer, with the body's fingerprint): TestPaymentsManualDeposit
	// replays and conflicts them.
	"POST /portal/deposit": true, "POST /user/deposit": true, "POST /portal/purchase": true, "POST /user/purchase": true,
	"POST /shop/purchases": true, // the shop's public purchase: TestShopHTTPPublishBuyAndSales replays and conflicts it
}
