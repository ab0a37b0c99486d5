package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/app"
	"xr/app/portalentry"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// Tests of the portal's ways in (prefix pe).

var pePrefixes = []string{"/portal", "/user"}

func TestPortalEntryCaptcha(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	ctx := context.Background()
	for _, p := range pePrefixes {
		id := webtest.Captcha(t, s, p)
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_captchas WHERE id = ? AND client_ip = '127.0.0.1' AND used_at IS NULL`, id); n != 1 {
			t.Fatalf("stored captcha rows: %d", n)
		}
		// The answer is not stored in clear.
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_captchas WHERE instr(CAST(answer_hash AS TEXT), '123456') > 0`); n != 0 {
			t.Fatal("answer stored in clear")
		}
		// Right answer from the right client: once.
		if err := portalentry.VerifyCaptcha(ctx, s.Ten, id, "123456", "127.0.0.1"); err != nil {
			t.Fatalf("verify: %v", err)
		}
		peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, id, "123456", "127.0.0.1"), "captcha_invalid") // reused
	}
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, "", "123456", "127.0.0.1"), "captcha_required")
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, "nope", "123456", "127.0.0.1"), "captcha_invalid")
	// Wrong answer: refused, and the captcha is spent (the right answer fails after).
	id := webtest.Captcha(t, s, "/portal")
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, id, "654321", "127.0.0.1"), "captcha_invalid")
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, id, "123456", "127.0.0.1"), "captcha_invalid")
	// Another client.
	id = webtest.Captcha(t, s, "/user")
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, id, "123456", "10.9.9.9"), "captcha_invalid")
	// Expired.
	id = webtest.Captcha(t, s, "/portal")
	s.App.SetClock(func() time.Time { return time.Now().Add(6 * time.Minute) })
	peWantReason(t, portalentry.VerifyCaptcha(ctx, s.Ten, id, "123456", "127.0.0.1"), "captcha_invalid")
	s.App.SetClock(nil)
	// Each attempt is used up.
	if n := s.Scalar(`SELECT COUNT(*) FROM portal_captchas WHERE used_at IS NULL`); n != 0 {
		t.Fatalf("unused captchas left: %d", n)
	}
}

func peWantReason(t *testing.T, err error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s, got nil", reason)
	}
	ae, ok := err.(*app.Error)
	if !ok || ae.Reason != reason || ae.Status != 400 {
		t.Fatalf("want 400 %s, got %v", reason, err)
	}
}

func TestPortalEntrySignup(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	plan := s.Plan(map[string]any{"name": "Starter", "price": 5, "duration_days": 30})
	s.User("", map[string]any{"username": "taken", "email": "taken@example.com"})

	// Off by default: the schema and the sign-up say so.
	webtest.ExpectErr(t, s.Call("GET", "/portal/signup/schema", "", nil), 403, "ERR_FORBIDDEN", "feature_disabled")
	webtest.ExpectErr(t, s.Call("POST", "/user/signup", "", map[string]any{"username": "x"}), 403, "ERR_FORBIDDEN", "feature_disabled")

	// Settings: bad values refused, then sign-up on.
	r := s.Call("PUT", "/admin/portal-entry/settings", s.Tok, map[string]any{"tunnel_ranges": []string{"not-a-range"}})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_cidr")
	webtest.SetPortalEntry(t, s, map[string]any{"signup": true, "signup_profile_id": plan, "signup_manager_id": s.OwnerID, "signup_required": []string{"firstname"}})

	r = s.Call("GET", "/user/signup/schema", "", nil)
	if r.Status != 200 || r.Data()["verification"] != "email" || r.Data()["captcha_required"] != true {
		t.Fatalf("schema: %d %s", r.Status, r.Body)
	}
	if p, _ := r.Data()["plan"].(map[string]any); p["name"] != "Starter" {
		t.Fatalf("schema plan: %s", r.Body)
	}

	good := func(name string) map[string]any {
		return map[string]any{"username": name, "password": "Sign-up-pass-1", "email": name + "@example.com", "firstname": "New"}
	}
	// Captcha: required, then checked.
	webtest.ExpectErr(t, s.Call("POST", "/portal/signup", "", good("nocap")), 400, "ERR_VALIDATION", "captcha_required")
	bad := good("badcap")
	bad["captcha_id"], bad["captcha_answer"] = webtest.Captcha(t, s, "/portal"), "000000"
	webtest.ExpectErr(t, s.Call("POST", "/portal/signup", "", bad), 400, "ERR_VALIDATION", "captcha_invalid")
	// Duplicates and required fields, each with its reason.
	dup := good("TAKEN")
	r = s.Call("POST", "/portal/signup", "", webtest.SolveCaptcha(t, s, "/portal", dup))
	webtest.ExpectErr(t, r, 409, "ERR_CONFLICT", "username_taken")
	dup = good("fresh")
	dup["email"] = "Taken@Example.com"
	webtest.ExpectErr(t, s.Call("POST", "/portal/signup", "", webtest.SolveCaptcha(t, s, "/portal", dup)), 409, "ERR_CONFLICT", "email_taken")
	noName := good("noname")
	delete(noName, "firstname")
	r = s.Call("POST", "/portal/signup", "", webtest.SolveCaptcha(t, s, "/portal", noName))
	if webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "required"); r.Field() != "firstname" {
		t.Fatalf("required field: %s", r.Body)
	}

	// The happy path, under both prefixes: code by email, then verify.
	for i, p := range pePrefixes {
		name := fmt.Sprintf("newbie%d", i)
		r = s.Call("POST", p+"/signup", "", webtest.SolveCaptcha(t, s, p, good(name)))
		if r.Status != 202 || r.Data()["channel"] != "email" {
			t.Fatalf("signup: %d %s", r.Status, r.Body)
		}
		id := r.Data()["signup_id"].(string)
		var body string
		if err := s.Ten.DB.R.QueryRow(`SELECT body FROM outbox_messages WHERE cause = ? AND channel = 'email' AND recipient = ?`,
			"signup:"+id, name+"@example.com").Scan(&body); err != nil {
			t.Fatalf("outbox: %v", err)
		}
		m := webtest.CodeRe.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no code in %q", body)
		}
		if n := s.Scalar(`SELECT COUNT(*) FROM users WHERE username = ?`, name); n != 0 {
			t.Fatal("subscriber created before verification")
		}
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_signups WHERE id = ? AND instr(CAST(payload_sealed AS TEXT), 'Sign-up-pass-1') = 0`, id); n != 1 {
			t.Fatal("pending sign-up missing or its password in clear")
		}
		wrong := "000000"
		if m[1] == wrong {
			wrong = "111111"
		}
		webtest.ExpectErr(t, s.Call("POST", p+"/signup/verify", "", map[string]any{"signup_id": id, "code": wrong}), 400, "ERR_VALIDATION", "invalid_code")
		r = s.Call("POST", p+"/signup/verify", "", map[string]any{"signup_id": id, "code": m[1]})
		if r.Status != 200 {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		uid := int64(r.Data()["user_id"].(float64))
		if n := s.Scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND parent_id = ? AND profile_id = ? AND firstname = 'New' AND email = ?`,
			uid, s.OwnerID, plan, name+"@example.com"); n != 1 {
			t.Fatalf("stored subscriber wrong")
		}
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_signups WHERE id = ?`, id); n != 0 {
			t.Fatal("a verified sign-up is kept")
		}
		tok := r.Data()["session"].(map[string]any)["token"].(string)
		if me := s.Call("GET", p+"/me", tok, nil); me.Status != 200 {
			t.Fatalf("me: %d %s", me.Status, me.Body)
		}
		// The code is spent; the password signs in.
		webtest.ExpectErr(t, s.Call("POST", p+"/signup/verify", "", map[string]any{"signup_id": id, "code": m[1]}), 400, "ERR_VALIDATION", "invalid_code")
		webtest.PortalLogin(t, s, name, "Sign-up-pass-1")
	}
	// An unknown sign-up answers like a wrong code.
	webtest.ExpectErr(t, s.Call("POST", "/portal/signup/verify", "", map[string]any{"signup_id": "nope", "code": "123456"}), 400, "ERR_VALIDATION", "invalid_code")
}

func TestPortalEntryJoin(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	uid := s.User("", map[string]any{"username": "carol", "firstname": "Carol"})
	for i, p := range pePrefixes {
		r := s.Call("POST", fmt.Sprintf("/users/%d/portal-invite", uid), s.Tok, nil)
		if r.Status != 200 || r.Data()["code"] == "" || r.Data()["username"] != "carol" {
			t.Fatalf("invite: %d %s", r.Status, r.Body)
		}
		code := r.Data()["code"].(string)
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_codes WHERE kind = 'invite' AND user_id = ? AND used_at IS NULL`, uid); n != 1 {
			t.Fatalf("live invites: %d", n)
		}
		r = s.Call("GET", p+"/join/context?code="+url.QueryEscape(code), "", nil)
		if r.Status != 200 || r.Data()["username"] != "carol" {
			t.Fatalf("context: %d %s", r.Status, r.Body)
		}
		pw := fmt.Sprintf("Joined-pass-%d", i)
		webtest.ExpectErr(t, s.Call("POST", p+"/join", "", map[string]any{"code": code, "password": pw}), 400, "ERR_VALIDATION", "captcha_required")
		r = s.Call("POST", p+"/join", "", webtest.SolveCaptcha(t, s, p, map[string]any{"code": code, "password": pw}))
		if r.Status != 200 || int64(r.Data()["user_id"].(float64)) != uid {
			t.Fatalf("join: %d %s", r.Status, r.Body)
		}
		// Single use; the new password signs in.
		used := s.Call("POST", p+"/join", "", webtest.SolveCaptcha(t, s, p, map[string]any{"code": code, "password": pw}))
		webtest.ExpectErr(t, used, 400, "ERR_VALIDATION", "invalid_code")
		unknown := s.Call("POST", p+"/join", "", webtest.SolveCaptcha(t, s, p, map[string]any{"code": "ZZZZZ-ZZZZZ", "password": pw}))
		if a, b := idErrorSansRequestID(t, used), idErrorSansRequestID(t, unknown); a != b {
			t.Fatalf("used %s vs unknown %s", a, b)
		}
		webtest.PortalLogin(t, s, "carol", pw)
	}
	// Expiry (fake clock): a week later the code is refused like an unknown one.
	r := s.Call("POST", fmt.Sprintf("/users/%d/portal-invite", uid), s.Tok, nil)
	code := r.Data()["code"].(string)
	s.App.SetClock(func() time.Time { return time.Now().Add(8 * 24 * time.Hour) })
	expired := s.Call("GET", "/portal/join/context?code="+url.QueryEscape(code), "", nil)
	unknown := s.Call("GET", "/portal/join/context?code=ZZZZZ-ZZZZZ", "", nil)
	s.App.SetClock(nil)
	webtest.ExpectErr(t, expired, 400, "ERR_VALIDATION", "invalid_code")
	if a, b := idErrorSansRequestID(t, expired), idErrorSansRequestID(t, unknown); a != b {
		t.Fatalf("expired %s vs unknown %s", a, b)
	}
	// Feature off.
	webtest.SetPortalEntry(t, s, map[string]any{"join": false})
	webtest.ExpectErr(t, s.Call("GET", "/user/join/context?code=x", "", nil), 403, "ERR_FORBIDDEN", "feature_disabled")
}

func TestPortalEntryExchange(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	uid := s.User("", map[string]any{"username": "dave"})
	for _, p := range pePrefixes {
		r := s.Call("POST", fmt.Sprintf("/users/%d/portal-link", uid), s.Tok, nil)
		if r.Status != 200 || r.Data()["code"] == "" {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		code := r.Data()["code"].(string)
		r = s.Call("POST", p+"/exchange", "", map[string]any{"code": code})
		if r.Status != 200 || int64(r.Data()["user_id"].(float64)) != uid {
			t.Fatalf("exchange: %d %s", r.Status, r.Body)
		}
		if me := s.Call("GET", p+"/me", r.Data()["token"].(string), nil); me.Status != 200 {
			t.Fatalf("me: %d", me.Status)
		}
		// A staff link's session is borrowed by the staff member.
		if n := s.Scalar(`SELECT COUNT(*) FROM portal_sessions WHERE user_id = ? AND borrowed_by = ?`, uid, s.OwnerID); n < 1 {
			t.Fatal("session not marked borrowed")
		}
		again := s.Call("POST", p+"/exchange", "", map[string]any{"code": code})
		webtest.ExpectErr(t, again, 400, "ERR_VALIDATION", "invalid_code")
		unknown := s.Call("POST", p+"/exchange", "", map[string]any{"code": "no-such-code"})
		if a, b := idErrorSansRequestID(t, again), idErrorSansRequestID(t, unknown); a != b {
			t.Fatalf("used %s vs unknown %s", a, b)
		}
	}
	// Expired.
	r := s.Call("POST", fmt.Sprintf("/users/%d/portal-link", uid), s.Tok, nil)
	s.App.SetClock(func() time.Time { return time.Now().Add(6 * time.Minute) })
	webtest.ExpectErr(t, s.Call("POST", "/portal/exchange", "", map[string]any{"code": r.Data()["code"]}), 400, "ERR_VALIDATION", "invalid_code")
	s.App.SetClock(nil)
}

func TestPortalEntryMessenger(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	uid := s.User("", map[string]any{"username": "erin", "password": "radius-erin"})
	tok := webtest.PortalLogin(t, s, "erin", "radius-erin")
	webtest.ExpectErr(t, s.Call("GET", "/portal/messenger/link", tok, nil), 403, "ERR_FORBIDDEN", "feature_disabled")
	webtest.SetPortalEntry(t, s, map[string]any{"messenger": true})
	r := s.Call("POST", "/admin/portal-entry/messenger-secret", s.Tok, nil)
	secret, _ := r.Data()["secret"].(string)
	if r.Status != 200 || len(secret) < 32 {
		t.Fatalf("secret: %d %s", r.Status, r.Body)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM messenger_secret WHERE instr(CAST(secret_sealed AS TEXT), ?) > 0`, secret); n != 0 {
		t.Fatal("secret stored in clear")
	}
	if g := s.Call("GET", "/admin/portal-entry/settings", s.Tok, nil); g.Data()["messenger_secret_set"] != true {
		t.Fatalf("settings: %s", g.Body)
	}
	sign := func(body map[string]any, key string) map[string]any {
		ts := time.Now().Unix()
		code, _ := body["code"].(string)
		body["timestamp"] = ts
		body["signature"] = portalentry.MessengerSign([]byte(key), ts, body["account"].(string), code)
		return body
	}
	for i, p := range pePrefixes {
		account := fmt.Sprintf("chat-%d", i)
		r = s.Call("GET", p+"/messenger/link", tok, nil)
		link, _ := r.Data()["code"].(string)
		if r.Status != 200 || len(link) != 8 {
			t.Fatalf("link: %d %s", r.Status, r.Body)
		}
		// Forged: signed with another key; nothing is linked.
		forged := s.Call("POST", p+"/messenger-exchange", "", sign(map[string]any{"account": account, "code": link}, "not-the-secret"))
		webtest.ExpectErr(t, forged, 401, "ERR_UNAUTHORIZED", "signature_invalid")
		// Not linked yet.
		webtest.ExpectErr(t, s.Call("POST", p+"/messenger-exchange", "", sign(map[string]any{"account": account}, secret)), 404, "ERR_NOT_FOUND", "messenger_not_linked")
		// Good: links, and answers an exchange code.
		r = s.Call("POST", p+"/messenger-exchange", "", sign(map[string]any{"account": account, "code": link}, secret))
		if r.Status != 200 || r.Data()["linked"] != true || int64(r.Data()["user_id"].(float64)) != uid {
			t.Fatalf("messenger exchange: %d %s", r.Status, r.Body)
		}
		if n := s.Scalar(`SELECT COUNT(*) FROM messenger_accounts WHERE account = ? AND user_id = ?`, account, uid); n != 1 {
			t.Fatal("account not linked")
		}
		// The link code is single use.
		webtest.ExpectErr(t, s.Call("POST", p+"/messenger-exchange", "", sign(map[string]any{"account": account, "code": link}, secret)), 400, "ERR_VALIDATION", "invalid_code")
		// Linked: the bot gets codes without one; the code opens a session once.
		r = s.Call("POST", p+"/messenger-exchange", "", sign(map[string]any{"account": account}, secret))
		if r.Status != 200 || r.Data()["linked"] != false {
			t.Fatalf("linked exchange: %d %s", r.Status, r.Body)
		}
		r = s.Call("POST", p+"/exchange", "", map[string]any{"code": r.Data()["code"]})
		if r.Status != 200 || int64(r.Data()["user_id"].(float64)) != uid {
			t.Fatalf("exchange: %d %s", r.Status, r.Body)
		}
	}
	// A stale timestamp is refused even when signed right.
	old := map[string]any{"account": "chat-0", "timestamp": time.Now().Add(-time.Hour).Unix()}
	old["signature"] = portalentry.MessengerSign([]byte(secret), old["timestamp"].(int64), "chat-0", "")
	webtest.ExpectErr(t, s.Call("POST", "/portal/messenger-exchange", "", old), 401, "ERR_UNAUTHORIZED", "signature_stale")
}

// peFrom sends a request from source address ip (a loopback address) to
// host slug ("" = apex).
func peFrom(k *webtest.Kit, ip, method, slug, path string) webtest.Resp {
	k.T.Helper()
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(method, k.TS.URL+path, nil)
	req.Host = "xr.test"
	if slug != "" {
		req.Host = slug + ".xr.test"
	}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		k.T.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	k.CheckContract(req, res.StatusCode, res.Header, b)
	out := webtest.Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	json.Unmarshal(b, &out.JSON)
	return out
}

func TestPortalEntryTunnel(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	uid := k.CreateUser("frank")
	// A live session holding 127.0.0.5, opened through real RADIUS accounting.
	p := radius.New(radius.CodeAccountingRequest, []byte(webtest.RadiusSecret))
	rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Start)
	rfc2865.UserName_SetString(p, "frank")
	rfc2866.AcctSessionID_SetString(p, "tun-1")
	rfc2865.FramedIPAddress_Set(p, net.ParseIP("127.0.0.5"))
	if code := k.Exchange(p, k.AcctAddr).Code; code != radius.CodeAccountingResponse {
		t.Fatalf("accounting answered %v", code)
	}
	xrtest.Eventually(t, "live session", func() bool {
		return k.Scalar(`SELECT COUNT(*) FROM radius_sessions WHERE framed_ip = '127.0.0.5' AND stop_time IS NULL AND user_id = ?`, uid).Int64 == 1
	})
	// Off by default.
	webtest.ExpectErr(t, peFrom(k.Kit, "127.0.0.5", "POST", "acme", "/api/v1/portal/tunnel-identify"), 403, "ERR_FORBIDDEN", "feature_disabled")
	unknownApex := peFrom(k.Kit, "127.0.0.5", "POST", "", "/api/v1/portal/tunnel-tenant")
	webtest.ExpectErr(t, unknownApex, 404, "ERR_NOT_FOUND", "subscriber_not_identified")

	r := k.Do("PUT", "acme", "/api/v1/admin/portal-entry/settings", k.Tok, map[string]any{"tunnel": true, "exchange": true,
		"tunnel_ranges": []string{"127.0.0.4/30"}})
	if r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	for _, pre := range pePrefixes {
		r = peFrom(k.Kit, "127.0.0.5", "POST", "acme", "/api/v1"+pre+"/tunnel-identify")
		if r.Status != 200 || r.Data()["username"] != "frank" || int64(r.Data()["user_id"].(float64)) != uid || r.Data()["code"] == "" {
			t.Fatalf("identify: %d %s", r.Status, r.Body)
		}
		// The code is the one-click login.
		s := k.Do("POST", "acme", "/api/v1"+pre+"/exchange", "", map[string]any{"code": r.Data()["code"]})
		if s.Status != 200 || int64(s.Data()["user_id"].(float64)) != uid {
			t.Fatalf("exchange: %d %s", s.Status, s.Body)
		}
	}
	// In range without a session, and outside the ranges: one answer.
	noSession := peFrom(k.Kit, "127.0.0.6", "POST", "acme", "/api/v1/portal/tunnel-identify")
	outside := peFrom(k.Kit, "127.0.0.9", "POST", "acme", "/api/v1/user/tunnel-identify")
	webtest.ExpectErr(t, noSession, 404, "ERR_NOT_FOUND", "subscriber_not_identified")
	if a, b, c := idErrorSansRequestID(t, noSession), idErrorSansRequestID(t, outside), idErrorSansRequestID(t, unknownApex); a != b || b != c {
		t.Fatalf("answers differ: %s / %s / %s", a, b, c)
	}
	// Apex: the tenant is found by the address.
	r = peFrom(k.Kit, "127.0.0.5", "POST", "", "/api/v1/user/tunnel-tenant")
	if r.Status != 200 || r.Data()["tenant_slug"] != "acme" || r.Data()["username"] != "frank" {
		t.Fatalf("tunnel-tenant: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, peFrom(k.Kit, "127.0.0.9", "POST", "", "/api/v1/portal/tunnel-tenant"), 404, "ERR_NOT_FOUND", "subscriber_not_identified")
	// The session ends: no longer identified.
	p = radius.New(radius.CodeAccountingRequest, []byte(webtest.RadiusSecret))
	rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Stop)
	rfc2865.UserName_SetString(p, "frank")
	rfc2866.AcctSessionID_SetString(p, "tun-1")
	rfc2865.FramedIPAddress_Set(p, net.ParseIP("127.0.0.5"))
	k.Exchange(p, k.AcctAddr)
	xrtest.Eventually(t, "session closed", func() bool {
		return k.Scalar(`SELECT COUNT(*) FROM radius_sessions WHERE framed_ip = '127.0.0.5' AND stop_time IS NULL`).Int64 == 0
	})
	webtest.ExpectErr(t, peFrom(k.Kit, "127.0.0.5", "POST", "acme", "/api/v1/portal/tunnel-identify"), 404, "ERR_NOT_FOUND", "subscriber_not_identified")
}
