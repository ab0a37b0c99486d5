package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// clickLoad clicks sel (counted) and waits for the next document to load
// and show then: a form that posts and redirects may leave the old page's
// elements in place for a moment.
func (j *demoJob) clickLoad(what, sel, then string) {
	j.T.Helper()
	j.clicks++
	j.Run(what, chromedp.Evaluate(`window.confirm = () => true; document.body.setAttribute("data-demo-old", "")`, nil),
		chromedp.Click(sel, chromedp.ByQuery), chromedp.WaitNotPresent("body[data-demo-old]", chromedp.ByQuery),
		chromedp.WaitVisible(then, chromedp.ByQuery))
}

// The owner creates a plan and a subscriber on it, deposits and activates:
// at most 12 clicks.
func demoJobOwner(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	j := startDemoJob(t, k, width, lang, demoUser, demoPassword)
	j.open("/plans", `a[href="/plans/new"]`)
	j.clickLoad("new plan", `a[href="/plans/new"]`, "#f-name")
	j.Run("the plan", chromedp.SendKeys("#f-name", "Job 50M", chromedp.ByQuery), chromedp.SendKeys("#f-price", "20", chromedp.ByQuery),
		chromedp.SendKeys("#f-duration_days", "30", chromedp.ByQuery))
	j.clickLoad("create the plan", `#plan-form button[type="submit"]`, "main h1")
	plan := demoCount(t, ten, `SELECT id FROM profiles WHERE name = 'Job 50M'`)
	j.open("/users", `a[href="/users/new"]`)
	j.clickLoad("new subscriber", `a[href="/users/new"]`, "#f-username")
	j.clicks++ // choosing the plan
	j.Run("the subscriber", chromedp.SendKeys("#f-username", "jobber", chromedp.ByQuery), chromedp.SendKeys("#f-password", "jobber-Pass-1", chromedp.ByQuery),
		chromedp.SetValue("#f-profile_id", fmt.Sprint(plan), chromedp.ByQuery))
	j.clickLoad("create the subscriber", `form[action="/users"] button[type="submit"]`, "#activate")
	j.Run("the deposit", chromedp.SendKeys("#f-amount", "25", chromedp.ByQuery))
	j.clickLoad("deposit", `form[action$="/deposit"] button[type="submit"]:not([formaction])`, "#activate")
	j.clickLoad("activate", "#activate", "#activate")
	if j.clicks > 12 {
		t.Errorf("%d clicks", j.clicks)
	}
	var balance, expired int64
	if err := ten.DB.R.QueryRow(`SELECT balance, expiration IS NULL OR expiration <= ? FROM users WHERE username = 'jobber' AND profile_id = ?`,
		app.StampNow(), plan).Scan(&balance, &expired); err != nil {
		t.Fatalf("the subscriber: %v", err)
	}
	if balance != 5000 || expired != 0 {
		t.Fatalf("jobber: balance %d thousandths (want 25 - 20), expired %v", balance, expired != 0)
	}
	j.Axe("owner's new subscriber")
}

// A subscriber on its phone redeems a card and renews its plan with it:
// at most 6 clicks from its home page.
func demoJobSubscriber(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	b := browsertest.New(t, k)
	j := &demoJob{Browser: b}
	b.Base = demoJobBase(t, k)
	b.Run("viewport and language", chromedp.EmulateViewport(width, 900), network.SetExtraHTTPHeaders(network.Headers{"Accept-Language": lang}))
	b.Run("sign in", chromedp.Navigate(b.Base+"/my/login"), chromedp.WaitVisible("#f-username", chromedp.ByQuery),
		chromedp.SendKeys("#f-username", demoPortalUser, chromedp.ByQuery), chromedp.SendKeys("#f-password", demoPortalPassword, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible(`a[href="/my/redeem"]`, chromedp.ByQuery))
	var price, balance int64
	if err := ten.DB.R.QueryRow(`SELECT p.price, u.balance FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = ?`, demoPortalUser).
		Scan(&price, &balance); err != nil {
		t.Fatal(err)
	}
	var code string
	var face int64
	if err := ten.DB.R.QueryRow(`SELECT c.code, b.face_value FROM cards c JOIN card_batches b ON b.id = c.batch_id WHERE b.card_mode = 'refill_balance'
		AND c.state = 'unused' AND c.disposition = 'available' AND b.face_value + ? >= ? ORDER BY b.face_value DESC, c.seq LIMIT 1`, balance, price).
		Scan(&code, &face); err != nil {
		t.Fatalf("a card that pays the plan: %v", err)
	}
	before := demoCount(t, ten, `SELECT COUNT(*) FROM user_activations a JOIN users u ON u.id = a.user_id WHERE u.username = ?`, demoPortalUser)
	j.clickLoad("to redeem", `a[href="/my/redeem"]`, "#f-code")
	j.Run("the code", chromedp.SendKeys("#f-code", code, chromedp.ByQuery))
	j.clickLoad("redeem", "#my-redeem-btn", "main")
	j.open("/my/renew", "#my-renew-btn")
	j.clickLoad("renew", "#my-renew-btn", "main")
	if j.clicks > 6 {
		t.Errorf("%d clicks", j.clicks)
	}
	if n := demoCount(t, ten, `SELECT COUNT(*) FROM cards WHERE code = ? AND state <> 'unused'`, code); n != 1 {
		t.Fatal("the card was not redeemed")
	}
	if after := demoCount(t, ten, `SELECT COUNT(*) FROM user_activations a JOIN users u ON u.id = a.user_id WHERE u.username = ?`, demoPortalUser); after != before+1 {
		t.Fatalf("activations %d -> %d: the renewal did not happen", before, after)
	}
	if got := demoCount(t, ten, `SELECT balance FROM users WHERE username = ?`, demoPortalUser); got != balance+face-price {
		t.Fatalf("balance %d, want %d + %d - %d", got, balance, face, price)
	}
	if strings.Contains(j.Text("main"), "ERR_") {
		t.Fatalf("the renewal page shows an error code: %q", j.Text("main"))
	}
	j.Axe("subscriber renewed")
}
