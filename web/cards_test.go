package web_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// Helpers of the cards tests (prefix cd).

// cdReseller creates a manager under the root holding a role with the
// card codes, and returns its id and session token.
func cdReseller(t *testing.T, k *webtest.Kit, name string) (int64, string) {
	t.Helper()
	sys := k.System("acme")
	role, err := identity.CreateRole(webtest.Background, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "cards-" + name},
		Permissions: app.Opt[[]string]{Set: true, V: []string{"prm_cards_verify", "prm_cards_list", "prm_cards_generate_user", "prm_users_index"}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := identity.CreateManager(webtest.Background, sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name},
		Password: app.Opt[string]{Set: true, V: webtest.Password}, RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	return m.ID, k.Login("acme", name, webtest.Password)
}

func TestCardsHTTPGenerateRedeemSeries(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	tok := k.Owner("acme")
	plan := webtest.CreatePlan(t, k, "Month")
	owner := k.System("acme").ManagerID

	body := map[string]any{"type": "prepaid", "quantity": 12, "face_value": 7.5, "expiration": webtest.NextYear + " 12:00:00",
		"plan_profile_id": plan, "code_length": 10, "code_charset": "alnum_no_ambig", "owner_manager_id": owner, "request_id": "gen-1",
		"name": "Summer", "note": "for the kiosk"}
	r := k.Do("POST", "acme", "/api/v1/card-batches", tok, body)
	if r.Status != 202 || r.Data()["status"] != "generating" || r.Data()["mode"] != "voucher_account" || r.Data()["replay"] != false {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := webtest.Num(r.Data()["batch_id"])
	rep := k.Do("POST", "acme", "/api/v1/card-batches", tok, body)
	if rep.Status != 200 || rep.Data()["replay"] != true || webtest.Num(rep.Data()["batch_id"]) != id || rep.Data()["status"] != "generating" {
		t.Fatalf("replay: %d %s", rep.Status, rep.Body)
	}
	xrtest.Eventually(t, "ready", func() bool {
		return k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil).Data()["status"] == "ready"
	})
	g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil).Data()
	for key, want := range map[string]any{"quantity": 12.0, "processed": 12.0, "used": 0.0, "available": 12.0, "sold_online": 0.0, "sold_counter": 0.0,
		"stuck_sale": 0.0, "suspended": false, "pdf_ready": false, "has_cards": true, "print_count": 0.0, "face_value": 7.5, "code_length": 10.0,
		"code_charset": "alnum_no_ambig", "card_mode": "voucher_account", "plan_name": "Month", "owner_manager_id": float64(owner)} {
		if g[key] != want {
			t.Errorf("series %s = %v, want %v", key, g[key], want)
		}
	}
	if g["printed_at"] != nil || g["expiration"] != webtest.NextYear+" 12:00:00" {
		t.Errorf("series printed_at %v expiration %v", g["printed_at"], g["expiration"])
	}
	// Lists and filters.
	for q, n := range map[string]int{"filter[status]=ready": 1, "filter[status]=generating": 0, "filter[card_mode]=voucher_account": 1,
		"filter[suspended]=false": 1, "q=Month": 1, "q=kiosk": 1, "q=" + strconv.FormatInt(id, 10): 1, "filter[owner_manager_id]=999": 0} {
		l := k.Do("GET", "acme", "/api/v1/card-batches?"+q, tok, nil)
		if l.Status != 200 || len(l.List()) != n || webtest.Num(l.Meta()["total"]) != int64(n) {
			t.Errorf("list %s: %d %s", q, l.Status, l.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/card-batches?filter[status]=done", tok, nil), 400, "ERR_VALIDATION", "invalid_filter")
	codes := webtest.SeriesCodes(t, k, tok, id)
	if len(codes) != 12 || len(codes[0]) != 10 {
		t.Fatalf("codes: %v", codes)
	}
	// Redeem; replay; conflict.
	u := webtest.CreateUser(t, k, "alice", owner)
	red := map[string]any{"code": codes[0], "user_id": u, "request_id": "red-1"}
	r = k.Do("POST", "acme", "/api/v1/cards/redeem", tok, red)
	if r.Status != 200 || r.Data()["mode"] != "voucher_account" || r.Data()["effect_applied"].(map[string]any)["type"] != "activation" {
		t.Fatalf("redeem: %d %s", r.Status, r.Body)
	}
	if _, ok := r.Data()["new_balance"]; !ok {
		t.Fatalf("fresh redemption without new_balance: %s", r.Body)
	}
	rr := k.Do("POST", "acme", "/api/v1/cards/redeem", tok, red)
	if _, ok := rr.Data()["new_balance"]; rr.Status != 200 || ok || rr.Data()["card_id"] != r.Data()["card_id"] ||
		fmt.Sprint(rr.Data()["effect_applied"]) != fmt.Sprint(r.Data()["effect_applied"]) {
		t.Fatalf("replay: %d %s", rr.Status, rr.Body)
	}
	red["code"] = codes[1]
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/redeem", tok, red), 409, "ERR_CONFLICT", "request_id_conflict")
	red["code"], red["request_id"] = codes[0], "red-2"
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/redeem", tok, red), 409, "ERR_CONFLICT", "card_consumed")
	rid := webtest.Num(r.Data()["redemption_id"])
	if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/cards/redemptions/%d", rid), tok, nil); g.Status != 200 || g.Data()["channel"] != "staff" {
		t.Fatalf("redemption: %d %s", g.Status, g.Body)
	}
	// Suspend / release with the message key and counters.
	s := k.Do("POST", "acme", fmt.Sprintf("/api/v1/card-batches/%d/suspend", id), tok, nil)
	if s.Status != 200 || s.Data()["message_key"] != "card_batch_suspended" || webtest.Num(s.Data()["changed"]) != 11 {
		t.Fatalf("suspend: %d %s", s.Status, s.Body)
	}
	g = k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil).Data()
	if g["available"] != 0.0 || g["used"] != 1.0 || g["suspended"] != true || g["status"] != "ready" {
		t.Fatalf("suspended counters: %v", g)
	}
	red["code"], red["request_id"] = codes[2], "red-3"
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/redeem", tok, red), 409, "ERR_CONFLICT", "card_batch_suspended")
	s = k.Do("POST", "acme", fmt.Sprintf("/api/v1/card-batches/%d/release", id), tok, nil)
	if s.Status != 200 || webtest.Num(s.Data()["changed"]) != 11 {
		t.Fatalf("release: %d %s", s.Status, s.Body)
	}
	if g = k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil).Data(); g["available"] != 11.0 {
		t.Fatalf("released counters: %v", g)
	}
	// Printed: stamps, counts, status unchanged.
	p := k.Do("POST", "acme", fmt.Sprintf("/api/v1/card-batches/%d/printed", id), tok, nil)
	if p.Status != 200 || p.Data()["print_count"] != 1.0 || p.Data()["printed_at"] == nil || p.Data()["status"] != "ready" {
		t.Fatalf("printed: %d %s", p.Status, p.Body)
	}
	// Search (normalised) and timeline.
	sr := k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword="+codes[0][:4]+"-"+codes[0][4:], tok, nil)
	if sr.Status != 200 || sr.Data()["state"] != "consumed" || sr.Data()["used_by_username"] != "alice" || sr.Data()["plan_name"] != "Month" {
		t.Fatalf("search: %d %s", sr.Status, sr.Body)
	}
	tl := k.Do("GET", "acme", fmt.Sprintf("/api/v1/cards/%d/timeline", webtest.Num(sr.Data()["card_id"])), tok, nil)
	if tl.Status != 200 || len(tl.Data()["events"].([]any)) != 5 {
		t.Fatalf("timeline: %d %s", tl.Status, tl.Body)
	}
	// Delete refused now.
	webtest.ExpectErr(t, k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil), 409, "ERR_CONFLICT", "card_batch_in_use")
	// Bulk shape.
	b := k.Do("POST", "acme", "/api/v1/card-batches/bulk-printed", tok, map[string]any{"ids": []int64{id, 4242}})
	if b.Status != 200 || len(b.Data()["updated"].([]any)) != 1 || len(b.Data()["failed"].([]any)) != 1 {
		t.Fatalf("bulk: %d %s", b.Status, b.Body)
	}
	cl := k.Do("GET", "acme", "/api/v1/card-batches/code-length?code_charset=numeric&quantity=1000", tok, nil)
	if cl.Status != 200 || cl.Data()["live_cards"] != 11.0 || cl.Data()["min_length"] != 10.0 {
		t.Fatalf("code-length: %d %s", cl.Status, cl.Body)
	}
}

func TestCardsHTTPValidation(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	base := func() map[string]any {
		return map[string]any{"type": "refill", "quantity": 5, "face_value": 10, "expiration": webtest.NextYear, "request_id": "v1"}
	}
	for _, c := range []struct {
		key    string
		val    any
		reason string
		field  string
	}{
		{"expiration", "2020-01-01", "invalid_expiration", "expiration"},
		{"expiration", "tomorrow", "invalid_expiration", "expiration"},
		{"code_charset", "hex", "invalid_enum", "code_charset"},
		{"type", "gift", "invalid_enum", "type"},
		{"face_value", 1.2345, "too_many_decimals", "face_value"},
		{"request_id", nil, "request_id_required", "request_id"},
		{"type", "prepaid", "plan_profile_id_required", "plan_profile_id"},
	} {
		b := base()
		if c.val == nil {
			delete(b, c.key)
		} else {
			b[c.key] = c.val
		}
		r := k.Do("POST", "acme", "/api/v1/card-batches", tok, b)
		if r.Status != 400 || r.Reason() != c.reason || r.Field() != c.field {
			t.Errorf("%s=%v: %d %s", c.key, c.val, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/cards/search?kind=pin&keyword=1", tok, nil), 400, "ERR_VALIDATION", "invalid_enum")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/redeem", tok, map[string]any{"code": "1", "user_id": 1}), 400, "ERR_VALIDATION", "request_id_required")
}

// Outside the subtree answers byte for byte like unknown.
func TestCardsHTTPScope404Identical(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	tok := k.Owner("acme")
	r1, tok1 := cdReseller(t, k, "r1")
	_, tok2 := cdReseller(t, k, "r2")
	id := webtest.CreateSeries(t, k, tok, map[string]any{"type": "refill", "quantity": 2, "face_value": 5, "expiration": webtest.NextYear,
		"owner_manager_id": r1, "request_id": "s1"})
	codes := webtest.SeriesCodes(t, k, tok, id)
	card := k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword="+codes[0], tok, nil)
	cardID := webtest.Num(card.Data()["card_id"])
	u2 := webtest.CreateUser(t, k, "u2", idScalarCD(k, "SELECT id FROM managers WHERE username = 'r2'"))
	same := func(a, b webtest.Resp, what string) {
		t.Helper()
		if a.Status != 404 || !bytes.Equal(a.Body, b.Body) {
			t.Errorf("%s: %d %s vs %d %s", what, a.Status, a.Body, b.Status, b.Body)
		}
	}
	h := []string{"X-Request-Id", "same-id"}
	same(k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword="+codes[0], tok2, nil, h...),
		k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword=99999999999", tok2, nil, h...), "search")
	same(k.Do("GET", "acme", fmt.Sprintf("/api/v1/cards/%d/timeline", cardID), tok2, nil, h...),
		k.Do("GET", "acme", "/api/v1/cards/999999/timeline", tok2, nil, h...), "timeline")
	same(k.Do("POST", "acme", "/api/v1/cards/redeem", tok2, map[string]any{"code": codes[0], "user_id": u2, "request_id": "x1"}, h...),
		k.Do("POST", "acme", "/api/v1/cards/redeem", tok2, map[string]any{"code": "99999999999", "user_id": u2, "request_id": "x2"}, h...), "redeem")
	same(k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok2, nil, h...),
		k.Do("GET", "acme", "/api/v1/card-batches/999999", tok2, nil, h...), "series")
	// A subscriber outside the subtree, with a card inside it: the same 404
	// as an unknown subscriber.
	same(k.Do("POST", "acme", "/api/v1/cards/redeem", tok1, map[string]any{"code": codes[1], "user_id": u2, "request_id": "x3"}, h...),
		k.Do("POST", "acme", "/api/v1/cards/redeem", tok1, map[string]any{"code": codes[1], "user_id": 999999, "request_id": "x4"}, h...), "subscriber")
	// r1 itself redeems it onto its own subscriber.
	u1 := webtest.CreateUser(t, k, "u1", r1)
	if r := k.Do("POST", "acme", "/api/v1/cards/redeem", tok1, map[string]any{"code": codes[1], "user_id": u1, "request_id": "x5"}); r.Status != 200 {
		t.Fatalf("in scope: %d %s", r.Status, r.Body)
	}
}

// idScalarCD reads one integer of tenant acme.
func idScalarCD(k *webtest.Kit, q string, args ...any) int64 {
	k.T.Helper()
	var n int64
	if err := k.Acquire("acme").DB.R.QueryRowContext(webtest.Background, q, args...).Scan(&n); err != nil {
		k.T.Fatalf("%s: %v", q, err)
	}
	return n
}

// Denied lookups count in the card_search bucket like found ones.
func TestCardsHTTPSearchBucketCountsDenials(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, false, newIDStickyLimiter())
	tok := k.Owner("acme")
	for i := 0; i < k.App.Buckets()["card_search"].Limit; i++ {
		r := k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword=0000"+strconv.Itoa(i), tok, nil)
		if r.Status != 404 {
			t.Fatalf("lookup %d: %d %s", i, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/cards/search?kind=code&keyword=1", tok, nil), 429, "ERR_RATE_LIMITED", "rate_limited")
}

var (
	cdPage  = regexp.MustCompile(`/Type\s*/Page[^s]`)
	cdStart = regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`)
)

func TestCardsHTTPPDFAndPrintJobAndPublicCreate(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	tok := k.Owner("acme")
	plan := webtest.CreatePlan(t, k, "Day")
	id := webtest.CreateSeries(t, k, tok, map[string]any{"type": "prepaid", "quantity": 26, "face_value": 2, "expiration": webtest.NextYear,
		"plan_profile_id": plan, "request_id": "p1"})
	r := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d/pdf", id), tok, nil)
	if r.Status != 202 || r.Data()["job_id"] == nil {
		t.Fatalf("pdf: %d %s", r.Status, r.Body)
	}
	var pdf webtest.Resp
	xrtest.Eventually(t, "pdf", func() bool {
		pdf = k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d/pdf", id), tok, nil)
		return pdf.Status == 200
	})
	if ct := pdf.Header.Get("Content-Type"); ct != "application/pdf" || !bytes.HasPrefix(pdf.Body, []byte("%PDF-")) {
		t.Fatalf("pdf: %s %q", ct, pdf.Body[:min(len(pdf.Body), 20)])
	}
	m := cdStart.FindSubmatch(pdf.Body)
	if m == nil {
		t.Fatal("no trailer")
	}
	off, _ := strconv.Atoi(string(m[1]))
	// The default card_sheet design lays 10 cards on a page: 26 cards, 3 pages.
	if !bytes.HasPrefix(pdf.Body[off:], []byte("xref")) || len(cdPage.FindAll(pdf.Body, -1)) != 3 {
		t.Fatalf("pdf structure: xref at %d, %d pages", off, len(cdPage.FindAll(pdf.Body, -1)))
	}
	if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil); g.Data()["pdf_ready"] != true {
		t.Fatalf("pdf_ready: %s", g.Body)
	}
	pj := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d/print-job?page_size=5", id), tok, nil)
	if pj.Status != 200 || len(pj.Data()["cards"].([]any)) != 5 || pj.Data()["total"] != 26.0 {
		t.Fatalf("print-job: %d %s", pj.Status, pj.Body)
	}
	first := pj.Data()["cards"].([]any)[0].(map[string]any)
	if first["qr_payload"] != "xr:c:"+first["code"].(string) || first["username"] == nil || first["password"] == nil {
		t.Fatalf("print card: %v", first)
	}
	// A public, tenant-from-host signup with a voucher.
	code := first["code"].(string)
	c := k.Do("POST", "acme", "/api/v1/cards/redeem-create", "", map[string]any{"code": code, "username": "walkin", "password": "walk-in-pass-1", "request_id": "rc1"})
	if c.Status != 200 || c.Data()["username"] != "walkin" || c.Data()["mode"] != "voucher_account" {
		t.Fatalf("redeem-create: %d %s", c.Status, c.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/cards/redeem-create", "", map[string]any{"code": code, "username": "other", "password": "walk-in-pass-1", "request_id": "rc2"}),
		409, "ERR_CONFLICT", "card_consumed")
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/cards/redeem-create", "", map[string]any{"code": code, "username": "x", "password": "walk-in-pass-1", "request_id": "rc3"}),
		404, "ERR_NOT_FOUND", "not_found")
	// The sheet is stale once the content changed; the next call renders again.
	k.Do("POST", "acme", fmt.Sprintf("/api/v1/card-batches/%d/suspend", id), tok, nil)
	if g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), tok, nil); g.Data()["pdf_ready"] != false {
		t.Fatalf("pdf_ready after suspend: %s", g.Body)
	}
}
