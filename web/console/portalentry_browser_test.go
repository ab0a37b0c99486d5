package console_test

// Browser test of the portal entry pages.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsolePortalEntryInBrowser: the settings page refuses a bad tunnel
// range beside its field (nothing stored) and saves good values; staff
// issue a portal invite from the subscriber's page, the code shows once,
// and the subscriber joins with it through the API.
func TestConsolePortalEntryInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcmeFixedCaptcha(t)
	k := s.Kit
	uid := s.User("", map[string]any{"username": "gina", "firstname": "Gina"})
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("settings", chromedp.Navigate(b.Base+"/portal-entry"), chromedp.WaitVisible("#entry-form", chromedp.ByQuery))
	b.Axe("portal entry settings")
	b.Run("bad range", ccgType("#f-tunnel_ranges", "10.0.0.0/8, bogus"), chromedp.Click("#f-signup", chromedp.ByQuery),
		chromedp.Click("#save-entry", chromedp.ByQuery), chromedp.WaitVisible("#e-tunnel_ranges", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM settings WHERE key IN ('portal_tunnel_ranges', 'portal_feature_signup')`); n != 0 {
		t.Fatalf("a refused form stored %d settings", n)
	}
	var checked bool
	b.Run("signup kept", chromedp.Evaluate(`document.querySelector("#f-signup").checked`, &checked))
	if !checked {
		t.Fatal("the refused form lost the ticked sign-up box")
	}
	b.Axe("refused range")
	b.Run("good range", ccgType("#f-tunnel_ranges", "10.0.0.0/8"), chromedp.Click("#f-req-phone", chromedp.ByQuery), ccgNoFlash,
		chromedp.Click("#save-entry", chromedp.ByQuery), chromedp.WaitVisible(".flash.ok", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM settings WHERE (key = 'portal_tunnel_ranges' AND value = '"10.0.0.0/8"')
		OR (key = 'portal_feature_signup' AND value = 'true') OR (key = 'signup_required_fields' AND value = '"phone"')`); n != 3 {
		t.Fatalf("%d of 3 settings stored", n)
	}

	// The invite, from the subscriber's page.
	b.Run("user page", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.Base, uid)), chromedp.WaitVisible("#portal-invite", chromedp.ByQuery),
		chromedp.Click("#portal-invite", chromedp.ByQuery), chromedp.WaitVisible("#invite-code", chromedp.ByQuery))
	var code, link string
	b.Run("code", chromedp.Value("#invite-code", &code, chromedp.ByQuery), chromedp.Value("#invite-link", &link, chromedp.ByQuery))
	if len(code) != 11 || !strings.Contains(link, "/my/join?code=") {
		t.Fatalf("invite shown: %q %q", code, link)
	}
	b.Axe("portal invite")
	b.Shot("portal-invite")
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM portal_codes WHERE kind = 'invite' AND user_id = ? AND used_at IS NULL`, uid); n != 1 {
		t.Fatalf("live invites: %d", n)
	}
	r := s.Call("POST", "/portal/join", "", webtest.SolveCaptcha(t, s, "/portal", map[string]any{"code": code, "password": "Gina-portal-1"}))
	if r.Status != 200 || int64(r.Data()["user_id"].(float64)) != uid {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM users WHERE id = ? AND portal_password_hash <> ''`, uid); n != 1 {
		t.Fatal("portal password not set")
	}
	webtest.PortalLogin(t, s, "gina", "Gina-portal-1")
}
