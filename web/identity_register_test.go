package web_test

import (
	"regexp"
	"testing"

	"xr/internal/webtest"
)

var idCodeRe = regexp.MustCompile(`\b(\d{6})\b`)

// idMailedCode reads the newest verification code mailed to addr from the
// instance outbox.
func idMailedCode(k *webtest.Kit, addr string) string {
	k.T.Helper()
	var body string
	if err := k.App.Inst.R.QueryRowContext(webtest.Background, `SELECT body FROM mail_outbox WHERE to_addr = ? ORDER BY id DESC LIMIT 1`, addr).Scan(&body); err != nil {
		k.T.Fatalf("no mail to %s: %v", addr, err)
	}
	m := idCodeRe.FindStringSubmatch(body)
	if m == nil {
		k.T.Fatalf("no code in %q", body)
	}
	return m[1]
}

func idWrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func TestIdentitySignupDisabled(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/auth/register/start", map[string]any{"email": "new@isp.test"}},
		{"/auth/register/verify", map[string]any{"registration_id": "x", "code": "123456"}},
		{"/auth/register/resend", map[string]any{"registration_id": "x"}},
		{"/auth/register/complete", map[string]any{"registration_id": "x", "slug": "newisp", "name": "N", "username": "boss", "password": webtest.Password}},
	} {
		for _, host := range []string{"", "acme"} {
			webtest.ExpectErr(t, k.Do("POST", host, "/api/v1"+c.path, "", c.body), 403, "ERR_FORBIDDEN", "signup_disabled")
		}
	}
	var n int
	k.App.Inst.R.QueryRow(`SELECT COUNT(*) FROM registrations`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d registrations stored while disabled", n)
	}
	if _, ok := k.App.TenantBySlug("newisp"); ok {
		t.Fatal("tenant created while disabled")
	}
}

func TestIdentitySignupFlow(t *testing.T) {
	t.Parallel()
	k := newIDKit(t, true, nil)
	const email = "new@isp.test"

	r := k.Do("POST", "", "/api/v1/auth/register/start", "", map[string]any{"email": "not-an-email"})
	if r.Status != 400 || r.Field() != "email" {
		t.Fatalf("bad email: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "", "/api/v1/auth/register/start", "", map[string]any{"email": "New@ISP.test"})
	if r.Status != 200 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	regID, _ := r.Data()["registration_id"].(string)
	if regID == "" || r.Data()["expires_at"] == nil {
		t.Fatalf("start answer: %s", r.Body)
	}
	code := idMailedCode(k, email)

	complete := map[string]any{"registration_id": regID, "slug": "newisp", "name": "New ISP", "username": "boss", "password": webtest.Password}
	// Completing unverified: 409.
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/auth/register/complete", "", complete), 409, "ERR_CONFLICT", "registration_not_verified")
	// A wrong code: 400 invalid_code.
	r = k.Do("POST", "", "/api/v1/auth/register/verify", "", map[string]any{"registration_id": regID, "code": idWrongCode(code)})
	if r.Status != 400 || r.Reason() != "invalid_code" {
		t.Fatalf("wrong code: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/auth/register/complete", "", complete), 409, "ERR_CONFLICT", "registration_not_verified")
	// Unknown registration: 404.
	if r := k.Do("POST", "", "/api/v1/auth/register/verify", "", map[string]any{"registration_id": "nope", "code": code}); r.Status != 404 {
		t.Fatalf("unknown registration: %d %s", r.Status, r.Body)
	}
	// Resend: a fresh code; the old one no longer works.
	if r := k.Do("POST", "", "/api/v1/auth/register/resend", "", map[string]any{"registration_id": regID}); r.Status != 200 {
		t.Fatalf("resend: %d %s", r.Status, r.Body)
	}
	fresh := idMailedCode(k, email)
	if fresh != code {
		if r := k.Do("POST", "", "/api/v1/auth/register/verify", "", map[string]any{"registration_id": regID, "code": code}); r.Reason() != "invalid_code" {
			t.Fatalf("old code after resend: %d %s", r.Status, r.Body)
		}
	}
	if r := k.Do("POST", "", "/api/v1/auth/register/verify", "", map[string]any{"registration_id": regID, "code": fresh}); r.Status != 200 {
		t.Fatalf("verify: %d %s", r.Status, r.Body)
	}

	// A taken slug: 409, and the registration stays open.
	taken := map[string]any{"registration_id": regID, "slug": "acme", "name": "Dup", "username": "boss", "password": webtest.Password}
	webtest.ExpectErr(t, k.Do("POST", "", "/api/v1/auth/register/complete", "", taken), 409, "ERR_CONFLICT", "slug_taken")
	if r := k.Do("POST", "", "/api/v1/auth/register/complete", "", map[string]any{"registration_id": regID, "slug": "Bad Slug!", "name": "x", "username": "boss", "password": webtest.Password}); r.Status != 400 {
		t.Fatalf("invalid slug: %d %s", r.Status, r.Body)
	}
	if r := k.Do("POST", "", "/api/v1/auth/register/complete", "", map[string]any{"registration_id": regID, "slug": "weakisp", "name": "x", "username": "boss", "password": "weak"}); r.Status != 400 {
		t.Fatalf("weak password: %d %s", r.Status, r.Body)
	}
	if _, ok := k.App.TenantBySlug("weakisp"); ok {
		t.Fatal("refused completion left a tenant")
	}

	r = k.Do("POST", "", "/api/v1/auth/register/complete", "", complete)
	if r.Status != 201 || r.Data()["tenant_slug"] != "newisp" || r.Data()["tenant_id"] == nil || r.Data()["owner_id"] == nil {
		t.Fatalf("complete: %d %s", r.Status, r.Body)
	}
	// Done once.
	if r := k.Do("POST", "", "/api/v1/auth/register/complete", "", map[string]any{"registration_id": regID, "slug": "newisp2", "name": "x", "username": "boss", "password": webtest.Password}); r.Status != 409 {
		t.Fatalf("second completion: %d %s", r.Status, r.Body)
	}
	if _, ok := k.App.TenantBySlug("newisp2"); ok {
		t.Fatal("second tenant created")
	}

	// The owner logs in on the new host, by username or by the verified email.
	for _, who := range []string{"boss", email} {
		r := k.Do("POST", "newisp", "/api/v1/auth/login", "", idLoginBody(who, webtest.Password))
		if r.Status != 200 || r.Data()["tenant_slug"] != "newisp" {
			t.Fatalf("login %s: %d %s", who, r.Status, r.Body)
		}
		me := idMe(k, "newisp", r.Data()["token"].(string))
		if me["is_admin"] != true || me["manager"].(map[string]any)["email"] != email {
			t.Fatalf("new owner me: %v", me)
		}
	}
	if r := k.Do("GET", "newisp", "/api/v1/auth/context", "", nil); r.Data()["tenant"].(map[string]any)["name"] != "New ISP" {
		t.Fatalf("context: %s", r.Body)
	}
	// The slug check agrees.
	if r := k.Do("GET", "", "/api/v1/auth/register/slug-available?slug=newisp", "", nil); r.Data()["available"] != false {
		t.Fatalf("slug-available: %s", r.Body)
	}
}
