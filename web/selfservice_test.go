package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/app/selfservice"
	"xr/internal/webtest"
)

// Helpers of the self-service tests (prefix ss).

// ssKit is a tenant with two plans, Basic (30 for 30 days) and Plus (60
// for 30 days); Basic offers a change to Plus and a 3-day extension for 2
// (at most twice a month). The clock stands still at now.
type ssKit struct {
	*webtest.Acme
	now          time.Time
	basic, plus  int64
	prefixes     []string
	subscriberNo int
}

func newSSKit(t *testing.T) *ssKit {
	s := webtest.NewAcme(t)
	k := &ssKit{Acme: s, now: time.Now().UTC().Truncate(time.Second), prefixes: []string{"/portal", "/user"}}
	s.App.SetClock(func() time.Time { return k.now })
	k.basic = s.Plan(map[string]any{"name": "Basic", "price": 30, "duration_days": 30})
	k.plus = s.Plan(map[string]any{"name": "Plus", "price": 60, "duration_days": 30})
	r := s.Call("PUT", fmt.Sprintf("/admin/profiles/%d/self-service", k.basic), s.Tok, map[string]any{"change_targets": []int64{k.plus},
		"extension": map[string]any{"days": 3, "price": 2, "max_per_month": 2}})
	if r.Status != 200 {
		t.Fatalf("policy: %d %s", r.Status, r.Body)
	}
	s.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('selfservice_change_fee', '1')`)
	return k
}

// subscriber creates a subscriber on Basic expiring in 10 days and 1 hour
// with balance, and signs it in to the portal.
func (k *ssKit) subscriber(balance float64, debtLimit any) (int64, string) {
	k.T.Helper()
	k.subscriberNo++
	name := fmt.Sprintf("ss-%d", k.subscriberNo)
	body := map[string]any{"username": name, "password": "radius-" + name, "profile_id": k.basic,
		"expiration": app.FormatTime(k.now.Add(10*24*time.Hour + time.Hour))}
	if debtLimit != nil {
		body["debt_limit"] = debtLimit
	}
	id := k.User("", body)
	if balance > 0 {
		if r := k.Call("POST", fmt.Sprintf("/users/%d/deposit", id), k.Tok, map[string]any{"amount": balance, "request_id": "dep-" + name}); r.Status != 200 {
			k.T.Fatalf("deposit: %d %s", r.Status, r.Body)
		}
	}
	return id, webtest.PortalLogin(k.T.(*testing.T), k.Acme, name, "radius-"+name)
}

// TestSelfServiceQuoteExecuteParity: for every intent the charge of the
// execution (by quote id or by the same body, under either prefix)
// equals the quote's total, and the wallet moves by exactly that.
func TestSelfServiceQuoteExecuteParity(t *testing.T) {
	t.Parallel()
	k := newSSKit(t)
	cases := []struct {
		name    string
		quote   map[string]any
		path    string
		body    map[string]any // executed without quote_id
		total   float64
		byQuote bool
	}{
		// 10 whole unused days of Basic (30/30 days) are worth 10: 60 - 10 + fee 1.
		{name: "change now by quote", quote: map[string]any{"intent": "change_now", "profile_id": k.plus}, path: "/change-profile", total: 51, byQuote: true},
		{name: "change now by body", quote: map[string]any{"intent": "change_now", "profile_id": k.plus}, path: "/change-profile",
			body: map[string]any{"intent": "change_now", "profile_id": k.plus}, total: 51},
		{name: "change at renewal by quote", quote: map[string]any{"intent": "change_at_renewal", "profile_id": k.plus}, path: "/change-profile", total: 1, byQuote: true},
		{name: "change at renewal by body", quote: map[string]any{"intent": "change_at_renewal", "profile_id": k.plus}, path: "/change-profile",
			body: map[string]any{"intent": "change_at_renewal", "profile_id": k.plus}, total: 1},
		{name: "extend by quote", quote: map[string]any{"intent": "extend"}, path: "/extend", total: 2, byQuote: true},
		{name: "extend by body", quote: map[string]any{"intent": "extend"}, path: "/extend", body: map[string]any{}, total: 2},
		{name: "renew", quote: map[string]any{"intent": "renew"}, path: "/renew", body: map[string]any{}, total: 30},
	}
	for i, c := range cases {
		prefix := k.prefixes[i%2]
		id, tok := k.subscriber(100, nil)
		q := k.Call("POST", prefix+"/quote", tok, c.quote)
		if q.Status != 200 || ptNum(q.Data()["total"]) != c.total || q.Data()["sufficient"] != true {
			t.Fatalf("%s: quote %d %s", c.name, q.Status, q.Body)
		}
		body := c.body
		if c.byQuote {
			body = map[string]any{"quote_id": q.Data()["id"]}
		}
		body["request_id"] = fmt.Sprintf("ss-parity-%d", i)
		r := k.Call("POST", prefix+c.path, tok, body)
		if r.Status != 200 {
			t.Fatalf("%s: execute %d %s", c.name, r.Status, r.Body)
		}
		charged := ptNum(r.Data()["charged"])
		if c.path == "/renew" {
			charged = ptNum(r.Data()["price"])
		}
		if charged != c.total {
			t.Fatalf("%s: charged %v, quoted %v", c.name, charged, c.total)
		}
		if bal := k.Scalar(`SELECT balance FROM users WHERE id = ?`, id); bal != int64((100-c.total)*1000) {
			t.Fatalf("%s: balance %d", c.name, bal)
		}
		if sum := k.Scalar(`SELECT -SUM(amount) FROM user_ledger WHERE user_id = ? AND amount < 0`, id); sum != int64(c.total*1000) {
			t.Fatalf("%s: ledger debits %d", c.name, sum)
		}
		// A replay charges nothing more.
		if c.path != "/renew" {
			rep := k.Call("POST", k.prefixes[(i+1)%2]+c.path, tok, body)
			if rep.Status != 200 || rep.Data()["replay"] != true || k.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != int64((100-c.total)*1000) {
				t.Fatalf("%s: replay %d %s", c.name, rep.Status, rep.Body)
			}
		}
		switch c.quote["intent"] {
		case "change_now":
			if k.Scalar(`SELECT profile_id FROM users WHERE id = ?`, id) != k.plus ||
				k.Scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND expiration = ?`, id, app.FormatTime(k.now.Add(30*24*time.Hour))) != 1 {
				t.Fatalf("%s: plan or expiration not changed", c.name)
			}
		case "change_at_renewal":
			if k.Scalar(`SELECT profile_id FROM users WHERE id = ?`, id) != k.basic || k.Scalar(`SELECT profile_id FROM ss_pending_changes WHERE user_id = ?`, id) != k.plus {
				t.Fatalf("%s: pending change not stored", c.name)
			}
		case "extend":
			if k.Scalar(`SELECT COUNT(*) FROM ss_extensions WHERE user_id = ? AND price = 2000 AND days = 3`, id) != 1 {
				t.Fatalf("%s: extension not stored", c.name)
			}
		}
		if c.byQuote && k.Scalar(`SELECT COUNT(*) FROM ss_quotes WHERE id = ? AND used_at IS NOT NULL`, int64(ptNum(q.Data()["id"]))) != 1 {
			t.Fatalf("%s: quote not marked used", c.name)
		}
	}
}

// TestSelfServiceRefusalsStoreNothing: each refusal answers its reason
// and writes no ledger row, activation, extension or idempotency record.
func TestSelfServiceRefusalsStoreNothing(t *testing.T) {
	t.Parallel()
	k := newSSKit(t)
	other := k.Plan(map[string]any{"name": "Other", "price": 5, "duration_days": 30})
	id, tok := k.subscriber(0, 0) // no money, no credit
	stored := func() int64 {
		return k.Scalar(`SELECT (SELECT COUNT(*) FROM user_ledger WHERE user_id = ?1) + (SELECT COUNT(*) FROM user_activations WHERE user_id = ?1)
			+ (SELECT COUNT(*) FROM ss_extensions WHERE user_id = ?1) + (SELECT COUNT(*) FROM ss_pending_changes WHERE user_id = ?1)
			+ (SELECT COUNT(*) FROM ss_quotes WHERE user_id = ?1) + (SELECT COUNT(*) FROM idempotency)`, id)
	}
	before := stored()
	for _, p := range k.prefixes {
		webtest.ExpectErr(t, k.Call("POST", p+"/quote", tok, map[string]any{"intent": "change_now", "profile_id": other}), 409, app.CodeConflict, "profile_not_allowed")
		webtest.ExpectErr(t, k.Call("POST", p+"/change-profile", tok, map[string]any{"profile_id": other, "request_id": "r-na" + p}), 409, app.CodeConflict, "profile_not_allowed")
		webtest.ExpectErr(t, k.Call("POST", p+"/change-profile", tok, map[string]any{"profile_id": k.plus, "request_id": "r-ib" + p}), 409, app.CodeConflict, "insufficient_balance")
		webtest.ExpectErr(t, k.Call("POST", p+"/extend", tok, map[string]any{"request_id": "r-ext" + p}), 409, app.CodeConflict, "insufficient_balance")
		webtest.ExpectErr(t, k.Call("POST", p+"/extend", tok, map[string]any{}), 400, app.CodeValidation, "request_id_required")
		webtest.ExpectErr(t, k.Call("POST", p+"/quote", tok, map[string]any{"intent": "bogus"}), 400, app.CodeValidation, "invalid_enum")
		webtest.ExpectErr(t, k.Call("POST", p+"/change-profile", tok, map[string]any{"quote_id": 999999, "request_id": "r-q" + p}), 400, app.CodeValidation, "quote_not_found")
	}
	if got := stored(); got != before {
		t.Fatalf("refusals stored rows: %d -> %d", before, got)
	}
	// A quote priced while the wallet could not pay still cannot be executed.
	q := k.Call("POST", "/portal/quote", tok, map[string]any{"intent": "change_now", "profile_id": k.plus})
	if q.Status != 200 || q.Data()["sufficient"] != false {
		t.Fatalf("quote: %d %s", q.Status, q.Body)
	}
	webtest.ExpectErr(t, k.Call("POST", "/user/change-profile", tok, map[string]any{"quote_id": q.Data()["id"], "request_id": "r-q2"}), 409, app.CodeConflict, "insufficient_balance")
	if k.Scalar(`SELECT COUNT(*) FROM ss_quotes WHERE user_id = ? AND used_at IS NOT NULL`, id) != 0 {
		t.Fatal("a refused execution used the quote")
	}

	// The month's cap: Basic allows two extensions.
	_, tok2 := k.subscriber(100, nil)
	for i := 0; i < 2; i++ {
		if r := k.Call("POST", k.prefixes[i]+"/extend", tok2, map[string]any{"request_id": fmt.Sprintf("x-%d", i)}); r.Status != 200 {
			t.Fatalf("extend %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := k.Call("POST", "/portal/extend", tok2, map[string]any{"request_id": "x-3"})
	webtest.ExpectErr(t, r, 409, app.CodeConflict, "extension_limit")
	if r.JSON["error"].(map[string]any)["details"].(map[string]any)["max_per_month"] != 2.0 {
		t.Fatalf("details: %s", r.Body)
	}
	for _, p := range k.prefixes {
		l := k.Call("GET", p+"/extensions", tok2, nil)
		if l.Status != 200 || len(l.List()) != 2 || l.List()[0].(map[string]any)["state"] != "active" || ptNum(l.List()[0].(map[string]any)["price"]) != 2 {
			t.Fatalf("extensions: %d %s", l.Status, l.Body)
		}
		one := k.Call("GET", fmt.Sprintf("%s/extensions/%v", p, l.List()[0].(map[string]any)["id"]), tok2, nil)
		if one.Status != 200 || one.Data()["days"] != 3.0 {
			t.Fatalf("extension: %d %s", one.Status, one.Body)
		}
		// Another subscriber's extension is a missing one.
		webtest.ExpectErr(t, k.Call("GET", fmt.Sprintf("%s/extensions/%v", p, l.List()[0].(map[string]any)["id"]), tok, nil), 404, app.CodeNotFound, "not_found")
	}
	// A used quote is refused.
	q = k.Call("POST", "/portal/quote", tok2, map[string]any{"intent": "change_at_renewal", "profile_id": k.plus})
	if r := k.Call("POST", "/portal/change-profile", tok2, map[string]any{"quote_id": q.Data()["id"], "request_id": "c-1"}); r.Status != 200 {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Call("POST", "/portal/change-profile", tok2, map[string]any{"quote_id": q.Data()["id"], "request_id": "c-2"}), 409, app.CodeConflict, "quote_used")
	// A quote lives 15 minutes.
	q = k.Call("POST", "/user/quote", tok2, map[string]any{"intent": "change_now", "profile_id": k.plus})
	k.now = k.now.Add(selfservice.QuoteTTL)
	webtest.ExpectErr(t, k.Call("POST", "/user/change-profile", tok2, map[string]any{"quote_id": q.Data()["id"], "request_id": "c-3"}), 409, app.CodeConflict, "quote_expired")
	tok2 = webtest.PortalLogin(t, k.Acme, "ss-2", "radius-ss-2")

	// Feature switches.
	k.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('portal_feature_extend', 'false'), ('portal_feature_change_profile', 'false')`)
	for _, p := range k.prefixes {
		webtest.ExpectErr(t, k.Call("POST", p+"/extend", tok2, map[string]any{"request_id": "x-9"}), 403, app.CodeForbidden, "feature_disabled")
		webtest.ExpectErr(t, k.Call("GET", p+"/extensions", tok2, nil), 403, app.CodeForbidden, "feature_disabled")
		webtest.ExpectErr(t, k.Call("POST", p+"/quote", tok2, map[string]any{"intent": "renew"}), 403, app.CodeForbidden, "feature_disabled")
		webtest.ExpectErr(t, k.Call("POST", p+"/change-profile", tok2, map[string]any{"profile_id": k.plus, "request_id": "c-9"}), 403, app.CodeForbidden, "feature_disabled")
	}
}

// TestSelfServiceAutoRenewJob: the job renews at the expiration from the
// wallet and notifies; at the next expiration the wallet is short, and the
// job records why and notifies once.
func TestSelfServiceAutoRenewJob(t *testing.T) {
	t.Parallel()
	k := newSSKit(t)
	id, tok := k.subscriber(30, 0)
	k.Exec(`UPDATE users SET expiration = ?, email = 'ss1@example.test' WHERE id = ?`, app.FormatTime(k.now.Add(time.Hour)), id)
	for _, p := range k.prefixes {
		r := k.Call("POST", p+"/auto-renew", tok, map[string]any{"enabled": true})
		if r.Status != 200 || r.Data()["enabled"] != true {
			t.Fatalf("auto-renew: %d %s", r.Status, r.Body)
		}
	}
	if n := k.Scalar(`SELECT COUNT(*) FROM jobs WHERE kind = 'selfservice.auto_renew' AND state = 'queued'`); n != 1 {
		t.Fatalf("queued jobs %d", n)
	}
	ctx := context.Background()
	k.now = k.now.Add(2 * time.Hour)
	if n, err := k.App.Jobs.RunDue(ctx, "acme", k.now); err != nil || n != 1 {
		t.Fatalf("run due: %d %v", n, err)
	}
	if k.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ? AND price = 30000`, id) != 1 || k.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != 0 ||
		k.Scalar(`SELECT COUNT(*) FROM ss_auto_renew_runs WHERE user_id = ? AND outcome = 'renewed'`, id) != 1 ||
		k.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE user_id = ? AND channel = 'inbox' AND template = 'selfservice.auto_renewed'`, id) != 1 ||
		k.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE user_id = ? AND channel = 'email' AND recipient = 'ss1@example.test' AND template = 'selfservice.auto_renewed'`, id) != 1 {
		t.Fatal("not renewed, recorded and notified")
	}
	// The next run waits for the new expiration; the wallet is empty then.
	k.now = k.now.Add(31 * 24 * time.Hour)
	if n, err := k.App.Jobs.RunDue(ctx, "acme", k.now); err != nil || n < 1 { // and the outbox's sending
		t.Fatalf("run due: %d %v", n, err)
	}
	if k.Scalar(`SELECT COUNT(*) FROM ss_auto_renew_runs WHERE user_id = ? AND outcome = 'failed' AND reason = 'insufficient_balance'`, id) != 1 ||
		k.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE user_id = ? AND channel = 'inbox' AND template = 'selfservice.auto_renew_failed'`, id) != 1 ||
		k.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ?`, id) != 1 {
		t.Fatal("failure not recorded or notified")
	}
	// Retried an hour later: still short, recorded and notified once.
	k.now = k.now.Add(selfservice.AutoRenewRetry)
	if n, err := k.App.Jobs.RunDue(ctx, "acme", k.now); err != nil || n < 1 {
		t.Fatalf("retry: %d %v", n, err)
	}
	if k.Scalar(`SELECT COUNT(*) FROM ss_auto_renew_runs WHERE user_id = ?`, id) != 2 ||
		k.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE user_id = ? AND channel = 'inbox' AND template = 'selfservice.auto_renew_failed'`, id) != 1 {
		t.Fatal("the retry recorded or notified again")
	}
	tok = webtest.PortalLogin(t, k.Acme, "ss-1", "radius-ss-1")
	r := k.Call("POST", "/user/auto-renew", tok, map[string]any{"enabled": false})
	if r.Status != 200 || r.Data()["enabled"] != false || r.Data()["last_run"].(map[string]any)["reason"] != "insufficient_balance" {
		t.Fatalf("off: %d %s", r.Status, r.Body)
	}
	if k.Scalar(`SELECT COUNT(*) FROM jobs WHERE kind = 'selfservice.auto_renew' AND state = 'queued'`) != 0 {
		t.Fatal("switched off but a job is queued")
	}
	k.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('portal_feature_auto_renew', 'false')`)
	webtest.ExpectErr(t, k.Call("POST", "/portal/auto-renew", tok, map[string]any{"enabled": true}), 403, app.CodeForbidden, "feature_disabled")
}

// TestSelfServiceChangeAtRenewal: a change at the next renewal is bound at
// the expiration, and the automatic renewal renews into the new plan.
func TestSelfServiceChangeAtRenewal(t *testing.T) {
	t.Parallel()
	k := newSSKit(t)
	id, tok := k.subscriber(61, 0) // fee 1, then Plus at 60
	k.Exec(`UPDATE users SET expiration = ? WHERE id = ?`, app.FormatTime(k.now.Add(time.Hour)), id)
	if r := k.Call("POST", "/user/auto-renew", tok, map[string]any{"enabled": true}); r.Status != 200 {
		t.Fatalf("auto-renew: %d %s", r.Status, r.Body)
	}
	r := k.Call("POST", "/portal/change-profile", tok, map[string]any{"intent": "change_at_renewal", "profile_id": k.plus, "request_id": "car-1"})
	if r.Status != 200 || ptNum(r.Data()["charged"]) != 1 || r.Data()["pending_change"].(map[string]any)["profile_id"] != float64(k.plus) {
		t.Fatalf("change: %d %s", r.Status, r.Body)
	}
	k.now = k.now.Add(2 * time.Hour)
	if n, err := k.App.Jobs.RunDue(context.Background(), "acme", k.now); err != nil || n != 2 {
		t.Fatalf("run due: %d %v", n, err)
	}
	if k.Scalar(`SELECT profile_id FROM users WHERE id = ?`, id) != k.plus || k.Scalar(`SELECT COUNT(*) FROM ss_pending_changes WHERE user_id = ?`, id) != 0 ||
		k.Scalar(`SELECT COUNT(*) FROM user_activations WHERE user_id = ? AND profile_id = ? AND price = 60000`, id, k.plus) != 1 ||
		k.Scalar(`SELECT balance FROM users WHERE id = ?`, id) != 0 {
		t.Fatal("the change was not bound before the renewal")
	}
}

// TestSelfServiceBucketOrderInAccounting: accounting (a real RADIUS server
// on loopback) consumes the quota buckets in the order the subscriber chose.
func TestSelfServiceBucketOrderInAccounting(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	ctx := context.Background()
	plan := k.Do("POST", "acme", "/api/v1/admin/profiles", k.Tok, map[string]any{"name": "Metered", "price": 0, "duration_days": 30, "bytes_limit": 1000})
	pid := int64(plan.Data()["id"].(float64))
	r := k.Do("POST", "acme", "/api/v1/users", k.Tok, map[string]any{"username": "dora", "password": "pw-dora", "profile_id": pid})
	id := int64(r.Data()["id"].(float64))
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/activation", id), k.Tok, map[string]any{"request_id": "act-dora"}); r.Status != 200 {
		t.Fatalf("activate: %d %s", r.Status, r.Body)
	}
	addon := k.Do("POST", "acme", "/api/v1/admin/addons", k.Tok, map[string]any{"name": "+300", "kind": "data", "amount": 300, "price": 0})
	if r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/addons", id), k.Tok, map[string]any{"addon_id": addon.Data()["id"], "request_id": "addon-dora"}); r.Status != 200 {
		t.Fatalf("addon: %d %s", r.Status, r.Body)
	}
	if err := k.Acquire("acme").Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE users SET bytes_limit = bytes_limit + 500 WHERE id = ?`, id) // a staff bonus
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tok := k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "dora", "password": "pw-dora"}).Data()["token"].(string)
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/portal/bucket-order", tok, map[string]any{"order": []string{"bonus", "bonus", "plan"}}), 400, app.CodeValidation, "invalid_bucket_order")
	o := k.Do("PUT", "acme", "/api/v1/user/bucket-order", tok, map[string]any{"order": []string{"bonus", "addon", "plan"}})
	if o.Status != 200 || len(o.Data()["buckets"].([]any)) != 3 {
		t.Fatalf("order: %d %s", o.Status, o.Body)
	}
	b0 := o.Data()["buckets"].([]any)[0].(map[string]any)
	if b0["bucket"] != "bonus" || b0["limit"] != 500.0 {
		t.Fatalf("buckets: %s", o.Body)
	}
	k.Acct(1, "dora", "d1", 0, 0)
	k.Acct(3, "dora", "d1", 600, 60) // 600 bytes: bonus 500, then addon 100
	used := func() (int64, int64, int64) {
		var p, a, b int64
		if err := k.Acquire("acme").DB.R.QueryRow(`SELECT plan_used, addon_used, bonus_used FROM ss_bucket_usage WHERE user_id = ?`, id).Scan(&p, &a, &b); err != nil {
			t.Fatal(err)
		}
		return p, a, b
	}
	if p, a, b := used(); p != 0 || a != 100 || b != 500 {
		t.Fatalf("after 600: plan %d addon %d bonus %d", p, a, b)
	}
	// The subscriber puts the plan first: what follows comes from the plan.
	if r := k.Do("PUT", "acme", "/api/v1/portal/bucket-order", tok, map[string]any{"order": []string{"plan", "addon", "bonus"}}); r.Status != 200 {
		t.Fatalf("order: %d %s", r.Status, r.Body)
	}
	k.Acct(3, "dora", "d1", 1000, 120) // 400 more
	if p, a, b := used(); p != 400 || a != 100 || b != 500 {
		t.Fatalf("after 1000: plan %d addon %d bonus %d", p, a, b)
	}
}

// authAccept sends an Access-Request from the loopback NAS and answers the
// Access-Accept.
func authAccept(k *webtest.RadiusKit, user, password string) *radius.Packet {
	k.T.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(webtest.RadiusSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, password)
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(webtest.RadiusSecret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	resp := k.Exchange(p, k.AuthAddr)
	if resp.Code != radius.CodeAccessAccept {
		k.T.Fatalf("auth %s: %v", user, resp.Code)
	}
	return resp
}

// acceptRate is the Mikrotik-Rate-Limit of an answer (the loopback NAS is
// a MikroTik): "up/down".
func acceptRate(p *radius.Packet) string {
	if v := webtest.VendorValues(p, 14988, 8); len(v) == 1 {
		return v[0]
	}
	return ""
}

// TestSelfServiceSpeedBoost: a boost bought on the portal reaches the live
// session by CoA (a NAS stand-in on loopback) and the next Access-Accept of
// the real RADIUS server; the job reverts it at its end (fake clock).
func TestSelfServiceSpeedBoost(t *testing.T) {
	t.Parallel()
	k := webtest.NewBandwidthKit(t)
	now := time.Now().UTC().Truncate(time.Second)
	k.App.SetClock(func() time.Time { return now })
	alice := k.CreateUser("alice")
	if r := k.Do("PUT", "acme", fmt.Sprintf("/api/v1/admin/profiles/%d/self-service", k.Plan), k.Tok, map[string]any{
		"boosts": []map[string]any{{"name": "Turbo", "rate_down_kbps": 51200, "rate_up_kbps": 10240, "duration_minutes": 60, "price": 5}}}); r.Status != 200 {
		t.Fatalf("policy: %d %s", r.Status, r.Body)
	}
	k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/deposit", alice), k.Tok, map[string]any{"amount": 7, "request_id": "dep-alice"})
	k.Online(k.MTNAS, "alice", "a1")
	tok := k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "alice", "password": "pw-alice"}).Data()["token"].(string)

	sp := k.Do("GET", "acme", "/api/v1/user/speed", tok, nil)
	if sp.Status != 200 || sp.Data()["active"] != nil || len(sp.Data()["options"].([]any)) != 1 {
		t.Fatalf("speed: %d %s", sp.Status, sp.Body)
	}
	opt := sp.Data()["options"].([]any)[0].(map[string]any)["id"]
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/portal/speed", tok, map[string]any{"option_id": 999, "request_id": "b-0"}), 400, app.CodeValidation, "boost_option_not_found")
	r := k.Do("PUT", "acme", "/api/v1/portal/speed", tok, map[string]any{"option_id": opt, "request_id": "b-1"})
	if r.Status != 200 || r.Data()["state"] != "active" || r.Data()["apply_coa"] != aaa.RateACK {
		t.Fatalf("boost: %d %s", r.Status, r.Body)
	}
	reqs := k.MT.Requests()
	if len(reqs) != 1 || reqs[0].Code != radius.CodeCoARequest {
		t.Fatalf("NAS got %d requests", len(reqs))
	}
	if v := webtest.VendorValues(reqs[0], 14988, 8); len(v) != 1 || v[0] != "10240k/51200k" {
		t.Fatalf("boost CoA rate %q", v)
	}
	if r := acceptRate(authAccept(k.RadiusKit, "alice", "pw-alice")); r != "10240k/51200k" {
		t.Fatalf("Access-Accept during the boost: %q", r)
	}
	if bal := k.Scalar(`SELECT balance FROM users WHERE id = ?`, alice); bal.Int64 != 2000 {
		t.Fatalf("balance %d", bal.Int64)
	}
	// A second boost while one runs; too little money left anyway.
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/user/speed", tok, map[string]any{"option_id": opt, "request_id": "b-2"}), 409, app.CodeConflict, "boost_active")

	// The job reverts it at its end.
	now = now.Add(61 * time.Minute)
	if n, err := k.App.Jobs.RunDue(context.Background(), "acme", now); err != nil || n < 1 {
		t.Fatalf("run due: %d %v", n, err)
	}
	reqs = k.MT.Requests()
	if v := webtest.VendorValues(reqs[len(reqs)-1], 14988, 8); len(reqs) != 2 || len(v) != 1 || v[0] != "2048k/10240k" {
		t.Fatalf("revert CoA %d %q", len(reqs), v)
	}
	if r := acceptRate(authAccept(k.RadiusKit, "alice", "pw-alice")); r != "2048k/10240k" {
		t.Fatalf("Access-Accept after the boost: %q", r)
	}
	if k.Scalar(`SELECT COUNT(*) FROM ss_boosts WHERE user_id = ? AND state = 'ended' AND revert_coa = 'ack'`, alice).Int64 != 1 {
		t.Fatal("boost not recorded as ended")
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", "/api/v1/portal/speed", tok, nil), 409, app.CodeConflict, "no_active_boost")
	// Bought again and ended early: reverted at once, its job cancelled.
	k.Do("POST", "acme", fmt.Sprintf("/api/v1/users/%d/deposit", alice), k.Tok, map[string]any{"amount": 5, "request_id": "dep-alice-2"})
	tok = k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "alice", "password": "pw-alice"}).Data()["token"].(string)
	if r := k.Do("PUT", "acme", "/api/v1/user/speed", tok, map[string]any{"option_id": opt, "request_id": "b-4"}); r.Status != 200 || r.Data()["apply_coa"] != aaa.RateACK {
		t.Fatalf("boost again: %d %s", r.Status, r.Body)
	}
	c := k.Do("DELETE", "acme", "/api/v1/user/speed", tok, nil)
	if c.Status != 200 || c.Data()["state"] != "cancelled" || c.Data()["revert_coa"] != aaa.RateACK {
		t.Fatalf("cancel: %d %s", c.Status, c.Body)
	}
	if reqs = k.MT.Requests(); len(reqs) != 4 || webtest.VendorValues(reqs[3], 14988, 8)[0] != "2048k/10240k" {
		t.Fatalf("cancel CoA: %d", len(reqs))
	}
	if k.Scalar(`SELECT COUNT(*) FROM jobs WHERE kind = 'selfservice.boost_end' AND state = 'queued'`).Int64 != 0 {
		t.Fatal("the cancelled boost's job is still queued")
	}
	// Insufficient: 2 left, the boost costs 5 and the credit is nil.
	k.Do("PATCH", "acme", fmt.Sprintf("/api/v1/users/%d", alice), k.Tok, map[string]any{"debt_limit": 0})
	webtest.ExpectErr(t, k.Do("PUT", "acme", "/api/v1/portal/speed", tok, map[string]any{"option_id": opt, "request_id": "b-3"}), 409, app.CodeConflict, "insufficient_balance")
	if k.Scalar(`SELECT COUNT(*) FROM ss_boosts WHERE user_id = ?`, alice).Int64 != 2 {
		t.Fatal("a refused boost was stored")
	}
}
