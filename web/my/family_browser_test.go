package my_test

// Browser test of the family page under /my/ (prefix cmf).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestMyFamilyInBrowser: on a phone a subscriber adds a blocked time (a
// refused one shows beside the editor with nothing stored), sets a PIN,
// and creates a guest access within its plan's limits, seeing the guest's
// password once.
func TestMyFamilyInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	plan := s.Plan(map[string]any{"name": "Family", "price": 10, "duration_days": 30})
	uid := s.User("", map[string]any{"username": "parent", "password": "radius-p", "portal_password": "Portal-pass-5", "profile_id": plan, "expiration": "2030-01-02"})
	if r := s.Call("PUT", fmt.Sprintf("/admin/profiles/%d/guest-limits", plan), s.Tok, map[string]any{"max_active": 2, "max_minutes": 120}); r.Status != 200 {
		t.Fatalf("guest limits: %s", r.Body)
	}
	b := browsertest.New(t, s.Kit)
	b.Run("phone", chromedp.EmulateViewport(320, 640))
	b.Run("sign in", chromedp.Navigate(b.Base+"/my/login"), chromedp.WaitVisible("#my-login", chromedp.ByQuery),
		chromedp.SendKeys("#f-username", "parent", chromedp.ByQuery), chromedp.SendKeys("#f-password", "Portal-pass-5", chromedp.ByQuery),
		chromedp.Click("#my-login-btn", chromedp.ByQuery), chromedp.WaitVisible("#my-family-link", chromedp.ByQuery))
	b.Run("family", chromedp.Click("#my-family-link", chromedp.ByQuery), chromedp.WaitVisible("#pc-rules", chromedp.ByQuery))
	b.Axe("my family")

	b.Run("bad window", chromedp.SetValue("#pc-start", "22:00", chromedp.ByQuery), chromedp.Click("#pc-save", chromedp.ByQuery),
		chromedp.WaitVisible(`#pc-rules .error`, chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM parental_controls WHERE user_id = ? AND windows NOT IN ('', '[]')`, uid); n != 0 {
		t.Fatal("a refused window was stored")
	}
	b.Run("school nights", chromedp.Click("#pc-day-mon", chromedp.ByQuery), chromedp.Click("#pc-day-tue", chromedp.ByQuery),
		chromedp.SetValue("#pc-start", "22:00", chromedp.ByQuery), chromedp.SetValue("#pc-end", "06:30", chromedp.ByQuery),
		chromedp.Click("#pc-save", chromedp.ByQuery), chromedp.WaitVisible(`#pc-windows tr[data-window="0"]`, chromedp.ByQuery))
	if got := b.Text(`#pc-windows tr[data-window="0"]`); !strings.Contains(got, "Mon") || !strings.Contains(got, "22:00") || !strings.Contains(got, "06:30") {
		t.Fatalf("window shown %q", got)
	}
	b.Run("pin", chromedp.SendKeys("#pc-new-pin", "4321", chromedp.ByQuery), chromedp.Click("#pc-pin-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#pc-current", chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM parental_controls WHERE user_id = ? AND pin_hash LIKE '$argon2id$%'`, uid); n != 1 {
		t.Fatal("PIN not stored hashed")
	}

	b.Run("guest", chromedp.SendKeys("#gu-name", "Grandma", chromedp.ByQuery), chromedp.SendKeys("#gu-minutes", "90", chromedp.ByQuery),
		chromedp.Click("#gu-create", chromedp.ByQuery), chromedp.WaitVisible("#gu-password", chromedp.ByQuery))
	if user, pw := b.Text("#gu-username"), b.Text("#gu-password"); user == "" || len(pw) < 6 {
		t.Fatalf("guest credentials %q %q", user, pw)
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM guest_accesses WHERE user_id = ? AND name = 'Grandma'`, uid); n != 1 {
		t.Fatalf("guest stored %d times", n)
	}
	b.Axe("my family with a guest")
	b.Run("reload hides the password", chromedp.Navigate(b.Base+"/my/family"), chromedp.WaitVisible("#gu-list", chromedp.ByQuery))
	if strings.Contains(b.Text("main"), "Give these to your guest") {
		t.Fatal("the guest's password shows again")
	}
}
