package web_test

// Tests of the subscribers area through HTTP. Helpers carry the prefix su
// to stay clear of other areas' helpers in package web.

import (
	"bytes"
	"context"
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

var suCtx = context.Background()

// su is a kit with tenant acme, its owner's token and direct access to the
// tenant for setting up and checking rows.
type su struct {
	*webtest.Kit
	t     testing.TB
	tok   string
	ten   *app.Tenant
	owner int64
}

func newSu(t testing.TB) *su {
	t.Helper()
	k := webtest.New(t)
	s := &su{Kit: k, t: t, tok: k.Owner("acme"), ten: k.Acquire("acme")}
	s.owner = s.scalar(`SELECT id FROM managers WHERE parent_id IS NULL`)
	return s
}

func (s *su) do(method, path, token string, body any) webtest.Resp {
	s.t.Helper()
	return s.Do(method, "acme", "/api/v1"+path, token, body)
}

func (s *su) scalar(q string, args ...any) int64 {
	s.t.Helper()
	var n int64
	if err := s.ten.DB.R.QueryRow(q, args...).Scan(&n); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (s *su) exec(q string, args ...any) {
	s.t.Helper()
	if err := s.ten.Write(suCtx, func(tx *sql.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
}

var suRoleSeq int

// manager creates a manager under parent with a role of exactly codes and
// returns its id and a session token.
func (s *su) manager(parent int64, username string, codes ...string) (int64, string) {
	s.t.Helper()
	sys := s.System("acme")
	suRoleSeq++
	if codes == nil {
		codes = []string{}
	}
	r, err := identity.CreateRole(suCtx, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: fmt.Sprintf("su-role-%d", suRoleSeq)},
		Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		s.t.Fatal(err)
	}
	m, err := identity.CreateManager(suCtx, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: username},
		Password: app.Opt[string]{Set: true, V: webtest.Password}, ParentManagerID: app.Opt[int64]{Set: true, V: parent},
		RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{r.ID}}})
	if err != nil {
		s.t.Fatal(err)
	}
	return m.ID, s.Login("acme", username, webtest.Password)
}

// resellerCodes is what a reseller in these tests holds.
var resellerCodes = []string{"prm_users_index", "prm_users_create", "prm_users_update", "prm_users_deposit", "prm_users_withdrawal",
	"prm_users_activate", "prm_users_extend", "prm_users_enable_disable", "prm_users_delete", "prm_users_refund", "prm_users_addon",
	"prm_profiles_index", "prm_users_export", "prm_users_change_profile"}

// user creates a subscriber as token (owner when "") and returns its id.
func (s *su) user(token string, body map[string]any) int64 {
	s.t.Helper()
	if token == "" {
		token = s.tok
	}
	if body["password"] == nil {
		body["password"] = "secret-" + fmt.Sprint(body["username"])
	}
	r := s.do("POST", "/users", token, body)
	if r.Status != 201 {
		s.t.Fatalf("create %v: %d %s", body["username"], r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}

func (s *su) plan(body map[string]any) int64 {
	s.t.Helper()
	r := s.do("POST", "/admin/profiles", s.tok, body)
	if r.Status != 201 {
		s.t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	return int64(r.Data()["id"].(float64))
}

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
	s := newSu(t)
	plan := s.plan(map[string]any{"name": "Home", "price": 10, "duration_days": 30, "bytes_limit": 5000})
	r := s.do("POST", "/users", s.tok, map[string]any{"username": "alice", "password": "pw", "profile_id": plan, "debt_limit": 0,
		"email": "alice@x.example", "portal_password": "Portal-pass-1", "expiration": "2030-01-02"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if got := suKeys(r.Data()); got != "balance,created_at,debt,enabled,id,parent_id,profile_id,tenant_id,username" {
		t.Fatalf("create fields: %s", got)
	}
	id := int64(r.Data()["id"].(float64))
	if r.Data()["parent_id"].(float64) != float64(s.owner) || r.Data()["balance"].(float64) != 0 || r.Data()["enabled"] != true {
		t.Fatalf("%s", r.Body)
	}
	// Identity only: no money, no quota, no activation.
	if s.scalar(`SELECT COUNT(*) FROM user_ledger`) != 0 || s.scalar(`SELECT COUNT(*) FROM user_activations`) != 0 ||
		s.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, id) != 0 {
		t.Fatal("create did more than identity")
	}
	if s.scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.created'`) != 1 {
		t.Fatal("no user.created in the outbox")
	}
	// The RADIUS password is recoverable, the portal one hashed.
	var sealed []byte
	var portal string
	s.ten.DB.R.QueryRow(`SELECT password_sealed, portal_password_hash FROM users WHERE id = ?`, id).Scan(&sealed, &portal)
	if pw, err := s.App.Keys.Open(sealed); err != nil || string(pw) != "pw" || !strings.HasPrefix(portal, "$argon2id$") {
		t.Fatalf("passwords: %q %v %q", pw, err, portal)
	}

	list := s.do("GET", "/users", s.tok, nil)
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
	one := s.do("GET", fmt.Sprintf("/users/%d", id), s.tok, nil).Data()
	if tok, _ := one["lookup_token"].(string); len(tok) < 20 {
		t.Fatalf("no lookup_token: %v", one)
	}
	if _, ok := one["custom_fields"]; !ok || one["debt_limit"].(float64) != 0 || one["has_portal_password"] != true {
		t.Fatalf("%v", one)
	}
	// resolve, with and without the QR prefix
	for _, code := range []string{one["lookup_token"].(string), "xr:u:" + one["lookup_token"].(string)} {
		rr := s.do("GET", "/users/resolve?code="+url.QueryEscape(code), s.tok, nil)
		if rr.Status != 200 || rr.Data()["id"].(float64) != float64(id) || rr.Data()["lookup_token"] == nil {
			t.Fatalf("resolve: %d %s", rr.Status, rr.Body)
		}
	}
	webtest.ExpectErr(t, s.do("GET", "/users/resolve?code=nope", s.tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, s.do("GET", "/users/resolve", s.tok, nil), 400, "ERR_VALIDATION", "code_required")
}

func TestUsersCreateRefusals(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	other, _ := s.manager(s.owner, "other")
	_, rtok := s.manager(s.owner, "res", resellerCodes...)
	closed := s.plan(map[string]any{"name": "Closed", "all_managers": false})
	s.user("", map[string]any{"username": "taken"})
	cases := []struct {
		tok    string
		body   map[string]any
		status int
		reason string
		field  string
	}{
		{s.tok, map[string]any{"password": "x"}, 400, "username_required", "username"},
		{s.tok, map[string]any{"username": "a b", "password": "x"}, 400, "invalid_username", "username"},
		{s.tok, map[string]any{"username": "nopw"}, 400, "password_required", "password"},
		{s.tok, map[string]any{"username": "TAKEN", "password": "x"}, 409, "username_taken", "username"},
		{s.tok, map[string]any{"username": "p1", "password": "x", "profile_id": 999}, 400, "profile_not_assignable", "profile_id"},
		{rtok, map[string]any{"username": "p2", "password": "x", "profile_id": closed}, 400, "profile_not_assignable", "profile_id"},
		{rtok, map[string]any{"username": "p3", "password": "x", "parent_id": other}, 400, "invalid_parent_id", "parent_id"},
		{s.tok, map[string]any{"username": "p4", "password": "x", "parent_id": 999}, 400, "invalid_parent_id", "parent_id"},
		{s.tok, map[string]any{"username": "p5", "password": "x", "debt_limit": -1}, 400, "invalid_debt_limit", "debt_limit"},
		{s.tok, map[string]any{"username": "p6", "password": "x", "debt_limit": 1.0005}, 400, "too_many_decimals", "debt_limit"},
		{s.tok, map[string]any{"username": "p7", "password": "x", "expiration": "2030-13-01"}, 400, "invalid_value", "expiration"},
		{s.tok, map[string]any{"username": "p8", "password": "x", "email": "nope"}, 400, "invalid_email", "email"},
		{s.tok, map[string]any{"username": "p9", "password": "x", "static_ip": "1.2.3"}, 400, "invalid_ip", "static_ip"},
		{s.tok, map[string]any{"username": "pa", "password": "x", "mac_locked_addrs": []string{"zz"}}, 400, "invalid_mac", "mac_locked_addrs"},
		{s.tok, map[string]any{"username": "pb", "password": "x", "portal_password": "short"}, 400, "password_too_short", "portal_password"},
		{s.tok, map[string]any{"username": "pc", "password": "x", "custom_fields": map[string]any{"x": 1}}, 400, "custom_field_unknown", "custom_fields.x"},
	}
	for _, c := range cases {
		r := s.do("POST", "/users", c.tok, c.body)
		if r.Status != c.status || r.Reason() != c.reason || r.Field() != c.field {
			t.Errorf("%v: got %d %s", c.body, r.Status, r.Body)
		}
	}
	if n := s.scalar(`SELECT COUNT(*) FROM users`); n != 1 {
		t.Fatalf("refusals stored %d users", n-1)
	}
	// The reseller's own subscribers go under it by default.
	rr := s.do("POST", "/users", rtok, map[string]any{"username": "mine", "password": "x"})
	if rr.Status != 201 || rr.Data()["parent_id"].(float64) == float64(s.owner) {
		t.Fatalf("%d %s", rr.Status, rr.Body)
	}
}

func TestUsersLicenceCap(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	one := int64(1)
	if _, err := s.App.UpdateTenant(suCtx, "acme", app.TenantUpdate{MaxUsers: app.Opt[int64]{Set: true, V: one}}); err != nil {
		t.Fatal(err)
	}
	s.ten = s.Acquire("acme")
	s.user("", map[string]any{"username": "first"})
	r := s.do("POST", "/users", s.tok, map[string]any{"username": "second", "password": "x"})
	webtest.ExpectErr(t, r, 403, "ERR_LICENSE_BLOCKED", "license_locked")
	if s.scalar(`SELECT COUNT(*) FROM users`) != 1 {
		t.Fatal("stored past the cap")
	}
	// At the cap the tenant still works; the list answers.
	if r := s.do("GET", "/users", s.tok, nil); r.Status != 200 {
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

func (s *su) seed() suSeed {
	s.t.Helper()
	var d suSeed
	d.res, d.resTok = s.manager(s.owner, "resa", resellerCodes...)
	d.p1 = s.plan(map[string]any{"name": "P-one"})
	d.p2 = s.plan(map[string]any{"name": "P-two"})
	d.alpha = s.user("", map[string]any{"username": "alpha", "email": "alpha@zed.example", "firstname": "Zoe", "lastname": "Quill",
		"phone": "+0000-0000", "contract_id": "CT-XY", "national_id": "NAT-QQ", "static_ip": "fd00::abc", "profile_id": d.p1})
	d.bravo = s.user(d.resTok, map[string]any{"username": "bravo", "email": "b@yak.example", "profile_id": d.p2})
	d.charlie = s.user("", map[string]any{"username": "charlie", "email": "c@yak.example"})
	d.delta = s.user("", map[string]any{"username": "delta"})
	d.echo = s.user("", map[string]any{"username": "echo"})
	now := time.Now().UTC()
	s.exec(`UPDATE users SET expiration = ? WHERE id = ?`, app.FormatTime(now.Add(10*24*time.Hour)), d.alpha)
	s.exec(`UPDATE users SET expiration = ?, enabled = 0 WHERE id = ?`, app.FormatTime(now.Add(-time.Hour)), d.bravo)
	s.exec(`UPDATE users SET expiration = ? WHERE id = ?`, app.FormatTime(now.Add(2*24*time.Hour)), d.charlie)
	s.exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES ('s1', ?, 'charlie', ?)`, d.charlie, app.StampNow())
	s.exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time, stop_time) VALUES ('s0', ?, 'alpha', ?, ?)`, d.alpha, app.StampNow(), app.StampNow())
	s.exec(`UPDATE users SET deleted_at = ? WHERE id = ?`, app.StampNow(), d.delta)
	s.exec(`UPDATE users SET created_at = '2020-01-01 00:00:00' WHERE id = ?`, d.echo)
	return d
}

func TestUsersListQAndFilters(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	d := s.seed()
	list := func(token, query string) []int64 {
		t.Helper()
		r := s.do("GET", "/users?"+query, token, nil)
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
		if got := list(s.tok, c.query); suSorted(got...) != suSorted(c.want...) {
			t.Errorf("%q: got %v want %v", c.query, got, c.want)
		}
	}
	// Default order is newest first; sort and order apply.
	if got := list(s.tok, ""); fmt.Sprint(got) != fmt.Sprint([]int64{d.echo, d.charlie, d.bravo, d.alpha}) {
		t.Errorf("default order %v", got)
	}
	if got := list(s.tok, "sort=username&order=asc"); fmt.Sprint(got) != fmt.Sprint([]int64{d.alpha, d.bravo, d.charlie, d.echo}) {
		t.Errorf("username order %v", got)
	}
	// Paging: total over the whole set.
	r := s.do("GET", "/users?page_size=2&page=2", s.tok, nil)
	if m := r.Meta(); m["total"].(float64) != 4 || m["has_next"] != false || len(r.List()) != 2 {
		t.Errorf("page 2: %s", r.Body)
	}
	r = s.do("GET", "/users?page_size=2&q=yak&page=5", s.tok, nil)
	if m := r.Meta(); m["total"].(float64) != 2 || len(r.List()) != 0 {
		t.Errorf("page past a search: %s", r.Body)
	}
	// Malformed values of recognised filters are 400s naming the filter.
	for _, q := range []string{"filter[created_from]=yesterday", "filter[enabled]=maybe", "filter[profile_id]=x", "filter[expiring_within_days]=-1"} {
		r := s.do("GET", "/users?"+q, s.tok, nil)
		if r.Status != 400 || r.Reason() != "invalid_filter" || !strings.HasPrefix(r.Field(), "filter[") {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
	// A reseller sees its subtree; parent_id cannot widen it.
	if got := list(d.resTok, ""); suSorted(got...) != suSorted(d.bravo) {
		t.Errorf("reseller list %v", got)
	}
	if got := list(d.resTok, "filter[parent_id]="+fmt.Sprint(s.owner)); suSorted(got...) != suSorted(d.bravo) {
		t.Errorf("reseller parent_id outside scope %v", got)
	}
	if got := list(d.resTok, "q=alpha"); len(got) != 0 {
		t.Errorf("reseller searched outside its scope: %v", got)
	}
	// Computed status of a row.
	r = s.do("GET", "/users?filter[online]=true", s.tok, nil)
	st := r.List()[0].(map[string]any)["status"].(map[string]any)
	if st["online"] != true || st["expired"] != false || st["can_connect"] != true || st["have_quota"] != true {
		t.Errorf("status %v", st)
	}
	// Summary over the same scope.
	sum := s.do("GET", "/users/summary", s.tok, nil).Data()
	if sum["total"].(float64) != 4 || sum["online"].(float64) != 1 || sum["expired"].(float64) != 2 || sum["disabled"].(float64) != 1 ||
		sum["deleted"].(float64) != 1 || sum["expiring_7_days"].(float64) != 1 {
		t.Errorf("summary %v", sum)
	}
	if rs := s.do("GET", "/users/summary", d.resTok, nil).Data(); rs["total"].(float64) != 1 {
		t.Errorf("reseller summary %v", rs)
	}
}

func TestUsersScopeAnswersLikeMissing(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	d := s.seed()
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
		out := s.do(c.method, fmt.Sprintf(c.path, d.alpha), d.resTok, body)
		missing := s.do(c.method, fmt.Sprintf(c.path, 987654), d.resTok, body)
		webtest.ExpectErr(t, out, 404, "ERR_NOT_FOUND", "not_found")
		suSame(t, out, missing)
	}
	if s.scalar(`SELECT COUNT(*) FROM idempotency`) != 0 || s.scalar(`SELECT email = 'alpha@zed.example' FROM users WHERE id = ?`, d.alpha) != 1 {
		t.Fatal("an out-of-scope call changed something")
	}
	// Inside the scope they work.
	if r := s.do("GET", fmt.Sprintf("/users/%d", d.bravo), d.resTok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// A non-integer id is the same 404.
	webtest.ExpectErr(t, s.do("GET", "/users/abc", d.resTok, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestUsersMoneyOperations(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	plan := s.plan(map[string]any{"name": "Month", "price": 10, "duration_days": 30, "bytes_limit": 1000})
	u := s.user("", map[string]any{"username": "payer", "profile_id": plan, "debt_limit": 5})
	v := s.user("", map[string]any{"username": "other", "profile_id": plan})
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
		r := s.do("POST", path("deposit"), s.tok, c.body)
		if r.Status != 400 || r.Reason() != c.reason {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
		}
	}
	r := s.do("POST", path("deposit"), s.tok, map[string]any{"amount": 12.5, "request_id": "d1"})
	if r.Status != 200 || r.Data()["replay"] != false || r.Data()["balance"].(float64) != 12.5 || r.Data()["invoice_no"] != nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r2 := s.do("POST", path("deposit"), s.tok, map[string]any{"amount": 12.5, "request_id": "d1"})
	if r2.Status != 200 || r2.Data()["replay"] != true || r2.Data()["ledger_id"] != r.Data()["ledger_id"] || r2.Data()["balance"].(float64) != 12.5 {
		t.Fatalf("replay %d %s", r2.Status, r2.Body)
	}
	webtest.ExpectErr(t, s.do("POST", fmt.Sprintf("/users/%d/deposit", v), s.tok, map[string]any{"amount": 1, "request_id": "d1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	webtest.ExpectErr(t, s.do("POST", path("withdraw"), s.tok, map[string]any{"amount": 1, "request_id": "d1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	inv := s.do("POST", path("deposit"), s.tok, map[string]any{"amount": 1, "request_id": "d2", "issue_invoice": true})
	if no, _ := inv.Data()["invoice_no"].(string); no == "" || s.scalar(`SELECT COUNT(*) FROM user_invoices`) != 1 {
		t.Fatalf("invoice: %s", inv.Body)
	}
	if s.scalar(`SELECT COUNT(*) FROM events WHERE type = 'payment.deposit'`) != 2 {
		t.Fatal("payment.deposit events")
	}
	// balance 13.5: withdraw beyond it is refused and stores nothing
	keys := s.scalar(`SELECT COUNT(*) FROM idempotency`)
	webtest.ExpectErr(t, s.do("POST", path("withdraw"), s.tok, map[string]any{"amount": 14, "request_id": "w1"}), 409, "ERR_CONFLICT", "insufficient_balance")
	webtest.ExpectErr(t, s.do("POST", path("pay-debt"), s.tok, map[string]any{"request_id": "p1"}), 409, "ERR_CONFLICT", "no_debt")
	if s.scalar(`SELECT COUNT(*) FROM idempotency`) != keys {
		t.Fatal("a refusal stored its key")
	}
	if w := s.do("POST", path("withdraw"), s.tok, map[string]any{"amount": 3.5, "request_id": "w1"}); w.Data()["balance"].(float64) != 10 || w.Data()["amount"].(float64) != -3.5 {
		t.Fatalf("withdraw %s", w.Body)
	}
	// activation: 10 of 10; then again within debt_limit 5? 0-10 = -10 < -5: refused.
	a := s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a1"})
	if a.Status != 200 || a.Data()["replay"] != false || a.Data()["balance"].(float64) != 0 || a.Data()["paid_by"] != "subscriber" {
		t.Fatalf("activation %d %s", a.Status, a.Body)
	}
	if a2 := s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a1"}); a2.Data()["replay"] != true || a2.Data()["activation_id"] != a.Data()["activation_id"] {
		t.Fatalf("activation replay %s", a2.Body)
	}
	webtest.ExpectErr(t, s.do("POST", fmt.Sprintf("/users/%d/activation", v), s.tok, map[string]any{"request_id": "a1"}), 409, "ERR_CONFLICT", "activation_request_conflict")
	webtest.ExpectErr(t, s.do("POST", fmt.Sprintf("/users/%d/activation", v), s.tok, map[string]any{"request_id": "d2"}), 409, "ERR_CONFLICT", "activation_request_conflict")
	acts := s.scalar(`SELECT COUNT(*) FROM user_activations`)
	webtest.ExpectErr(t, s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a2"}), 409, "ERR_CONFLICT", "insufficient_balance")
	webtest.ExpectErr(t, s.do("POST", path("activation"), s.tok, map[string]any{}), 400, "ERR_VALIDATION", "request_id_required")
	if s.scalar(`SELECT COUNT(*) FROM user_activations`) != acts {
		t.Fatal("refused activation stored a row")
	}
	// refund the activation: money and time back
	rf := s.do("POST", path("refund-activation"), s.tok, map[string]any{"request_id": "r1"})
	if rf.Status != 200 || rf.Data()["refunded"].(float64) != 10 || rf.Data()["balance"].(float64) != 10 {
		t.Fatalf("refund %d %s", rf.Status, rf.Body)
	}
	webtest.ExpectErr(t, s.do("POST", path("refund-activation"), s.tok, map[string]any{"request_id": "r2"}), 409, "ERR_CONFLICT", "activation_already_refunded")
	// pay-debt: into debt by withdrawing? no: withdraw never overdraws. Use an activation on credit.
	s.exec(`UPDATE users SET debt_limit = NULL WHERE id = ?`, u)
	s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a3"})
	s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a4"}) // balance -10
	webtest.ExpectErr(t, s.do("POST", path("pay-debt"), s.tok, map[string]any{"request_id": "p2", "amount": 11}), 400, "ERR_VALIDATION", "amount_exceeds_debt")
	if p := s.do("POST", path("pay-debt"), s.tok, map[string]any{"request_id": "p3", "amount": 4}); p.Data()["balance"].(float64) != -6 || p.Data()["debt"].(float64) != 6 {
		t.Fatalf("pay-debt %s", p.Body)
	}
	if p := s.do("POST", path("pay-debt"), s.tok, map[string]any{"request_id": "p4"}); p.Data()["balance"].(float64) != 0 || p.Data()["kind"] != "pay_debt" {
		t.Fatalf("pay-debt all %s", p.Body)
	}
	// redeem points: earned per activation, valued by the tenant settings
	webtest.ExpectErr(t, s.do("POST", path("redeem-points"), s.tok, map[string]any{"request_id": "pt0", "points": 1}), 409, "ERR_CONFLICT", "points_redemption_disabled")
	s.exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('points_value', '0.5'), ('points_per_activation', '4')`)
	s.do("POST", path("deposit"), s.tok, map[string]any{"amount": 10, "request_id": "d9"})
	s.do("POST", path("activation"), s.tok, map[string]any{"request_id": "a5"})
	webtest.ExpectErr(t, s.do("POST", path("redeem-points"), s.tok, map[string]any{"request_id": "pt1", "points": 5}), 409, "ERR_CONFLICT", "insufficient_points")
	webtest.ExpectErr(t, s.do("POST", path("redeem-points"), s.tok, map[string]any{"request_id": "pt1", "points": 0}), 400, "ERR_VALIDATION", "points_must_be_positive")
	if p := s.do("POST", path("redeem-points"), s.tok, map[string]any{"request_id": "pt1", "points": 4}); p.Data()["credited"].(float64) != 2 || p.Data()["points_balance"].(float64) != 0 {
		t.Fatalf("points %s", p.Body)
	}
	// the ledger: newest first, running balance consistent
	l := s.do("GET", path("ledger")+"?order=asc&page_size=200", s.tok, nil)
	var run float64
	for _, row := range l.List() {
		e := row.(map[string]any)
		run += e["amount"].(float64)
		if fmt.Sprintf("%.3f", run) != fmt.Sprintf("%.3f", e["balance_after"].(float64)) {
			t.Fatalf("running balance broken at %v", e)
		}
	}
	bal := s.do("GET", fmt.Sprintf("/users/%d", u), s.tok, nil).Data()["balance"].(float64)
	if fmt.Sprintf("%.3f", run) != fmt.Sprintf("%.3f", bal) || int(l.Meta()["total"].(float64)) != len(l.List()) {
		t.Fatalf("ledger sums to %v, balance %v", run, bal)
	}
	if first := s.do("GET", path("ledger"), s.tok, nil).List()[0].(map[string]any); first["kind"] != "points_redeem" {
		t.Fatalf("newest first: %v", first)
	}
	// The ledger is append-only in the database itself.
	if err := s.ten.Write(suCtx, func(tx *sql.Tx) error { _, err := tx.Exec(`DELETE FROM user_ledger`); return err }); err == nil {
		t.Fatal("ledger row deleted")
	}
}

func TestUsersPatch(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	plan := s.plan(map[string]any{"name": "P"})
	supID, sup := s.manager(s.owner, "support", "prm_users_index", "prm_users_update")
	u := s.user("", map[string]any{"username": "pat", "parent_id": supID})
	s.user("", map[string]any{"username": "taken"})
	p := func(tok string, body map[string]any) webtest.Resp {
		return s.do("PATCH", fmt.Sprintf("/users/%d", u), tok, body)
	}
	// A MAC list without the lock switch enforces nothing.
	r := p(s.tok, map[string]any{"mac_locked_addrs": []string{"aa-bb-cc-dd-ee-ff"}})
	if r.Status != 200 || r.Data()["mac_lock_enabled"] != false || fmt.Sprint(r.Data()["mac_locked_addrs"]) != "[AA:BB:CC:DD:EE:FF]" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r := p(s.tok, map[string]any{"mac_lock_enabled": true}); r.Data()["mac_lock_enabled"] != true || len(r.Data()["mac_locked_addrs"].([]any)) != 1 {
		t.Fatalf("%s", r.Body)
	}
	// Partial: omitted fields untouched.
	p(s.tok, map[string]any{"firstname": "Pat", "debt_limit": 3})
	r = p(s.tok, map[string]any{"lastname": "Doe"})
	if r.Data()["firstname"] != "Pat" || r.Data()["lastname"] != "Doe" || r.Data()["debt_limit"].(float64) != 3 {
		t.Fatalf("%s", r.Body)
	}
	if r := p(s.tok, map[string]any{"debt_limit": nil}); r.Data()["debt_limit"] != nil {
		t.Fatalf("unlimited credit: %s", r.Body)
	}
	webtest.ExpectErr(t, p(s.tok, map[string]any{"username": "TAKEN"}), 409, "ERR_CONFLICT", "username_taken")
	webtest.ExpectErr(t, p(s.tok, map[string]any{"email": "x"}), 400, "ERR_VALIDATION", "invalid_email")
	// Fields behind their own permission.
	for _, body := range []map[string]any{{"parent_id": supID}, {"profile_id": plan}, {"enabled": false}, {"expiration": "2030-01-01"}} {
		webtest.ExpectErr(t, p(sup, body), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	if r := p(sup, map[string]any{"phone": "+1"}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if r := p(s.tok, map[string]any{"enabled": false, "profile_id": plan, "expiration": "2030-01-01"}); r.Data()["enabled"] != false ||
		r.Data()["profile_id"].(float64) != float64(plan) || r.Data()["expiration"] != "2030-01-01 00:00:00" {
		t.Fatalf("%s", r.Body)
	}
	if s.scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.disabled'`) != 1 || s.scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.updated'`) < 5 {
		t.Fatal("events")
	}
	// Single enable/disable/delete rows.
	if r := s.do("POST", fmt.Sprintf("/users/%d/enable", u), s.tok, nil); r.Data()["enabled"] != true {
		t.Fatalf("%s", r.Body)
	}
	if r := s.do("DELETE", fmt.Sprintf("/users/%d", u), s.tok, nil); r.Status != 200 {
		t.Fatalf("%s", r.Body)
	}
	webtest.ExpectErr(t, p(s.tok, map[string]any{"phone": "1"}), 409, "ERR_CONFLICT", "user_deleted")
	if d := s.do("GET", fmt.Sprintf("/users/%d", u), s.tok, nil).Data(); d["status"].(map[string]any)["deleted"] != true {
		t.Fatalf("%v", d)
	}
}

func TestUsersBulk(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	d := s.seed()
	plan := s.plan(map[string]any{"name": "Bulk", "price": 2, "duration_days": 10, "bytes_limit": 100})
	s.exec(`UPDATE users SET profile_id = ?, bytes_limit = 100 WHERE id IN (?, ?)`, plan, d.bravo, d.charlie)
	_, rtok := d.res, d.resTok
	// As the reseller: bravo is in scope, alpha outside, 999 missing.
	ids := []int64{d.bravo, d.alpha, 999}
	check := func(path string, body map[string]any, updated ...int64) webtest.Resp {
		t.Helper()
		body["ids"] = ids
		r := s.do("POST", path, rtok, body)
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
	if exp := s.do("GET", fmt.Sprintf("/users/%d", d.bravo), s.tok, nil).Data()["expiration"]; exp != "2031-01-01 00:00:00" {
		t.Fatalf("expiration %v", exp)
	}
	dep := map[string]any{"amount": 4, "request_id": "bd1"}
	check("/users/bulk-deposit", dep, d.bravo)
	check("/users/bulk-deposit", map[string]any{"amount": 4, "request_id": "bd1"}, d.bravo) // replayed per row
	if b := s.scalar(`SELECT balance FROM users WHERE id = ?`, d.bravo); b != 4000 {
		t.Fatalf("bulk deposit twice: %d", b)
	}
	preview := func(path string, body map[string]any) map[string]any {
		t.Helper()
		body["ids"] = ids
		r := s.do("POST", path, rtok, body)
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
	if s.scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, d.bravo) != 1 {
		t.Fatal("bulk extend not idempotent per row")
	}
	check("/users/bulk-reset-balance", map[string]any{}, d.bravo)
	if s.scalar(`SELECT balance FROM users WHERE id = ?`, d.bravo) != 0 {
		t.Fatal("reset balance")
	}
	// Permission-gated rows the reseller lacks answer 403 as a whole.
	webtest.ExpectErr(t, s.do("POST", "/users/bulk-add-traffic", rtok, map[string]any{"ids": ids, "bytes": 5}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// The owner does the rest; alpha is in its scope.
	own := func(path string, body map[string]any) webtest.Resp {
		t.Helper()
		r := s.do("POST", path, s.tok, body)
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r
	}
	tr := own("/users/bulk-add-traffic", map[string]any{"ids": []int64{d.bravo, d.echo}, "bytes": 50})
	if f := tr.Data()["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["message"] != "quota_unlimited" {
		t.Fatalf("%s", tr.Body)
	}
	s.exec(`UPDATE users SET used_bytes = 70 WHERE id = ?`, d.bravo)
	own("/users/bulk-reset-quota", map[string]any{"ids": []int64{d.bravo}})
	if s.scalar(`SELECT used_bytes FROM users WHERE id = ?`, d.bravo) != 0 || s.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, d.bravo) != 150 {
		t.Fatal("traffic/quota")
	}
	g := s.do("POST", "/admin/user-groups", s.tok, map[string]any{"name": "VIP"})
	gid := g.Data()["id"]
	own("/users/bulk-set-group", map[string]any{"ids": []int64{d.alpha, d.bravo}, "group_id": gid})
	if r := s.do("GET", "/users?filter[group_id]="+fmt.Sprint(gid), s.tok, nil); len(r.List()) != 2 {
		t.Fatalf("group filter %s", r.Body)
	}
	if r := s.do("GET", "/admin/user-groups", s.tok, nil); r.List()[0].(map[string]any)["users_count"].(float64) != 2 {
		t.Fatalf("groups %s", r.Body)
	}
	own("/users/bulk-set-group", map[string]any{"ids": []int64{d.alpha}, "group_id": nil})
	webtest.ExpectErr(t, s.do("POST", "/users/bulk-set-group", s.tok, map[string]any{"ids": []int64{d.alpha}}), 400, "ERR_VALIDATION", "group_id_required")
	own("/users/bulk-set-profile", map[string]any{"ids": []int64{d.alpha}, "profile_id": plan})
	own("/users/bulk-set-parent", map[string]any{"ids": []int64{d.alpha}, "parent_id": d.res})
	if r := s.do("GET", fmt.Sprintf("/users/%d", d.alpha), rtok, nil); r.Status != 200 || r.Data()["profile_id"].(float64) != float64(plan) {
		t.Fatalf("moved into the reseller's scope: %s", r.Body)
	}
	webtest.ExpectErr(t, s.do("POST", "/users/bulk-set-parent", rtok, map[string]any{"ids": []int64{d.alpha}, "parent_id": s.owner}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	dc := own("/users/bulk-disconnect", map[string]any{"ids": []int64{d.charlie, d.echo}})
	if f := dc.Data()["failed"].([]any); len(f) != 2 || f[1].(map[string]any)["message"] != "not_online" {
		t.Fatalf("disconnect %s", dc.Body)
	}
	own("/users/bulk-delete", map[string]any{"ids": []int64{d.echo}})
	if n, err := s.ten.CountUsers(suCtx); err != nil || n != 3 {
		t.Fatalf("users_count %d %v", n, err)
	}
	webtest.ExpectErr(t, s.do("POST", "/users/bulk-enable", s.tok, map[string]any{"ids": []int64{}}), 400, "ERR_VALIDATION", "ids_required")
	webtest.ExpectErr(t, s.do("POST", "/users/bulk-deposit", s.tok, map[string]any{"ids": []int64{d.alpha}, "amount": 1}), 400, "ERR_VALIDATION", "request_id_required")
}

func TestUsersCustomFields(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	mk := func(body map[string]any) {
		t.Helper()
		if r := s.do("POST", "/admin/forms", s.tok, body); r.Status != 201 {
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
		return s.do("POST", "/users", s.tok, map[string]any{"username": "cf", "password": "x", "custom_fields": cf})
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
	if s.scalar(`SELECT COUNT(*) FROM users`) != 0 {
		t.Fatal("stored after refusal")
	}
	r = post(map[string]any{"building": " B-12 ", "floor": "3", "since": "2024-05-06 10:00:00", "tier": "gold", "vip": "yes"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.Data()["id"]
	cf := s.do("GET", fmt.Sprintf("/users/%v", id), s.tok, nil).Data()["custom_fields"].(map[string]any)
	if cf["building"] != "B-12" || cf["floor"].(float64) != 3 || cf["since"] != "2024-05-06" || cf["tier"] != "gold" || cf["vip"] != true {
		t.Fatalf("stored %v", cf)
	}
	// PATCH merges: a null removes one field, the required one stays.
	pr := s.do("PATCH", fmt.Sprintf("/users/%v", id), s.tok, map[string]any{"custom_fields": map[string]any{"tier": nil, "floor": 4}})
	cf = pr.Data()["custom_fields"].(map[string]any)
	if _, has := cf["tier"]; has || cf["floor"].(float64) != 4 || cf["building"] != "B-12" {
		t.Fatalf("patched %s", pr.Body)
	}
	webtest.ExpectErr(t, s.do("PATCH", fmt.Sprintf("/users/%v", id), s.tok, map[string]any{"custom_fields": map[string]any{"building": nil}}),
		400, "ERR_VALIDATION", "custom_field_required")
}

func TestUsersOwnerContext(t *testing.T) {
	t.Parallel()
	s := newSu(t)
	res, rtok := s.manager(s.owner, "ctxres", resellerCodes...)
	sub, _ := s.manager(res, "ctxsub")
	open := s.plan(map[string]any{"name": "Open"})
	granted := s.plan(map[string]any{"name": "Granted", "manager_ids": []int64{res}})
	s.plan(map[string]any{"name": "Hidden", "all_managers": false})
	s.plan(map[string]any{"name": "Off", "enabled": false})
	oc := s.do("GET", "/users/owner-context", rtok, nil).Data()
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
	_, subTok := s.manager(res, "ctxsub2", resellerCodes...)
	if r := s.do("POST", "/users", subTok, map[string]any{"username": "g1", "password": "x", "profile_id": granted}); r.Status != 201 {
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
	s := newSu(b)
	s.App.Limiter = suNoLimit{}
	sys := s.System("acme")
	role, err := identity.CreateRole(suCtx, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "bench-reseller"},
		Permissions: app.Opt[[]string]{Set: true, V: resellerCodes}})
	if err != nil {
		b.Fatal(err)
	}
	mgr := func(parent int64, name string) int64 {
		m, err := identity.CreateManager(suCtx, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name},
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
		p1 := mgr(s.owner, l1)
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
	s.exec(`ANALYZE`)
	rtok := s.Login("acme", "r3", webtest.Password)
	run := func(name, token, query string, total float64) {
		b.Run(name, func(b *testing.B) {
			r := s.do("GET", "/users?"+query, token, nil)
			if r.Status != 200 || (total > 0 && r.Meta()["total"].(float64) != total) {
				b.Fatalf("%d %s", r.Status, r.Body[:min(len(r.Body), 300)])
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if r := s.do("GET", "/users?"+query, token, nil); r.Status != 200 {
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
	run("default", s.tok, "", 100000)
	run("q_two_filters", s.tok, "q=hana&filter[enabled]=true&filter[expired]=false", 0)
	run("q_phone_two_filters", s.tok, "q=5550012&filter[enabled]=true&filter[expired]=false", 0)
	run("scoped_reseller", rtok, "", 10000)
}

func subsImport(s *su, parent, csvText string) (int, error) {
	act, err := app.SystemActor(suCtx, s.ten)
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
	rep, err := dataimport.Import(suCtx, act, f.Name(), "csv", dataimport.Spec{Parent: parent})
	if err != nil {
		return 0, err
	}
	if len(rep.Errors) > 0 {
		return 0, fmt.Errorf("%v", rep.Errors[0])
	}
	return rep.Imported, nil
}
