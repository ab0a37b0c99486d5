package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
)

// Helpers of the portal tests (prefix pt).

func ptNum(v any) float64 { f, _ := v.(float64); return f }

func TestPortalLoginRules(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	withPortal := s.User("", map[string]any{"username": "alice", "password": "radius-a", "portal_password": "Portal-pass-1"})
	radiusOnly := s.User("", map[string]any{"username": "bob", "password": "radius-b"})

	// The portal password signs in; the RADIUS password does not while a
	// portal password is set.
	r := s.Call("POST", "/portal/login", "", map[string]any{"username": "alice", "password": "Portal-pass-1", "refresh": true})
	if r.Status != 200 || ptNum(r.Data()["user_id"]) != float64(withPortal) || r.Data()["token"] == "" ||
		r.Data()["refresh_token"] == nil || ptNum(r.Data()["expires_at"]) == 0 {
		t.Fatalf("login: %d %s", r.Status, r.Body)
	}
	refresh := r.Data()["refresh_token"].(string)
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "alice", "password": "radius-a"}), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	// Without a portal password, the RADIUS password signs in.
	r = s.Call("POST", "/user/login", "", map[string]any{"username": "BOB", "password": "radius-b"})
	if r.Status != 200 || ptNum(r.Data()["user_id"]) != float64(radiusOnly) {
		t.Fatalf("radius login: %d %s", r.Status, r.Body)
	}
	if _, ok := r.Data()["refresh_token"]; ok {
		t.Fatalf("refresh token without refresh:true: %s", r.Body)
	}
	wrongPW := s.Call("POST", "/portal/login", "", map[string]any{"username": "bob", "password": "wrong"})
	webtest.ExpectErr(t, wrongPW, 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	nobody := s.Call("POST", "/portal/login", "", map[string]any{"username": "nobody", "password": "x"})
	webtest.ExpectErr(t, nobody, 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	// One identical answer: the portal never tells which usernames exist.
	if a, b := idErrorSansRequestID(t, wrongPW), idErrorSansRequestID(t, nobody); a != b {
		t.Fatalf("wrong password %s vs unknown %s", a, b)
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "bob"}), 400, "ERR_VALIDATION", "password_required")

	// Refresh: once.
	r = s.Call("POST", "/portal/refresh", "", map[string]any{"refresh_token": refresh})
	if r.Status != 200 || r.Data()["refresh_token"] == nil || ptNum(r.Data()["user_id"]) != float64(withPortal) {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	if g := s.Call("GET", "/portal/me", r.Data()["token"].(string), nil); g.Status != 200 {
		t.Fatalf("refreshed token: %d %s", g.Status, g.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/refresh", "", map[string]any{"refresh_token": refresh}), 401, "ERR_UNAUTHORIZED", "invalid_refresh_token")
	webtest.ExpectErr(t, s.Call("POST", "/user/refresh", "", map[string]any{"refresh_token": "p1.nope"}), 401, "ERR_UNAUTHORIZED", "invalid_refresh_token")

	// Disabled and deleted: distinct reasons, at login and for a live token.
	bobTok := webtest.PortalLogin(t, s, "bob", "radius-b")
	if r := s.Call("POST", "/users/bulk-disable", s.Tok, map[string]any{"ids": []int64{radiusOnly}}); r.Status != 200 {
		t.Fatalf("disable: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "bob", "password": "radius-b"}), 401, "ERR_UNAUTHORIZED", "account_disabled")
	webtest.ExpectErr(t, s.Call("GET", "/portal/me", bobTok, nil), 401, "ERR_UNAUTHORIZED", "account_disabled")
	// A wrong password still says only that (no status leak before the password).
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "bob", "password": "wrong"}), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	s.Exec(`UPDATE users SET deleted_at = '2026-01-01 00:00:00' WHERE id = ?`, withPortal)
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "alice", "password": "Portal-pass-1"}), 401, "ERR_UNAUTHORIZED", "account_deleted")

	// The portal switched off: 503 site_offline at login and for a live
	// token; config still answers.
	carol := s.User("", map[string]any{"username": "carol", "password": "radius-c"})
	carolTok := webtest.PortalLogin(t, s, "carol", "radius-c")
	s.Exec(`UPDATE settings SET value = 'false' WHERE key = 'portal_enabled'`)
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "carol", "password": "radius-c"}), 503, "ERR_UNAVAILABLE", "site_offline")
	webtest.ExpectErr(t, s.Call("GET", "/user/me", carolTok, nil), 503, "ERR_UNAVAILABLE", "site_offline")
	if c := s.Call("GET", "/portal/config", "", nil); c.Status != 200 || c.Data()["portal_enabled"] != false || c.Data()["tenant_name"] != "ACME" ||
		c.Data()["currency"] != "USD" || c.Data()["default_language"] != "en" {
		t.Fatalf("config: %d %s", c.Status, c.Body)
	}
	s.Exec(`UPDATE settings SET value = 'true' WHERE key = 'portal_enabled'`)
	if r := s.Call("GET", "/portal/me", carolTok, nil); r.Status != 200 || ptNum(r.Data()["id"]) != float64(carol) {
		t.Fatalf("back online: %d %s", r.Status, r.Body)
	}
}

func TestPortalTokensStayOnTheirSide(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "alice", "password": "radius-a"})
	tok := webtest.PortalLogin(t, s, "alice", "radius-a")
	// A portal token on the staff API.
	webtest.ExpectErr(t, s.Call("GET", "/auth/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	webtest.ExpectErr(t, s.Call("GET", "/users", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	// A staff token on the portal.
	webtest.ExpectErr(t, s.Call("GET", "/portal/me", s.Tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	webtest.ExpectErr(t, s.Call("GET", "/user/ledger", s.Tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
	webtest.ExpectErr(t, s.Call("GET", "/portal/me", "", nil), 401, "ERR_UNAUTHORIZED", "missing_bearer_token")
	// A portal token of another tenant.
	s.Tenant("other")
	webtest.ExpectErr(t, s.Do("GET", "other", "/api/v1/portal/me", tok, nil), 401, "ERR_UNAUTHORIZED", "invalid_token")
}

// TestPortalInvoiceRenderData: an invoice's render data names the seller,
// the buyer and the billed line, under both prefixes; another
// subscriber's invoice is the 404 of a missing one.
func TestPortalInvoiceRenderData(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	alice := s.User("", map[string]any{"username": "alice", "password": "radius-a", "firstname": "Alice", "email": "alice@example.com"})
	s.User("", map[string]any{"username": "bob", "password": "radius-b"})
	if r := s.Call("POST", fmt.Sprintf("/users/%d/deposit", alice), s.Tok, map[string]any{"amount": 12.5, "request_id": "inv-1", "issue_invoice": true, "note": "cash at the office"}); r.Status != 200 {
		t.Fatalf("deposit: %s", r.Body)
	}
	tok, bob := webtest.PortalLogin(t, s, "alice", "radius-a"), webtest.PortalLogin(t, s, "bob", "radius-b")
	list := s.Call("GET", "/portal/invoices", tok, nil)
	if len(list.List()) != 1 {
		t.Fatalf("invoices: %s", list.Body)
	}
	id := int64(list.List()[0].(map[string]any)["id"].(float64))
	for _, pre := range []string{"/portal", "/user"} {
		r := s.Call("GET", fmt.Sprintf("%s/invoices/%d/render-data", pre, id), tok, nil)
		d := r.Data()
		buyer, _ := d["buyer"].(map[string]any)
		lines, _ := d["lines"].([]any)
		if r.Status != 200 || d["total"] != 12.5 || d["currency"] != "USD" || buyer["username"] != "alice" || buyer["email"] != "alice@example.com" ||
			len(lines) != 1 || lines[0].(map[string]any)["note"] != "cash at the office" || d["seller"].(map[string]any)["slug"] != "acme" {
			t.Fatalf("%s render data: %d %s", pre, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/portal/invoices/%d/render-data", id), bob, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, s.Call("GET", "/portal/invoices/999999/render-data", tok, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestPortalMeAccountLedgerAndTwin(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Home", "price": 10, "duration_days": 30, "bytes_limit": 5000})
	id := s.User("", map[string]any{"username": "alice", "password": "radius-a", "profile_id": plan, "email": "a@x.example",
		"firstname": "Alice", "debt_limit": 0})
	other := s.User("", map[string]any{"username": "bob", "password": "radius-b"})
	tok := webtest.PortalLogin(t, s, "alice", "radius-a")

	me := s.Call("GET", "/portal/me", tok, nil)
	d := me.Data()
	if me.Status != 200 || ptNum(d["id"]) != float64(id) || d["username"] != "alice" || d["email"] != "a@x.example" || d["firstname"] != "Alice" ||
		d["profile_name"] != "Home" || d["expiration"] != nil || ptNum(d["balance"]) != 0 || ptNum(d["debt"]) != 0 {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	if st := d["status"].(map[string]any); st["expired"] != true || st["enabled"] != true || st["can_connect"] != false {
		t.Fatalf("status: %s", me.Body)
	}
	// The /user twin answers the same.
	if tw := s.Call("GET", "/user/me", tok, nil); tw.Status != 200 || string(tw.Body) != string(me.Body) {
		t.Fatalf("twin differs:\n%s\n%s", me.Body, tw.Body)
	}

	// PATCH /account: contact fields only; unknown fields do not reach other columns.
	r := s.Call("PATCH", "/portal/account", tok, map[string]any{"phone": "+100", "lastname": "Liddell", "email": "new@x.example"})
	if r.Status != 200 || r.Data()["phone"] != "+100" || r.Data()["lastname"] != "Liddell" || r.Data()["email"] != "new@x.example" {
		t.Fatalf("account: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("PATCH", "/portal/account", tok, map[string]any{"email": "nope"}), 400, "ERR_VALIDATION", "invalid_email")
	s.Call("PATCH", "/portal/account", tok, map[string]any{"balance": 1000, "username": "mallory"})
	if s.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != 0 || s.Scalar(`SELECT COUNT(*) FROM users WHERE username = 'alice'`) != 1 {
		t.Fatal("account patch reached other columns")
	}

	// Ledger after a staff deposit; invoices.
	if r := s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 25.5, "request_id": "dep-1", "issue_invoice": true}); r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	s.Call("POST", fmt.Sprintf("/users/%d/deposit", other), s.Tok, map[string]any{"amount": 7, "request_id": "dep-2", "issue_invoice": true})
	l := s.Call("GET", "/portal/ledger", tok, nil)
	if l.Status != 200 || len(l.List()) != 1 || ptNum(l.Meta()["total"]) != 1 {
		t.Fatalf("ledger: %d %s", l.Status, l.Body)
	}
	row := l.List()[0].(map[string]any)
	if row["kind"] != "deposit" || ptNum(row["amount"]) != 25.5 || ptNum(row["balance_after"]) != 25.5 {
		t.Fatalf("ledger row: %s", l.Body)
	}
	if _, ok := row["actor_id"]; ok {
		t.Fatalf("ledger shows staff identity: %s", l.Body)
	}
	inv := s.Call("GET", "/user/invoices", tok, nil)
	if inv.Status != 200 || len(inv.List()) != 1 {
		t.Fatalf("invoices: %d %s", inv.Status, inv.Body)
	}
	invID := int64(ptNum(inv.List()[0].(map[string]any)["id"]))
	if g := s.Call("GET", fmt.Sprintf("/portal/invoices/%d", invID), tok, nil); g.Status != 200 || ptNum(g.Data()["amount"]) != 25.5 {
		t.Fatalf("invoice: %d %s", g.Status, g.Body)
	}
	otherInv := s.Scalar(`SELECT id FROM user_invoices WHERE user_id = ?`, other)
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/portal/invoices/%d", otherInv), tok, nil), 404, "ERR_NOT_FOUND", "not_found")

	// Credentials: the caller's own RADIUS login.
	if c := s.Call("GET", "/portal/credentials", tok, nil); c.Status != 200 || c.Data()["username"] != "alice" || c.Data()["password"] != "radius-a" {
		t.Fatalf("credentials: %d %s", c.Status, c.Body)
	}
	// Profiles: enabled plans with price and duration.
	s.Plan(map[string]any{"name": "Off", "price": 1, "enabled": false})
	p := s.Call("GET", "/portal/profiles", tok, nil)
	if p.Status != 200 || len(p.List()) != 1 || p.List()[0].(map[string]any)["name"] != "Home" || p.List()[0].(map[string]any)["current"] != true ||
		ptNum(p.List()[0].(map[string]any)["duration_days"]) != 30 {
		t.Fatalf("profiles: %d %s", p.Status, p.Body)
	}
	// Sessions from radius_sessions; usage from the rollups accounting writes with them.
	s.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time, stop_time, session_time, input_octets, output_octets)
		VALUES ('a1', ?, 'alice', datetime('now','-1 hour'), datetime('now'), 3600, 100, 200), ('b1', ?, 'bob', datetime('now'), NULL, 5, 1, 1)`, id, other)
	s.Exec(`INSERT INTO usage_rollups(user_id, grain, bucket, input_octets, output_octets, seconds, sessions)
		VALUES (?, 'd', unixepoch('now', 'start of day'), 100, 200, 3600, 1), (?, 'd', unixepoch('now', 'start of day'), 1, 1, 5, 1)`, id, other)
	ss := s.Call("GET", "/portal/sessions", tok, nil)
	if ss.Status != 200 || len(ss.List()) != 1 || ptNum(ss.List()[0].(map[string]any)["input_octets"]) != 100 {
		t.Fatalf("sessions: %d %s", ss.Status, ss.Body)
	}
	u := s.Call("GET", "/portal/usage", tok, nil)
	days, _ := u.Data()["days"].([]any)
	if u.Status != 200 || len(days) != 30 {
		t.Fatalf("usage: %d %s", u.Status, u.Body)
	}
	var sum float64
	for _, dd := range days {
		sum += ptNum(dd.(map[string]any)["bytes"])
	}
	if sum != 300 {
		t.Fatalf("usage days sum %v: %s", sum, u.Body)
	}
	// Push tokens.
	if r := s.Call("POST", "/portal/push-tokens", tok, map[string]any{"token": "dev-1", "platform": "android"}); r.Status != 201 {
		t.Fatalf("push add: %d %s", r.Status, r.Body)
	}
	if r := s.Call("DELETE", "/user/push-tokens", tok, map[string]any{"token": "dev-1"}); r.Status != 200 || r.Data()["deleted"] != true {
		t.Fatalf("push delete: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/portal/push-tokens", tok, map[string]any{}), 400, "ERR_VALIDATION", "token_required")
}

func TestPortalRenewAndQuota(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Home", "price": 10, "duration_days": 30, "bytes_limit": 5000})
	id := s.User("", map[string]any{"username": "alice", "password": "radius-a", "profile_id": plan, "debt_limit": 0})
	tok := webtest.PortalLogin(t, s, "alice", "radius-a")

	webtest.ExpectErr(t, s.Call("POST", "/portal/renew", tok, map[string]any{}), 400, "ERR_VALIDATION", "request_id_required")
	r := s.Call("POST", "/portal/renew", tok, map[string]any{"request_id": "renew-0"})
	webtest.ExpectErr(t, r, 409, "ERR_CONFLICT", "insufficient_balance")
	s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 15, "request_id": "dep-1"})

	r = s.Call("POST", "/portal/renew", tok, map[string]any{"request_id": "renew-1"})
	if r.Status != 200 || r.Data()["paid_by"] != "subscriber" || ptNum(r.Data()["price"]) != 10 || ptNum(r.Data()["balance"]) != 5 || r.Data()["replay"] != false {
		t.Fatalf("renew: %d %s", r.Status, r.Body)
	}
	exp1 := r.Data()["expiration"]
	rep := s.Call("POST", "/user/renew", tok, map[string]any{"request_id": "renew-1"})
	if rep.Status != 200 || rep.Data()["replay"] != true || rep.Data()["expiration"] != exp1 {
		t.Fatalf("replay: %d %s", rep.Status, rep.Body)
	}
	if s.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, id) != 1 || s.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != 5000 {
		t.Fatal("replay charged again")
	}
	// Balance 5 < price 10 and no credit.
	webtest.ExpectErr(t, s.Call("POST", "/portal/renew", tok, map[string]any{"request_id": "renew-2"}), 409, "ERR_CONFLICT", "insufficient_balance")
	me := s.Call("GET", "/portal/me", tok, nil).Data()
	if me["expiration"] != exp1 || me["status"].(map[string]any)["expired"] != false || ptNum(me["balance"]) != 5 {
		t.Fatalf("me after renew: %v", me)
	}
	l := s.Call("GET", "/portal/ledger", tok, nil)
	if len(l.List()) != 2 || l.List()[0].(map[string]any)["kind"] != "activation" || ptNum(l.List()[0].(map[string]any)["balance_after"]) != 5 {
		t.Fatalf("ledger newest first: %s", l.Body)
	}
	// Quota buckets: only the enforced dimension.
	s.Exec(`UPDATE users SET used_bytes = 1250 WHERE id = ?`, id)
	q := s.Call("GET", "/portal/quota-buckets", tok, nil)
	if q.Status != 200 || len(q.List()) != 1 {
		t.Fatalf("buckets: %d %s", q.Status, q.Body)
	}
	b := q.List()[0].(map[string]any)
	if b["dimension"] != "data" || ptNum(b["limit"]) != 5000 || ptNum(b["used"]) != 1250 || ptNum(b["remaining"]) != 3750 || ptNum(b["percent"]) != 25 {
		t.Fatalf("bucket: %s", q.Body)
	}
	u := s.Call("GET", "/portal/usage", tok, nil).Data()
	if ptNum(u["used_bytes"]) != 1250 || ptNum(u["bytes_percent"]) != 25 || u["seconds_percent"] != nil || u["period"].(map[string]any)["end"] != exp1 {
		t.Fatalf("usage: %v", u)
	}
}

func TestPortalPasswordRevokesOtherSessions(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "alice", "password": "radius-a"})
	a := webtest.PortalLogin(t, s, "alice", "radius-a")
	b := webtest.PortalLogin(t, s, "alice", "radius-a")
	webtest.ExpectErr(t, s.Call("POST", "/portal/password", a, map[string]any{"current_password": "nope", "new_password": "New-pass-12"}), 400, "ERR_VALIDATION", "invalid_password")
	webtest.ExpectErr(t, s.Call("POST", "/portal/password", a, map[string]any{"current_password": "radius-a", "new_password": "short"}), 400, "ERR_VALIDATION", "password_too_short")
	if r := s.Call("POST", "/portal/password", a, map[string]any{"current_password": "radius-a", "new_password": "New-pass-12"}); r.Status != 200 {
		t.Fatalf("password: %d %s", r.Status, r.Body)
	}
	if r := s.Call("GET", "/portal/me", a, nil); r.Status != 200 {
		t.Fatalf("own session: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("GET", "/portal/me", b, nil), 401, "ERR_UNAUTHORIZED", "session_revoked")
	// The portal password now signs in, the RADIUS one no longer does.
	webtest.PortalLogin(t, s, "alice", "New-pass-12")
	webtest.ExpectErr(t, s.Call("POST", "/portal/login", "", map[string]any{"username": "alice", "password": "radius-a"}), 401, "ERR_UNAUTHORIZED", "invalid_credentials")
	// The RADIUS password itself is unchanged.
	if c := s.Call("GET", "/portal/credentials", a, nil); c.Data()["password"] != "radius-a" {
		t.Fatalf("credentials: %s", c.Body)
	}
}

func TestPortalRedeemRefillCard(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	webtest.StartJobs(t, s.Kit)
	id := s.User("", map[string]any{"username": "alice", "password": "radius-a"})
	tok := webtest.PortalLogin(t, s, "alice", "radius-a")
	series := webtest.CreateSeries(t, s.Kit, s.Tok, map[string]any{"type": "refill", "quantity": 2, "face_value": 10, "expiration": webtest.NextYear, "request_id": "gen-1"})
	codes := webtest.SeriesCodes(t, s.Kit, s.Tok, series)
	r := s.Call("POST", "/portal/cards/redeem", tok, map[string]any{"code": codes[0], "request_id": "red-1"})
	if r.Status != 200 || ptNum(r.Data()["user_id"]) != float64(id) {
		t.Fatalf("redeem: %d %s", r.Status, r.Body)
	}
	if me := s.Call("GET", "/portal/me", tok, nil).Data(); ptNum(me["balance"]) != 10 {
		t.Fatalf("balance after refill: %v", me)
	}
	if rep := s.Call("POST", "/user/cards/redeem", tok, map[string]any{"code": codes[0], "request_id": "red-1"}); rep.Status != 200 ||
		s.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != 10000 {
		t.Fatalf("replay: %d %s", rep.Status, rep.Body)
	}
	// An ignored user_id cannot redirect the card to someone else.
	other := s.User("", map[string]any{"username": "bob", "password": "radius-b"})
	s.Call("POST", "/portal/cards/redeem", tok, map[string]any{"code": codes[1], "request_id": "red-2", "user_id": other})
	if s.Scalar(`SELECT balance FROM users WHERE id = ?`, other) != 0 {
		t.Fatal("redeemed onto another subscriber")
	}
}

func TestPortalPerSubscriberBucket(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.User("", map[string]any{"username": "alice", "password": "radius-a"})
	s.User("", map[string]any{"username": "bob", "password": "radius-b"})
	// A limiter without windows: 121 requests must not straddle two
	// minutes of the real one.
	s.App.Limiter = newIDStickyLimiter()
	a := webtest.PortalLogin(t, s, "alice", "radius-a")
	b := webtest.PortalLogin(t, s, "bob", "radius-b")
	for i := range 120 {
		if r := s.Call("GET", "/portal/me", a, nil); r.Status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, s.Call("GET", "/user/quota-buckets", a, nil), 429, "ERR_RATE_LIMITED", "rate_limited")
	// Another subscriber of the same tenant has its own bucket.
	if r := s.Call("GET", "/portal/me", b, nil); r.Status != 200 {
		t.Fatalf("bob: %d %s", r.Status, r.Body)
	}
}

// POST /users/{id}/login-as hands staff a borrowed portal session for a
// subscriber in scope; API tokens may use it; the session records who
// borrowed it.
func TestUsersLoginAsBorrowsAPortalSession(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	id := s.User("", map[string]any{"username": "carol", "password": "radius-c"})
	r := s.Call("POST", fmt.Sprintf("/users/%d/login-as", id), s.Tok, nil)
	if r.Status != 200 || ptNum(r.Data()["user_id"]) != float64(id) || r.Data()["refresh_token"] != nil {
		t.Fatalf("login-as: %d %s", r.Status, r.Body)
	}
	if me := s.Call("GET", "/portal/me", r.Data()["token"].(string), nil); me.Status != 200 || me.Data()["username"] != "carol" {
		t.Fatalf("borrowed token on the portal: %d %s", me.Status, me.Body)
	}
	if by := s.Scalar(`SELECT borrowed_by FROM portal_sessions WHERE user_id = ?`, id); by != s.OwnerID {
		t.Fatalf("borrowed_by %d, want %d", by, s.OwnerID)
	}
	// An API token may borrow too.
	tok := s.Call("POST", "/developer/api-tokens", s.Tok, map[string]any{"name": "helpdesk", "full_access": true}).Data()["token"].(string)
	if r := s.Call("POST", fmt.Sprintf("/users/%d/login-as", id), tok, nil); r.Status != 200 {
		t.Fatalf("api token: %d %s", r.Status, r.Body)
	}
	// Outside the subtree: the same 404 as a missing subscriber.
	_, res := s.Manager(s.OwnerID, "helpdesk-res", "prm_users_login_as", "prm_users_index")
	suSame(t, s.Call("POST", fmt.Sprintf("/users/%d/login-as", id), res, nil), s.Call("POST", "/users/999999/login-as", res, nil))
	// A disabled subscriber cannot be borrowed.
	s.Exec(`UPDATE users SET enabled = 0 WHERE id = ?`, id)
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/users/%d/login-as", id), s.Tok, nil), 409, "ERR_CONFLICT", "account_disabled")
}
