package console_test

// Browser test of the self-service page of a plan. Helpers carry the
// prefix css.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleSelfServiceInBrowser: from a plan's page the owner opens its
// self-service offer, is refused a boost without a rate (beside the table,
// nothing stored), then saves a boost option, a plan to change to and an
// extension policy, and sees them stored and shown again.
func TestConsoleSelfServiceInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	mk := func(name string) int64 {
		r := k.Do("POST", "acme", "/api/v1/admin/profiles", tok, map[string]any{"name": name, "price": 10, "duration_days": 30})
		if r.Status != 201 {
			t.Fatalf("plan: %d %s", r.Status, r.Body)
		}
		return int64(r.Data()["id"].(float64))
	}
	basic, plus := mk("Basic"), mk("Plus")
	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("plan", chromedp.Navigate(fmt.Sprintf("%s/plans/%d", b.Base, basic)), chromedp.WaitVisible("#ss-link", chromedp.ByQuery))
	ccgEnter(b, "#ss-link", chromedp.WaitVisible("#ss-boosts", chromedp.ByQuery))
	b.Axe("self-service offer")
	b.Shot("selfservice")

	b.Run("refused boost", ccgType("#b-name-0", "Turbo"), ccgType("#b-down-0", "0"), ccgType("#b-up-0", "10240"), ccgType("#b-min-0", "60"),
		ccgType("#b-price-0", "5"), chromedp.Submit("#b-name-0", chromedp.ByQuery), chromedp.WaitVisible(".error", chromedp.ByQuery))
	if got := b.Text("#ss-form"); !strings.Contains(got, "out of range") {
		t.Fatalf("refusal not shown: %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM ss_boost_options`); n != 0 {
		t.Fatalf("a refused offer was stored: %d", n)
	}
	b.Axe("refused self-service offer")

	b.Run("save", ccgType("#b-down-0", "51200"), chromedp.Click(fmt.Sprintf("#f-t-%d", plus), chromedp.ByQuery),
		ccgType("#f-ext_days", "3"), ccgType("#f-ext_price", "2.5"), ccgType("#f-ext_max", "2"),
		chromedp.Submit("#b-name-0", chromedp.ByQuery), chromedp.WaitVisible(".flash", chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "saved") {
		t.Fatalf("flash %q", got)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM ss_boost_options WHERE profile_id = ? AND name = 'Turbo' AND rate_down_kbps = 51200
		AND rate_up_kbps = 10240 AND duration_minutes = 60 AND price = 5000`, basic); n != 1 {
		t.Fatal("boost option not stored")
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM ss_plan_targets WHERE profile_id = ? AND target_id = ?`, basic, plus); n != 1 {
		t.Fatal("change target not stored")
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM ss_plan_policies WHERE profile_id = ? AND extension_days = 3 AND extension_price = 2500 AND extension_max_per_month = 2`, basic); n != 1 {
		t.Fatal("extension policy not stored")
	}
	var down string
	b.Run("shown again", chromedp.Value("#b-down-0", &down, chromedp.ByQuery))
	if down != "51200" {
		t.Fatalf("boost shown as %q", down)
	}
	// The API answers the same offer.
	r := k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/profiles/%d/self-service", basic), tok, nil)
	if r.Status != 200 || len(r.Data()["boosts"].([]any)) != 1 || r.Data()["extension"].(map[string]any)["price"] != 2.5 {
		t.Fatalf("api: %d %s", r.Status, r.Body)
	}
}
