package console_test

// Browser test of the parental-control pages. Helpers carry the prefix cpc.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleParentalInBrowser: a subscriber set blocked windows, a PIN and
// a guest access from the portal; from the subscriber's page the owner
// opens its parental control, sees the window, the PIN and the guest,
// clears the forgotten PIN and sees it stored as cleared; then sets a
// plan's guest limits from the plan's page.
func TestConsoleParentalInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	r := k.Do("POST", "acme", "/api/v1/admin/profiles", tok, map[string]any{"name": "Family", "price": 10, "duration_days": 30})
	if r.Status != 201 {
		t.Fatalf("plan: %d %s", r.Status, r.Body)
	}
	plan := int64(r.Data()["id"].(float64))
	r = k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": "home", "password": "pw-home", "profile_id": plan, "expiration": "2030-01-02"})
	if r.Status != 201 {
		t.Fatalf("user: %d %s", r.Status, r.Body)
	}
	uid := int64(r.Data()["id"].(float64))
	if r := k.Do("PUT", "acme", fmt.Sprintf("/api/v1/admin/profiles/%d/guest-limits", plan), tok, map[string]any{"max_active": 2, "max_minutes": 120}); r.Status != 200 {
		t.Fatalf("limits: %d %s", r.Status, r.Body)
	}
	r = k.Do("POST", "acme", "/api/v1/portal/login", "", map[string]any{"username": "home", "password": "pw-home"})
	if r.Status != 200 {
		t.Fatalf("portal login: %d %s", r.Status, r.Body)
	}
	sub := r.Data()["token"].(string)
	for _, c := range []struct {
		m, p string
		body map[string]any
	}{
		{"PUT", "/parental/rules", map[string]any{"windows": []any{map[string]any{"weekdays": []string{"sun", "mon"}, "start": "21:30", "end": "06:45"}}}},
		{"POST", "/parental/pin", map[string]any{"pin": "4321"}},
		{"POST", "/guest/register", map[string]any{"name": "Grandma", "minutes": 60}},
	} {
		if r := k.Do(c.m, "acme", "/api/v1/portal"+c.p, sub, c.body); r.Status != 200 && r.Status != 201 {
			t.Fatalf("%s: %d %s", c.p, r.Status, r.Body)
		}
	}

	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("subscriber", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.Base, uid)), chromedp.WaitVisible("#parental-link", chromedp.ByQuery))
	ccgEnter(b, "#parental-link", chromedp.WaitVisible("#windows", chromedp.ByQuery))
	if got := b.Text("#windows"); !strings.Contains(got, "Sun, Mon") || !strings.Contains(got, "21:30") || !strings.Contains(got, "06:45") {
		t.Fatalf("windows shown as %q", got)
	}
	if got := b.Text("#pin-state"); got != "Set" {
		t.Fatalf("pin shown as %q", got)
	}
	if got := b.Text("#guests"); !strings.Contains(got, "Grandma") || !strings.Contains(got, "Active") {
		t.Fatalf("guests shown as %q", got)
	}
	b.Axe("parental control")
	b.Shot("parental")

	b.Run("clear pin", acceptConfirms(), chromedp.Click("#clear-pin", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "cleared") {
		t.Fatalf("flash %q", got)
	}
	if got := b.Text("#pin-state"); got != "Not set" {
		t.Fatalf("pin shown as %q after clearing", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM parental_controls WHERE user_id = ? AND pin_hash = '' AND pin_failures = 0`, uid); n != 1 {
		t.Fatal("the PIN is not stored as cleared")
	}
	// The subscriber sets a new PIN without the old one.
	if r := k.Do("POST", "acme", "/api/v1/portal/parental/pin", sub, map[string]any{"pin": "5678"}); r.Status != 200 {
		t.Fatalf("new pin: %d %s", r.Status, r.Body)
	}

	// A plan's guest limits: a refusal beside its field, then saved.
	b.Run("plan", chromedp.Navigate(fmt.Sprintf("%s/plans/%d", b.Base, plan)), chromedp.WaitVisible("#guest-limits-link", chromedp.ByQuery))
	ccgEnter(b, "#guest-limits-link", chromedp.WaitVisible("#guest-limits-form", chromedp.ByQuery))
	b.Run("refused limits", ccgType("#f-max_active", "1000"), chromedp.Submit("#f-max_active", chromedp.ByQuery), chromedp.WaitVisible("#e-max_active", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT max_active FROM guest_limits WHERE profile_id = ?`, plan); n != 2 {
		t.Fatalf("a refused limit was stored: %d", n)
	}
	b.Axe("refused guest limits")
	b.Run("save limits", ccgType("#f-max_active", "3"), ccgType("#f-max_minutes", "90"), chromedp.Submit("#f-max_active", chromedp.ByQuery),
		chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM guest_limits WHERE profile_id = ? AND max_active = 3 AND max_minutes = 90`, plan); n != 1 {
		t.Fatal("guest limits not stored")
	}
}
