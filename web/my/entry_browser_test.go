package my_test

// Browser test of the ways into /my/ besides a password (prefix cme).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app/portalentry"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestMyEntryInBrowser: a newcomer signs up on the phone (a wrong captcha
// is refused beside it; the emailed code creates the account and signs it
// in); a subscriber created by staff joins with its invite link; a staff
// login link opens a session only when the person clicks.
func TestMyEntryInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	portalentry.SetCaptchaDigits(s.App, func() []byte { return []byte{1, 2, 3, 4, 5, 6} })
	plan := s.Plan(map[string]any{"name": "Starter", "price": 5, "duration_days": 30})
	webtest.SetPortalEntry(t, s, map[string]any{"signup": true, "signup_profile_id": plan, "signup_required": []string{"email"}})
	b := browsertest.New(t, s.Kit)
	b.Run("phone", chromedp.EmulateViewport(320, 640))

	b.Run("sign-in page", chromedp.Navigate(b.Base+"/my/login"), chromedp.WaitVisible("#my-signup-link", chromedp.ByQuery))
	b.Run("sign-up form", chromedp.Click("#my-signup-link", chromedp.ByQuery), chromedp.WaitVisible("#my-signup", chromedp.ByQuery))
	b.Axe("my sign-up")
	fill := chromedp.Tasks{chromedp.SetValue("#f-username", "newbie", chromedp.ByQuery), chromedp.SetValue("#f-password", "Sign-up-pass-1", chromedp.ByQuery),
		chromedp.SetValue("#f-email", "newbie@example.com", chromedp.ByQuery)}
	b.Run("wrong captcha", fill, chromedp.SetValue("#f-captcha", "000000", chromedp.ByQuery), chromedp.Click("#my-signup-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-captcha", chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM portal_signups`); n != 0 {
		t.Fatalf("%d sign-ups stored after a wrong captcha", n)
	}
	b.Run("sign up", fill, chromedp.SetValue("#f-captcha", "123456", chromedp.ByQuery), chromedp.Click("#my-signup-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#my-signup-verify", chromedp.ByQuery))
	b.Axe("my sign-up code")
	var body string
	if err := s.Ten.DB.R.QueryRow(`SELECT body FROM outbox_messages WHERE channel = 'email' AND recipient = 'newbie@example.com'`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	code := webtest.CodeRe.FindStringSubmatch(body)
	if code == nil {
		t.Fatalf("no code in %q", body)
	}
	b.Run("verify", chromedp.SendKeys("#f-code", code[1], chromedp.ByQuery), chromedp.Click("#my-verify-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	if n := s.Scalar(`SELECT COUNT(*) FROM users WHERE username = 'newbie' AND email = 'newbie@example.com'`); n != 1 {
		t.Fatal("the new subscriber was not created")
	}
	b.Run("sign out", chromedp.Click("#my-logout", chromedp.ByQuery), chromedp.WaitVisible("#my-login", chromedp.ByQuery))

	// Join with a staff invite.
	uid := s.User("", map[string]any{"username": "invited", "password": "radius-i"})
	inv := s.Call("POST", fmt.Sprintf("/users/%d/portal-invite", uid), s.Tok, nil)
	link, _ := inv.Data()["link"].(string)
	if inv.Status != 200 && inv.Status != 201 || !strings.HasPrefix(link, "/my/join?code=") {
		t.Fatalf("invite: %d %s", inv.Status, inv.Body)
	}
	b.Run("join", chromedp.Navigate(b.Base+link), chromedp.WaitVisible("#my-join", chromedp.ByQuery))
	if got := b.Text("#join-as"); !strings.Contains(got, "invited") {
		t.Fatalf("join page %q", got)
	}
	b.Axe("my join")
	b.Run("set password", chromedp.SendKeys("#f-password", "Joined-pass-1", chromedp.ByQuery), chromedp.SendKeys("#f-captcha", "123456", chromedp.ByQuery),
		chromedp.Click("#my-join-btn", chromedp.ByQuery), chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	b.Run("sign out again", chromedp.Click("#my-logout", chromedp.ByQuery), chromedp.WaitVisible("#my-login", chromedp.ByQuery))

	// A staff login link: the page asks first, the click signs in.
	lk := s.Call("POST", fmt.Sprintf("/users/%d/portal-link", uid), s.Tok, nil)
	enter, _ := lk.Data()["link"].(string)
	if !strings.HasPrefix(enter, "/my/enter?code=") {
		t.Fatalf("login link: %d %s", lk.Status, lk.Body)
	}
	b.Run("link", chromedp.Navigate(b.Base+enter), chromedp.WaitVisible("#my-enter", chromedp.ByQuery))
	b.Axe("my enter")
	b.Run("continue", chromedp.Click("#my-enter-btn", chromedp.ByQuery), chromedp.WaitVisible("#my-status", chromedp.ByQuery))
	if got := b.Text("#my-username"); got != "invited" {
		t.Fatalf("signed in as %q", got)
	}
}
