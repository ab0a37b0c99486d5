package web_test

// Tests of the subscribers area through HTTP. Helpers carry the prefix su
// to stay clear of other areas' helpers in package web.

import (
	"bytes"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/dataimport"
	"xr/app/identity"
	"xr/internal/webtest"
)

// ids of a list answer, in order.
func suIDs(r webtest.Resp) []int64 {
	var out []int64
	for _, row := range r.List() {
		out = append(out, int64(row.(map[string]any)["id"].(float64)))
	}
	return out
}

func suSorted(ids ...int64) string {
	c := append([]int64{}, ids...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return fmt.Sprint(c)
}

func suKeys(m map[string]any) string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return strings.Join(k, ",")
}

// suSame asserts two error answers are identical but for request_id.
func suSame(t testing.TB, a, b webtest.Resp) {
	t.Helper()
	strip := func(r webtest.Resp) []byte {
		e, _ := r.JSON["error"].(map[string]any)
		id, _ := e["request_id"].(string)
		return bytes.Replace(r.Body, []byte(`"request_id":"`+id+`"`), nil, 1)
	}
	if a.Status != b.Status || !bytes.Equal(strip(a), strip(b)) {
		t.Fatalf("answers differ:\n%d %s\n%d %s", a.Status, a.Body, b.Status, b.Body)
	}
}

func TestUsersCreateGetAndRowShapes(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Home", "price": 10, "duration_days": 30, "bytes_limit": 5000})
	r := s.Call("POST", "/users", s.Tok, map[string]any{"username": "alice", "password": "pw", "profile_id": plan, "debt_limit": 0,
		"email": "alice@x.example", "portal_password": "Portal-pass-1", "expiration": "2030-01-02"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if got := suKeys(r.Data()); got != "balance,created_at,debt,enabled,id,parent_id,profile_id,tenant_id,username" {
		t.Fatalf("create fields: %s", got)
	}
	id := int64(r.Data()["id"].(float64))
	if r.Data()["parent_id"].(float64) != float64(s.OwnerID) || r.Data()["balance"].(float64) != 0 || r.Data()["enabled"] != true {
		t.Fatalf("%s", r.Body)
	}
	// Identity only: no money, no quota, no activation.
	if s.Scalar(`SELECT COUNT(*) FROM user_ledger`) != 0 || s.Scalar(`SELECT COUNT(*) FROM user_activations`) != 0 ||
		s.Scalar(`SELECT bytes_limit FROM users WHERE id = ?`, id) != 0 {
		t.Fatal("create did more than identity")
	}
	if s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.created'`) != 1 {
		t.Fatal("no user.created in the outbox")
	}
	// The RADIUS password is recoverable, the portal one hashed.
	var sealed []byte
	var portal string
	s.Ten.DB.R.QueryRow(`SELECT password_sealed, portal_password_hash FROM users WHERE id = ?`, id).Scan(&sealed, &portal)
	if pw, err := s.App.Keys.Open(sealed); err != nil || string(pw) != "pw" || !strings.HasPrefix(portal, "$argon2id$") {
		t.Fatalf("passwords: %q %v %q", pw, err, portal)
	}

	list := s.Call("GET", "/users", s.Tok, nil)
	row := list.List()[0].(map[string]any)
	want := "balance,bytes_remaining,created_at,debt,email,enabled,enforces_bytes,enforces_seconds,expiration,id,mac_lock_enabled,mac_locked_addrs," +
		"parent_id,parent_username,plan_bytes_limit,profile_id,profile_name,status,tenant_id,used_bytes,username"
	if got := suKeys(row); got != want {
		t.Fatalf("list row fields:\n%s\nwant\n%s", got, want)
	}
	if got := suKeys(row["status"].(map[string]any)); got != "can_connect,deleted,enabled,expired,fup,have_quota,online" {
		t.Fatalf("status: %s", got)
	}
	if row["profile_name"] != "Home" || row["parent_username"] != "owner" || row["expiration"] != "2030-01-02 00:00:00" {
		t.Fatalf("%v", row)
	}
	one := s.Call("GET", fmt.Sprintf("/users/%d", id), s.Tok, nil).Data()
	if tok, _ := one["lookup_token"].(string); len(tok) < 20 {
		t.Fatalf("no lookup_token: %v", one)
	}
	if _, ok := one["custom_fields"]; !ok || one["debt_limit"].(float64) != 0 || one["has_portal_password"] != true {
		t.Fatalf("%v", one)
	}
	// resolve, with and without the QR prefix
	for _, code := range []string{one["lookup_token"].(string), "xr:u:" + one["lookup_token"].(string)} {
		rr := s.Call("GET", "/users/resolve?code="+url.QueryEscape(code), s.Tok, nil)
		if rr.Status != 200 || rr.Data()["id"].(float64) != float64(id) || rr.Data()["lookup_token"] == nil {
			t.Fatalf("resolve: %d %s", rr.Status, rr.Body)
		}
	}
	webtest.ExpectErr(t, s.Call("GET", "/users/resolve?code=nope", s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, s.Call("GET", "/users/resolve", s.Tok, nil), 400, "ERR_VALIDATION", "code_required")
}

func TestUsersCreateRefusals(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	other, _ := s.Manager(s.OwnerID, "other")
	_, rtok := s.Manager(s.OwnerID, "res", webtest.ResellerCodes...)
	closed := s.Plan(map[string]any{"name": "Closed", "all_managers": false})
	s.User("", map[string]any{"username": "taken"})
	cases := []struct {
		tok    string
		body   map[string]any
		status int
		reason string
		field  string
	}{
		{s.Tok, map[string]any{"password": "x"}, 400, "username_required", "username"},
		{s.Tok, map[string]any{"username": "a b", "password": "x"}, 400, "invalid_username", "username"},
		{s.Tok, map[string]any{"username": "nopw"}, 400, "password_required", "password"},
		{s.Tok, map[string]any{"username": "TAKEN", "password": "x"}, 409, "username_taken", "username"},
		{s.Tok, map[string]any{"username": "p1", "password": "x", "profile_id": 999}, 400, "profile_not_assignable", "profile_id"},
		{rtok, map[string]any{"username": "p2", "password": "x", "profile_id": closed}, 400, "profile_not_assignable", "profile_id"},
		{rtok, map[string]any{"username": "p3", "password": "x", "parent_id": other}, 400, "invalid_parent_id", "parent_id"},
		{s.Tok, map[string]any{"username": "p4", "password": "x", "parent_id": 999}, 400, "invalid_parent_id", "parent_id"},
		{s.Tok, map[string]any{"username": "p5", "password": "x", "debt_limit": -1}, 400, "invalid_debt_limit", "debt_limit"},
		{s.Tok, map[string]any{"username": "p6", "password": "x", "debt_limit": 1.0005}, 400, "too_many_decimals", "debt_limit"},
		{s.Tok, map[string]any{"username": "p7", "password": "x", "expiration": "2030-13-01"}, 400, "invalid_value", "expiration"},
		{s.Tok, map[string]any{"username": "p8", "password": "x", "email": "nope"}, 400, "invalid_email", "email"},
		{s.Tok, map[string]any{"username": "p9", "password": "x", "static_ip": "1.2.3"}, 400, "invalid_ip", "static_ip"},
		{s.Tok, map[string]any{"username": "pa", "password": "x", "mac_locked_addrs": []string{"zz"}}, 400, "invalid_mac", "mac_locked_addrs"},
		{s.Tok, map[string]any{"username": "pb", "password": "x", "portal_password": "short"}, 400, "password_too_short", "portal_password"},
		{s.Tok, map[string]any{"username": "pc", "password": "x", "custom_fields": map[string]any{"x": 1}}, 400, "custom_field_unknown", "custom_fields.x"},
	}
	for _, c := range cases {
		r := s.Call("POST", "/users", c.tok, c.body)
		if r.Status != c.status || r.Reason() != c.reason || r.Field() != c.field {
			t.Errorf("%v: got %d %s", c.body, r.Status, r.Body)
		}
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM users`); n != 1 {
		t.Fatalf("refusals stored %d users", n-1)
	}
	// The reseller's own subscribers go under it by default.
	rr := s.Call("POST", "/users", rtok, map[string]any{"username": "mine", "password": "x"})
	if rr.Status != 201 || rr.Data()["parent_id"].(float64) == float64(s.OwnerID) {
		t.Fatalf("%d %s", rr.Status, rr.Body)
	}
}

func TestUsersLicenceCap(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	one := int64(1)
	if _, err := s.App.UpdateTenant(webtest.Background, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: one}}); err != nil {
		t.Fatal(err)
	}
	s.Ten = s.Acquire("acme")
	s.User("", map[string]any{"username": "first"})
	r := s.Call("POST", "/users", s.Tok, map[string]any{"username": "second", "password": "x"})
	webtest.ExpectErr(t, r, 403, "ERR_LICENSE_BLOCKED", "license_locked")
	if s.Scalar(`SELECT COUNT(*) FROM users`) != 1 {
		t.Fatal("stored past the cap")
	}
	// At the cap the tenant still works; the list answers.
	if r := s.Call("GET", "/users", s.Tok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// suSeed makes five subscribers with distinct values in every searched
// column (no digit 1-9 appears in any text, so a numeric q matches ids only).
type suSeed struct {
	alpha, bravo, charlie, delta, echo int64
	p1, p2                             int64
	res                                int64
	resTok                             string
}

func seed(s *webtest.Acme) suSeed {
	s.T.Helper()
	var d suSeed
	d.res, d.resTok = s.Manager(s.OwnerID, "resa", webtest.ResellerCodes...)
	d.p1 = s.Plan(map[string]any{"name": "P-one"})
	d.p2 = s.Plan(map[string]any{"name": "P-two"})
	d.alpha = s.User("", map[string]any{"username": "alpha", "email": "alpha@zed.example", "firstname": "Zoe", "lastname": "Quill",
		"phone": "+0000-0000", "contract_id": "CT-XY", "national_id": "NAT-QQ", "static_ip": "fd00::abc", "profile_id": d.p1})
	d.bravo = s.User(d.resTok, map[string]any{"username": "bravo", "email": "b@yak.example", "profile_id": d.p2})
	d.charlie = s.User("", map[string]any{"username": "charlie", "email": "c@yak.example"})
	d.delta = s.User("", map[string]any{"username": "delta"})
	d.echo = s.User("", map[string]any{"username": "echo"})
	now := time.Now().UTC()
	s.Exec(`UPDATE users SET expiration = ? WHERE id = ?`, app.FormatTime(now.Add(10*24*time.Hour)), d.alpha)
	s.Exec(`UPDATE users SET expiration = ?, enabled = 0 WHERE id = ?`, app.FormatTime(now.Add(-time.Hour)), d.bravo)
	s.Exec(`UPDATE users SET expiration = ? WHERE id = ?`, app.FormatTime(now.Add(2*24*time.Hour)), d.charlie)
	s.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES ('s1', ?, 'charlie', ?)`, d.charlie, app.StampNow())
	s.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time, stop_time) VALUES ('s0', ?, 'alpha', ?, ?)`, d.alpha, app.StampNow(), app.StampNow())
	s.Exec(`UPDATE users SET deleted_at = ? WHERE id = ?`, app.StampNow(), d.delta)
	s.Exec(`UPDATE users SET created_at = '2020-01-01 00:00:00' WHERE id = ?`, d.echo)
	return d
}

func TestUsersListQAndFilters(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	d := seed(s)
	list := func(token, query string) []int64 {
		t.Helper()
		r := s.Call("GET", "/users?"+query, token, nil)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", query, r.Status, r.Body)
		}
		if int(r.Meta()["total"].(float64)) != len(r.List()) {
			t.Fatalf("%s: total %v for %d rows", query, r.Meta()["total"], len(r.List()))
		}
		return suIDs(r)
	}
	live := []int64{d.alpha, d.bravo, d.charlie, d.echo}
	cases := []struct {
		query string
		want  []int64
	}{
		{"", live},
		{"q=alph", []int64{d.alpha}},                       // username
		{"q=ZED.EX", []int64{d.alpha}},                     // email, any case
		{"q=zoe", []int64{d.alpha}},                        // first name
		{"q=quil", []int64{d.alpha}},                       // last name
		{"q=0000-00", []int64{d.alpha}},                    // phone
		{"q=CT-X", []int64{d.alpha}},                       // contract id
		{"q=nat-q", []int64{d.alpha}},                      // national id
		{"q=fd00::a", []int64{d.alpha}},                    // static IP
		{"q=yak", []int64{d.bravo, d.charlie}},             // several
		{"q=ch", []int64{d.charlie, d.echo}},               // two characters
		{"q=" + fmt.Sprint(d.charlie), []int64{d.charlie}}, // a number is also the exact id
		{"q=" + url.QueryEscape(`a"b%_`), nil},             // quotes and wildcards are literal
		{"filter[enabled]=true", []int64{d.alpha, d.charlie, d.echo}},
		{"filter[enabled]=false", []int64{d.bravo}},
		{"filter[expired]=true", []int64{d.bravo, d.echo}}, // echo was never activated
		{"filter[expired]=false", []int64{d.alpha, d.charlie}},
		{"filter[online]=true", []int64{d.charlie}},
		{"filter[online]=false", []int64{d.alpha, d.bravo, d.echo}},
		{"filter[profile_id]=" + fmt.Sprint(d.p1), []int64{d.alpha}},
		{"filter[parent_id]=" + fmt.Sprint(d.res), []int64{d.bravo}},
		{"filter[username_exact]=ALPHA", []int64{d.alpha}},
		{"filter[username_exact]=alp", nil},
		{"filter[expiring_within_days]=5", []int64{d.charlie}},
		{"filter[expiring_within_days]=30", []int64{d.alpha, d.charlie}},
		{"filter[created_from]=2021-01-01+00:00:00", []int64{d.alpha, d.bravo, d.charlie}},
		{"filter[deleted]=true", []int64{d.delta}},
		{"filter[nonsense]=1", live}, // unknown filters are ignored
		{"q=yak&filter[enabled]=true", []int64{d.charlie}},
	}
	for _, c := range cases {
		if got := list(s.Tok, c.query); suSorted(got...) != suSorted(c.want...) {
			t.Errorf("%q: got %v want %v", c.query, got, c.want)
		}
	}
	// Default order is newest first; sort and order apply.
	if got := list(s.Tok, ""); fmt.Sprint(got) != fmt.Sprint([]int64{d.echo, d.charlie, d.bravo, d.alpha}) {
		t.Errorf("default order %v", got)
	}
	if got := list(s.Tok, "sort=username&order=asc"); fmt.Sprint(got) != fmt.Sprint([]int64{d.alpha, d.bravo, d.charlie, d.echo}) {
		t.Errorf("username order %v", got)
	}
	// Paging: total over the whole set.
	r := s.Call("GET", "/users?page_size=2&page=2", s.Tok, nil)
	if m := r.Meta(); m["total"].(float64) != 4 || m["has_next"] != false || len(r.List()) != 2 {
		t.Errorf("page 2: %s", r.Body)
	}
	r = s.Call("GET", "/users?page_size=2&q=yak&page=5", s.Tok, nil)
	if m := r.Meta(); m["total"].(float64) != 2 || len(r.List()) != 0 {
		t.Errorf("page past a search: %s", r.Body)
	}
	// Malformed values of recognised filters are 400s naming the filter.
	for _, q := range []string{"filter[created_from]=yesterday", "filter[enabled]=maybe", "filter[profile_id]=x", "filter[expiring_within_days]=-1"} {
		r := s.Call("GET", "/users?"+q, s.Tok, nil)
		if r.Status != 400 || r.Reason() != "invalid_filter" || !strings.HasPrefix(r.Field(), "filter[") {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	// A reseller sees its subtree; parent_id cannot widen it.
	if got := list(d.resTok, ""); suSorted(got...) != suSorted(d.bravo) {
		t.Errorf("reseller list %v", got)
	}
	if got := list(d.resTok, "filter[parent_id]="+fmt.Sprint(s.OwnerID)); suSorted(got...) != suSorted(d.bravo) {
		t.Errorf("reseller parent_id outside scope %v", got)
	}
	if got := list(d.resTok, "q=alpha"); len(got) != 0 {
		t.Errorf("reseller searched outside its scope: %v", got)
	}
	// Computed status of a row.
	r = s.Call("GET", "/users?filter[online]=true", s.Tok, nil)
	st := r.List()[0].(map[string]any)["status"].(map[string]any)
	if st["online"] != true || st["expired"] != false || st["can_connect"] != true || st["have_quota"] != true {
		t.Errorf("status %v", st)
	}
	// Summary over the same scope.
	sum := s.Call("GET", "/users/summary", s.Tok, nil).Data()
	if sum["total"].(float64) != 4 || sum["online"].(float64) != 1 || sum["expired"].(float64) != 2 || sum["disabled"].(float64) != 1 ||
		sum["deleted"].(float64) != 1 || sum["expiring_7_days"].(float64) != 1 {
		t.Errorf("summary %v", sum)
	}
	if rs := s.Call("GET", "/users/summary", d.resTok, nil).Data(); rs["total"].(float64) != 1 {
		t.Errorf("reseller summary %v", rs)
	}
}

func TestUsersScopeAnswersLikeMissing(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	d := seed(s)
	// The reseller's outside subscriber (alpha) and a missing id answer the
	// same bytes on every single-record route.
	money := map[string]any{"amount": 1}
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"GET", "/users/%d", nil}, {"PATCH", "/users/%d", map[string]any{"email": "x@y.example"}}, {"GET", "/users/%d/ledger", nil}, {"POST", "/users/%d/deposit", money},
		{"POST", "/users/%d/withdraw", money}, {"POST", "/users/%d/activation", nil}, {"POST", "/users/%d/refund-activation", nil},
		{"POST", "/users/%d/pay-debt", money}, {"POST", "/users/%d/disable", nil}, {"DELETE", "/users/%d", nil},
	} {
		body := map[string]any{"request_id": "scope-" + c.path}
		for k, v := range c.body {
			body[k] = v
		}
		out := s.Call(c.method, fmt.Sprintf(c.path, d.alpha), d.resTok, body)
		missing := s.Call(c.method, fmt.Sprintf(c.path, 987654), d.resTok, body)
		webtest.ExpectErr(t, out, 404, "ERR_NOT_FOUND", "not_found")
		suSame(t, out, missing)
	}
	if s.Scalar(`SELECT COUNT(*) FROM idempotency`) != 0 || s.Scalar(`SELECT email = 'alpha@zed.example' FROM users WHERE id = ?`, d.alpha) != 1 {
		t.Fatal("an out-of-scope call changed something")
	}
	// Inside the scope they work.
	if r := s.Call("GET", fmt.Sprintf("/users/%d", d.bravo), d.resTok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// A non-integer id is the same 404.
	webtest.ExpectErr(t, s.Call("GET", "/users/abc", d.resTok, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestUsersMoneyOperations(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Month", "price": 10, "duration_days": 30, "bytes_limit": 1000})
	u := s.User("", map[string]any{"username": "payer", "profile_id": plan, "debt_limit": 5})
	v := s.User("", map[string]any{"username": "other", "profile_id": plan})
	path := func(op string) string { return fmt.Sprintf("/users/%d/%s", u, op) }

	// deposit: validation, fresh, replay, conflict
	for _, c := range []struct {
		body   map[string]any
		reason string
	}{
		{map[string]any{"amount": 5}, "request_id_required"},
		{map[string]any{"amount": 5, "request_id": strings.Repeat("k", 256)}, "request_id_too_long"},
		{map[string]any{"amount": 5, "request_id": "a|b"}, "request_id_reserved"},
		{map[string]any{"amount": 5, "request_id": "xr-mine"}, "request_id_reserved"},
		{map[string]any{"request_id": "d1"}, "amount_required"},
		{map[string]any{"amount": -5, "request_id": "d1"}, "amount_must_be_positive"},
		{map[string]any{"amount": 1.0001, "request_id": "d1"}, "too_many_decimals"},
		{map[string]any{"amount": "5", "request_id": "d1"}, "invalid_type"},
	} {
		r := s.Call("POST", path("deposit"), s.Tok, c.body)
		if r.Status != 400 || r.Reason() != c.reason {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
		}
	}
	r := s.Call("POST", path("deposit"), s.Tok, map[string]any{"amount": 12.5, "request_id": "d1"})
	if r.Status != 200 || r.Data()["replay"] != false || r.Data()["balance"].(float64) != 12.5 || r.Data()["invoice_no"] != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r2 := s.Call("POST", path("deposit"), s.Tok, map[string]any{"amount": 12.5, "request_id": "d1"})
	if r2.Status != 200 || r2.Data()["replay"] != true || r2.Data()["ledger_id"] != r.Data()["ledger_id"] || r2.Data()["balance"].(float64) != 12.5 {
		t.Fatalf("replay %d %s", r2.Status, r2.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/users/%d/deposit", v), s.Tok, map[string]any{"amount": 1, "request_id": "d1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	webtest.ExpectErr(t, s.Call("POST", path("withdraw"), s.Tok, map[string]any{"amount": 1, "request_id": "d1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	inv := s.Call("POST", path("deposit"), s.Tok, map[string]any{"amount": 1, "request_id": "d2", "issue_invoice": true})
	if no, _ := inv.Data()["invoice_no"].(string); no == "" || s.Scalar(`SELECT COUNT(*) FROM user_invoices`) != 1 {
		t.Fatalf("invoice: %s", inv.Body)
	}
	if s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'payment.deposit'`) != 2 {
		t.Fatal("payment.deposit events")
	}
	// balance 13.5: withdraw beyond it is refused and stores nothing
	keys := s.Scalar(`SELECT COUNT(*) FROM idempotency`)
	webtest.ExpectErr(t, s.Call("POST", path("withdraw"), s.Tok, map[string]any{"amount": 14, "request_id": "w1"}), 409, "ERR_CONFLICT", "insufficient_balance")
	webtest.ExpectErr(t, s.Call("POST", path("pay-debt"), s.Tok, map[string]any{"request_id": "p1"}), 409, "ERR_CONFLICT", "no_debt")
	if s.Scalar(`SELECT COUNT(*) FROM idempotency`) != keys {
		t.Fatal("a refusal stored its key")
	}
	if w := s.Call("POST", path("withdraw"), s.Tok, map[string]any{"amount": 3.5, "request_id": "w1"}); w.Data()["balance"].(float64) != 10 || w.Data()["amount"].(float64) != -3.5 {
		t.Fatalf("withdraw %s", w.Body)
	}
	// activation: 10 of 10; then again within debt_limit 5? 0-10 = -10 < -5: refused.
	a := s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a1"})
	if a.Status != 200 || a.Data()["replay"] != false || a.Data()["balance"].(float64) != 0 || a.Data()["paid_by"] != "subscriber" {
		t.Fatalf("activation %d %s", a.Status, a.Body)
	}
	if a2 := s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a1"}); a2.Data()["replay"] != true || a2.Data()["activation_id"] != a.Data()["activation_id"] {
		t.Fatalf("activation replay %s", a2.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/users/%d/activation", v), s.Tok, map[string]any{"request_id": "a1"}), 409, "ERR_CONFLICT", "activation_request_conflict")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/users/%d/activation", v), s.Tok, map[string]any{"request_id": "d2"}), 409, "ERR_CONFLICT", "activation_request_conflict")
	acts := s.Scalar(`SELECT COUNT(*) FROM user_activations`)
	webtest.ExpectErr(t, s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a2"}), 409, "ERR_CONFLICT", "insufficient_balance")
	webtest.ExpectErr(t, s.Call("POST", path("activation"), s.Tok, map[string]any{}), 400, "ERR_VALIDATION", "request_id_required")
	if s.Scalar(`SELECT COUNT(*) FROM user_activations`) != acts {
		t.Fatal("refused activation stored a row")
	}
	// refund the activation: money and time back
	rf := s.Call("POST", path("refund-activation"), s.Tok, map[string]any{"request_id": "r1"})
	if rf.Status != 200 || rf.Data()["refunded"].(float64) != 10 || rf.Data()["balance"].(float64) != 10 {
		t.Fatalf("refund %d %s", rf.Status, rf.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", path("refund-activation"), s.Tok, map[string]any{"request_id": "r2"}), 409, "ERR_CONFLICT", "activation_already_refunded")
	// pay-debt: into debt by withdrawing? no: withdraw never overdraws. Use an activation on credit.
	s.Exec(`UPDATE users SET debt_limit = NULL WHERE id = ?`, u)
	s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a3"})
	s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a4"}) // balance -10
	webtest.ExpectErr(t, s.Call("POST", path("pay-debt"), s.Tok, map[string]any{"request_id": "p2", "amount": 11}), 400, "ERR_VALIDATION", "amount_exceeds_debt")
	if p := s.Call("POST", path("pay-debt"), s.Tok, map[string]any{"request_id": "p3", "amount": 4}); p.Data()["balance"].(float64) != -6 || p.Data()["debt"].(float64) != 6 {
		t.Fatalf("pay-debt %s", p.Body)
	}
	if p := s.Call("POST", path("pay-debt"), s.Tok, map[string]any{"request_id": "p4"}); p.Data()["balance"].(float64) != 0 || p.Data()["kind"] != "pay_debt" {
		t.Fatalf("pay-debt all %s", p.Body)
	}
	// redeem points: earned per activation, valued by the tenant settings
	webtest.ExpectErr(t, s.Call("POST", path("redeem-points"), s.Tok, map[string]any{"request_id": "pt0", "points": 1}), 409, "ERR_CONFLICT", "points_redemption_disabled")
	s.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('points_value', '0.5'), ('points_per_activation', '4')`)
	s.Call("POST", path("deposit"), s.Tok, map[string]any{"amount": 10, "request_id": "d9"})
	s.Call("POST", path("activation"), s.Tok, map[string]any{"request_id": "a5"})
	webtest.ExpectErr(t, s.Call("POST", path("redeem-points"), s.Tok, map[string]any{"request_id": "pt1", "points": 5}), 409, "ERR_CONFLICT", "insufficient_points")
	webtest.ExpectErr(t, s.Call("POST", path("redeem-points"), s.Tok, map[string]any{"request_id": "pt1", "points": 0}), 400, "ERR_VALIDATION", "points_must_be_positive")
	if p := s.Call("POST", path("redeem-points"), s.Tok, map[string]any{"request_id": "pt1", "points": 4}); p.Data()["credited"].(float64) != 2 || p.Data()["points_balance"].(float64) != 0 {
		t.Fatalf("points %s", p.Body)
	}
	// the ledger: newest first, running balance consistent
	l := s.Call("GET", path("ledger")+"?order=asc&page_size=200", s.Tok, nil)
	var run float64
	for _, row := range l.List() {
		e := row.(map[string]any)
		run += e["amount"].(float64)
		if fmt.Sprintf("%.3f", run) != fmt.Sprintf("%.3f", e["balance_after"].(float64)) {
			t.Fatalf("running balance broken at %v", e)
		}
	}
	bal := s.Call("GET", fmt.Sprintf("/users/%d", u), s.Tok, nil).Data()["balance"].(float64)
	if fmt.Sprintf("%.3f", run) != fmt.Sprintf("%.3f", bal) || int(l.Meta()["total"].(float64)) != len(l.List()) {
		t.Fatalf("ledger sums to %v, balance %v", run, bal)
	}
	if first := s.Call("GET", path("ledger"), s.Tok, nil).List()[0].(map[string]any); first["kind"] != "points_redeem" {
		t.Fatalf("newest first: %v", first)
	}
	// The ledger is append-only in the database itself.
	if err := s.Ten.Write(webtest.Background, func(tx *sql.Tx) error { _, err := tx.Exec(`DELETE FROM user_ledger`); return err }); err == nil {
		t.Fatal("ledger row deleted")
	}
}

func TestUsersPatch(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "P"})
	supID, sup := s.Manager(s.OwnerID, "support", "prm_users_index", "prm_users_update")
	u := s.User("", map[string]any{"username": "pat", "parent_id": supID})
	s.User("", map[string]any{"username": "taken"})
	p := func(tok string, body map[string]any) webtest.Resp {
		return s.Call("PATCH", fmt.Sprintf("/users/%d", u), tok, body)
	}
	// A MAC list without the lock switch enforces nothing.
	r := p(s.Tok, map[string]any{"mac_locked_addrs": []string{"aa-bb-cc-dd-ee-ff"}})
	if r.Status != 200 || r.Data()["mac_lock_enabled"] != false || fmt.Sprint(r.Data()["mac_locked_addrs"]) != "[AA:BB:CC:DD:EE:FF]" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r := p(s.Tok, map[string]any{"mac_lock_enabled": true}); r.Data()["mac_lock_enabled"] != true || len(r.Data()["mac_locked_addrs"].([]any)) != 1 {
		t.Fatalf("%s", r.Body)
	}
	// Partial: omitted fields untouched.
	p(s.Tok, map[string]any{"firstname": "Pat", "debt_limit": 3})
	r = p(s.Tok, map[string]any{"lastname": "Doe"})
	if r.Data()["firstname"] != "Pat" || r.Data()["lastname"] != "Doe" || r.Data()["debt_limit"].(float64) != 3 {
		t.Fatalf("%s", r.Body)
	}
	if r := p(s.Tok, map[string]any{"debt_limit": nil}); r.Data()["debt_limit"] != nil {
		t.Fatalf("unlimited credit: %s", r.Body)
	}
	webtest.ExpectErr(t, p(s.Tok, map[string]any{"username": "TAKEN"}), 409, "ERR_CONFLICT", "username_taken")
	webtest.ExpectErr(t, p(s.Tok, map[string]any{"email": "x"}), 400, "ERR_VALIDATION", "invalid_email")
	// Fields behind their own permission.
	for _, body := range []map[string]any{{"parent_id": supID}, {"profile_id": plan}, {"enabled": false}, {"expiration": "2030-01-01"}} {
		webtest.ExpectErr(t, p(sup, body), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	if r := p(sup, map[string]any{"phone": "+1"}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r := p(s.Tok, map[string]any{"enabled": false, "profile_id": plan, "expiration": "2030-01-01"}); r.Data()["enabled"] != false ||
		r.Data()["profile_id"].(float64) != float64(plan) || r.Data()["expiration"] != "2030-01-01 00:00:00" {
		t.Fatalf("%s", r.Body)
	}
	if s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.disabled'`) != 1 || s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.updated'`) < 5 {
		t.Fatal("events")
	}
	// Single enable/disable/delete rows.
	if r := s.Call("POST", fmt.Sprintf("/users/%d/enable", u), s.Tok, nil); r.Data()["enabled"] != true {
		t.Fatalf("%s", r.Body)
	}
	if r := s.Call("DELETE", fmt.Sprintf("/users/%d", u), s.Tok, nil); r.Status != 200 {
		t.Fatalf("%s", r.Body)
	}
	webtest.ExpectErr(t, p(s.Tok, map[string]any{"phone": "1"}), 409, "ERR_CONFLICT", "user_deleted")
	if d := s.Call("GET", fmt.Sprintf("/users/%d", u), s.Tok, nil).Data(); d["status"].(map[string]any)["deleted"] != true {
		t.Fatalf("%v", d)
	}
}

func TestUsersBulk(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	d := seed(s)
	plan := s.Plan(map[string]any{"name": "Bulk", "price": 2, "duration_days": 10, "bytes_limit": 100})
	s.Exec(`UPDATE users SET profile_id = ?, bytes_limit = 100 WHERE id IN (?, ?)`, plan, d.bravo, d.charlie)
	_, rtok := d.res, d.resTok
	// As the reseller: bravo is in scope, alpha outside, 999 missing.
	ids := []int64{d.bravo, d.alpha, 999}
	check := func(path string, body map[string]any, updated ...int64) webtest.Resp {
		t.Helper()
		body["ids"] = ids
		r := s.Call("POST", path, rtok, body)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var got []int64
		for _, v := range r.Data()["updated"].([]any) {
			got = append(got, int64(v.(float64)))
		}
		failed := r.Data()["failed"].([]any)
		reasons := map[int64]string{}
		for _, f := range failed {
			m := f.(map[string]any)
			reasons[int64(m["id"].(float64))] = m["reason"].(string)
		}
		if fmt.Sprint(got) != fmt.Sprint(updated) || reasons[d.alpha] != "not_authorized" || reasons[999] != "not_found" {
			t.Fatalf("%s: %s", path, r.Body)
		}
		return r
	}
	check("/users/bulk-disable", map[string]any{}, d.bravo)
	check("/users/bulk-enable", map[string]any{}, d.bravo)
	check("/users/bulk-add-days", map[string]any{"days": 3}, d.bravo)
	check("/users/bulk-add-hours", map[string]any{"hours": 5}, d.bravo)
	check("/users/bulk-set-expiration", map[string]any{"expiration": "2031-01-01"}, d.bravo)
	if exp := s.Call("GET", fmt.Sprintf("/users/%d", d.bravo), s.Tok, nil).Data()["expiration"]; exp != "2031-01-01 00:00:00" {
		t.Fatalf("expiration %v", exp)
	}
	dep := map[string]any{"amount": 4, "request_id": "bd1"}
	check("/users/bulk-deposit", dep, d.bravo)
	check("/users/bulk-deposit", map[string]any{"amount": 4, "request_id": "bd1"}, d.bravo) // replayed per row
	if b := s.Scalar(`SELECT balance FROM users WHERE id = ?`, d.bravo); b != 4000 {
		t.Fatalf("bulk deposit twice: %d", b)
	}
	preview := func(path string, body map[string]any) map[string]any {
		t.Helper()
		body["ids"] = ids
		r := s.Call("POST", path, rtok, body)
		if r.Status != 200 || len(r.Data()["rows"].([]any)) != 1 || len(r.Data()["failed"].([]any)) != 2 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r.Data()
	}
	pv := preview("/users/bulk-deposit/preview", map[string]any{"amount": 1})
	if pv["count"].(float64) != 1 || pv["total"].(float64) != 1 {
		t.Fatalf("preview %v", pv)
	}
	// Previews report rows, not updated ids.
	wp := preview("/users/bulk-withdraw/preview", map[string]any{"amount": 5})
	if row := wp["rows"].([]any)[0].(map[string]any); row["ok"] != false || row["reason"] != "insufficient_balance" {
		t.Fatalf("withdraw preview %v", wp)
	}
	check("/users/bulk-withdraw", map[string]any{"amount": 1, "request_id": "bw1"}, d.bravo)
	ep := preview("/users/bulk-extend/preview", map[string]any{})
	if row := ep["rows"].([]any)[0].(map[string]any); row["ok"] != true || row["price"].(float64) != 2 || row["paid_by"] != "subscriber" {
		t.Fatalf("extend preview %v", ep)
	}
	check("/users/bulk-extend", map[string]any{"request_id": "be1"}, d.bravo)
	check("/users/bulk-extend", map[string]any{"request_id": "be1"}, d.bravo)
	if s.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, d.bravo) != 1 {
		t.Fatal("bulk extend not idempotent per row")
	}
	check("/users/bulk-reset-balance", map[string]any{}, d.bravo)
	if s.Scalar(`SELECT balance FROM users WHERE id = ?`, d.bravo) != 0 {
		t.Fatal("reset balance")
	}
	// Permission-gated rows the reseller lacks answer 403 as a whole.
	webtest.ExpectErr(t, s.Call("POST", "/users/bulk-add-traffic", rtok, map[string]any{"ids": ids, "bytes": 5}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// The owner does the rest; alpha is in its scope.
	own := func(path string, body map[string]any) webtest.Resp {
		t.Helper()
		r := s.Call("POST", path, s.Tok, body)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r
	}
	tr := own("/users/bulk-add-traffic", map[string]any{"ids": []int64{d.bravo, d.echo}, "bytes": 50})
	if f := tr.Data()["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["message"] != "quota_unlimited" {
		t.Fatalf("%s", tr.Body)
	}
	s.Exec(`UPDATE users SET used_bytes = 70 WHERE id = ?`, d.bravo)
	own("/users/bulk-reset-quota", map[string]any{"ids": []int64{d.bravo}})
	if s.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, d.bravo) != 0 || s.Scalar(`SELECT bytes_limit FROM users WHERE id = ?`, d.bravo) != 150 {
		t.Fatal("traffic/quota")
	}
	g := s.Call("POST", "/admin/user-groups", s.Tok, map[string]any{"name": "VIP"})
	gid := g.Data()["id"]
	own("/users/bulk-set-group", map[string]any{"ids": []int64{d.alpha, d.bravo}, "group_id": gid})
	if r := s.Call("GET", "/users?filter[group_id]="+fmt.Sprint(gid), s.Tok, nil); len(r.List()) != 2 {
		t.Fatalf("group filter %s", r.Body)
	}
	if r := s.Call("GET", "/admin/user-groups", s.Tok, nil); r.List()[0].(map[string]any)["users_count"].(float64) != 2 {
		t.Fatalf("groups %s", r.Body)
	}
	own("/users/bulk-set-group", map[string]any{"ids": []int64{d.alpha}, "group_id": nil})
	webtest.ExpectErr(t, s.Call("POST", "/users/bulk-set-group", s.Tok, map[string]any{"ids": []int64{d.alpha}}), 400, "ERR_VALIDATION", "group_id_required")
	own("/users/bulk-set-profile", map[string]any{"ids": []int64{d.alpha}, "profile_id": plan})
	own("/users/bulk-set-parent", map[string]any{"ids": []int64{d.alpha}, "parent_id": d.res})
	if r := s.Call("GET", fmt.Sprintf("/users/%d", d.alpha), rtok, nil); r.Status != 200 || r.Data()["profile_id"].(float64) != float64(plan) {
		t.Fatalf("moved into the reseller's scope: %s", r.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/users/bulk-set-parent", rtok, map[string]any{"ids": []int64{d.alpha}, "parent_id": s.OwnerID}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	dc := own("/users/bulk-disconnect", map[string]any{"ids": []int64{d.charlie, d.echo}})
	if f := dc.Data()["failed"].([]any); len(f) != 2 || f[1].(map[string]any)["message"] != "not_online" {
		t.Fatalf("disconnect %s", dc.Body)
	}
	own("/users/bulk-delete", map[string]any{"ids": []int64{d.echo}})
	if n, err := s.Ten.CountUsers(webtest.Background); err != nil || n != 3 {
		t.Fatalf("users_count %d %v", n, err)
	}
	webtest.ExpectErr(t, s.Call("POST", "/users/bulk-enable", s.Tok, map[string]any{"ids": []int64{}}), 400, "ERR_VALIDATION", "ids_required")
	webtest.ExpectErr(t, s.Call("POST", "/users/bulk-deposit", s.Tok, map[string]any{"ids": []int64{d.alpha}, "amount": 1}), 400, "ERR_VALIDATION", "request_id_required")
}

func TestUsersCustomFields(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	mk := func(body map[string]any) {
		t.Helper()
		if r := s.Call("POST", "/admin/forms", s.Tok, body); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	mk(map[string]any{"form_name": "user", "name": "building", "label": "Building", "type": "text", "required": true, "regex": "[A-Z]-[0-9]+"})
	mk(map[string]any{"form_name": "users", "name": "floor", "type": "number"})
	mk(map[string]any{"form_name": "user", "name": "since", "type": "date"})
	mk(map[string]any{"form_name": "user", "name": "tier", "type": "select", "options": []string{"gold", "silver"}})
	mk(map[string]any{"form_name": "user", "name": "vip", "type": "checkbox"})
	mk(map[string]any{"form_name": "manager", "name": "region", "type": "text", "required": true}) // another form: not asked of subscribers
	post := func(cf map[string]any) webtest.Resp {
		return s.Call("POST", "/users", s.Tok, map[string]any{"username": "cf", "password": "x", "custom_fields": cf})
	}
	for _, c := range []struct {
		cf     map[string]any
		reason string
		field  string
	}{
		{nil, "custom_field_required", "custom_fields.building"},
		{map[string]any{"building": ""}, "custom_field_required", "custom_fields.building"},
		{map[string]any{"building": "b-1"}, "custom_field_pattern_mismatch", "custom_fields.building"},
		{map[string]any{"building": 5}, "custom_field_pattern_mismatch", "custom_fields.building"},
		{map[string]any{"building": true}, "custom_field_invalid_type", "custom_fields.building"},
		{map[string]any{"building": "B-1", "floor": "two"}, "custom_field_invalid_number", "custom_fields.floor"},
		{map[string]any{"building": "B-1", "since": "2030-02-30"}, "custom_field_invalid_date", "custom_fields.since"},
		{map[string]any{"building": "B-1", "tier": "bronze"}, "custom_field_invalid_option", "custom_fields.tier"},
		{map[string]any{"building": "B-1", "vip": "perhaps"}, "custom_field_invalid_type", "custom_fields.vip"},
		{map[string]any{"building": "B-1", "colour": "red"}, "custom_field_unknown", "custom_fields.colour"},
	} {
		r := post(c.cf)
		if r.Status != 400 || r.Reason() != c.reason || r.Field() != c.field {
			t.Errorf("%v: %d %s", c.cf, r.Status, r.Body)
		}
	}
	// Every failing field is listed.
	r := post(map[string]any{"floor": "x", "tier": "bronze"})
	errs, _ := r.JSON["error"].(map[string]any)["details"].(map[string]any)["errors"].([]any)
	if len(errs) != 3 {
		t.Fatalf("per-field errors: %s", r.Body)
	}
	if s.Scalar(`SELECT COUNT(*) FROM users`) != 0 {
		t.Fatal("stored after refusal")
	}
	r = post(map[string]any{"building": " B-12 ", "floor": "3", "since": "2024-05-06 10:00:00", "tier": "gold", "vip": "yes"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.Data()["id"]
	cf := s.Call("GET", fmt.Sprintf("/users/%v", id), s.Tok, nil).Data()["custom_fields"].(map[string]any)
	if cf["building"] != "B-12" || cf["floor"].(float64) != 3 || cf["since"] != "2024-05-06" || cf["tier"] != "gold" || cf["vip"] != true {
		t.Fatalf("stored %v", cf)
	}
	// PATCH merges: a null removes one field, the required one stays.
	pr := s.Call("PATCH", fmt.Sprintf("/users/%v", id), s.Tok, map[string]any{"custom_fields": map[string]any{"tier": nil, "floor": 4}})
	cf = pr.Data()["custom_fields"].(map[string]any)
	if _, has := cf["tier"]; has || cf["floor"].(float64) != 4 || cf["building"] != "B-12" {
		t.Fatalf("patched %s", pr.Body)
	}
	webtest.ExpectErr(t, s.Call("PATCH", fmt.Sprintf("/users/%v", id), s.Tok, map[string]any{"custom_fields": map[string]any{"building": nil}}),
		400, "ERR_VALIDATION", "custom_field_required")
}

func TestUsersOwnerContext(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	res, rtok := s.Manager(s.OwnerID, "ctxres", webtest.ResellerCodes...)
	sub, _ := s.Manager(res, "ctxsub")
	open := s.Plan(map[string]any{"name": "Open"})
	granted := s.Plan(map[string]any{"name": "Granted", "manager_ids": []int64{res}})
	s.Plan(map[string]any{"name": "Hidden", "all_managers": false})
	s.Plan(map[string]any{"name": "Off", "enabled": false})
	oc := s.Call("GET", "/users/owner-context", rtok, nil).Data()
	var parents, plans []int64
	for _, p := range oc["parents"].([]any) {
		parents = append(parents, int64(p.(map[string]any)["id"].(float64)))
	}
	for _, p := range oc["profiles"].([]any) {
		plans = append(plans, int64(p.(map[string]any)["id"].(float64)))
	}
	if suSorted(parents...) != suSorted(res, sub) || suSorted(plans...) != suSorted(open, granted) || oc["default_parent_id"].(float64) != float64(res) {
		t.Fatalf("%v", oc)
	}
	// The granted plan is assignable below the grantee too.
	_, subTok := s.Manager(res, "ctxsub2", webtest.ResellerCodes...)
	if r := s.Call("POST", "/users", subTok, map[string]any{"username": "g1", "password": "x", "profile_id": granted}); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

// suNoLimit lets a benchmark past the per-operator buckets.
type suNoLimit struct{}

func (suNoLimit) Allow(string, int) bool { return true }

// BenchmarkUsersListHTTP measures GET /users end to end (auth, scope,
// JSON) on 100,000 subscribers under a 3-level reseller tree, seeded
// through the CSV import:
//
//	go test ./web -run '^$' -bench UsersListHTTP -benchtime 200x
func BenchmarkUsersListHTTP(b *testing.B) {
	s := webtest.NewAcme(b)
	s.App.Limiter = suNoLimit{}
	sys := s.System("acme")
	role, err := identity.CreateRole(webtest.Background, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "bench-reseller"},
		Permissions: app.Opt[[]string]{Set: true, V: webtest.ResellerCodes}})
	if err != nil {
		b.Fatal(err)
	}
	mgr := func(parent int64, name string) int64 {
		m, err := identity.CreateManager(webtest.Background, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name},
			Password: app.Opt[string]{Set: true, V: webtest.Password}, ParentManagerID: app.Opt[int64]{Set: true, V: parent},
			RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}})
		if err != nil {
			b.Fatal(err)
		}
		return m.ID
	}
	first := []string{"Amal", "Bilal", "Chen", "Dana", "Eli", "Farah", "Goran", "Hana", "Ivan", "Jana"}
	start := time.Now()
	n := 0
	for i := 0; i < 10; i++ {
		l1 := fmt.Sprintf("r%d", i)
		subtree := []string{l1}
		p1 := mgr(s.OwnerID, l1)
		for j := 0; j < 3; j++ {
			l2 := fmt.Sprintf("r%d-%d", i, j)
			p2 := mgr(p1, l2)
			subtree = append(subtree, l2)
			for k := 0; k < 3; k++ {
				l3 := fmt.Sprintf("r%d-%d-%d", i, j, k)
				mgr(p2, l3)
				subtree = append(subtree, l3)
			}
		}
		for m, parent := range subtree {
			var csvb strings.Builder
			csvb.WriteString("username,password,email,firstname,lastname,phone,expiration\n")
			count := 10000 / len(subtree)
			if m == 0 {
				count += 10000 % len(subtree)
			}
			for c := 0; c < count; c++ {
				exp := time.Now().UTC().Add(time.Duration((n*7919)%(120*24)-30*24) * time.Hour)
				fmt.Fprintf(&csvb, "u%06d,pw,u%06d@mail%d.example,%s,Doe,+1555%07d,%s\n", n, n, n%50, first[n%len(first)], n, app.FormatTime(exp))
				n++
			}
			rep, err := subsImport(s, parent, csvb.String())
			if err != nil || rep != count {
				b.Fatalf("import: %v %d", err, rep)
			}
		}
	}
	b.Logf("seeded %d subscribers through the import in %s", n, time.Since(start).Round(time.Millisecond))
	s.Exec(`ANALYZE`)
	rtok := s.Login("acme", "r3", webtest.Password)
	run := func(name, token, query string, total float64) {
		b.Run(name, func(b *testing.B) {
			r := s.Call("GET", "/users?"+query, token, nil)
			if r.Status != 200 || (total > 0 && r.Meta()["total"].(float64) != total) {
				b.Fatalf("%d %s", r.Status, r.Body[:min(len(r.Body), 300)])
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if r := s.Call("GET", "/users?"+query, token, nil); r.Status != 200 {
					b.Fatal(r.Status)
				}
				durs = append(durs, time.Since(t0))
			}
			b.StopTimer()
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(durs[min(len(durs)-1, len(durs)*99/100)].Microseconds())/1000, "p99-ms")
		})
	}
	run("default", s.Tok, "", 100000)
	run("q_two_filters", s.Tok, "q=hana&filter[enabled]=true&filter[expired]=false", 0)
	run("q_phone_two_filters", s.Tok, "q=5550012&filter[enabled]=true&filter[expired]=false", 0)
	run("scoped_reseller", rtok, "", 10000)
}

func subsImport(s *webtest.Acme, parent, csvText string) (int, error) {
	act, err := app.SystemActor(webtest.Background, s.Ten)
	if err != nil {
		return 0, err
	}
	f, err := os.CreateTemp("", "import-*.csv")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(csvText); err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	rep, err := dataimport.Import(webtest.Background, act, f.Name(), "csv", dataimport.Spec{Parent: parent})
	if err != nil {
		return 0, err
	}
	if len(rep.Errors) > 0 {
		return 0, fmt.Errorf("%v", rep.Errors[0])
	}
	return rep.Imported, nil
}
