package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/modules"
	"xr/app/monitoring"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// The whole jobs of the demo's staff, in a browser, from the demo's own
// seed (built once per test binary, copied per test): the cashier sells a
// card at its till and prints the receipt, a reseller moves 5 cards to its
// sub-reseller, support opens the subscriber behind a ticket and sees its
// sessions, the NOC finds a device down and the subscribers behind it, the
// owner creates a plan and a subscriber, deposits and activates, and a
// subscriber redeems a card and renews on /my/ (demo_jobs_more_browser_test.go). The
// viewport and language vary across the jobs so both widths (1366, 390)
// and both languages (en, ar) are covered by two jobs each; every
// combination of every job would quadruple the suite's time for little.

var demoJobSeed struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// demoJobApp opens a copy of the seeded demo and serves it like xr serve.
func demoJobApp(t *testing.T) (*webtest.Kit, *app.Tenant) {
	t.Helper()
	demoJobSeed.once.Do(func() {
		dir, err := os.MkdirTemp("", "xr-demo-seed-")
		if err != nil {
			demoJobSeed.err = err
			return
		}
		defer os.RemoveAll(dir)
		if demoJobSeed.err = seedDemo(&globals{data: dir, out: io.Discard, errOut: io.Discard}, "3799"); demoJobSeed.err != nil {
			return
		}
		demoJobSeed.files = map[string][]byte{}
		demoJobSeed.err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			demoJobSeed.files[rel] = b
			return err
		})
	})
	if demoJobSeed.err != nil {
		t.Fatalf("seed the demo: %v", demoJobSeed.err)
	}
	dir := t.TempDir()
	for rel, b := range demoJobSeed.files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// As the demo serves: its NAS and devices are on loopback.
	a := xrtest.Open(t, app.Config{DataDir: dir, AllowPrivateEgress: true}, modules.All()...)
	t.Cleanup(a.Close)
	a.Limiter = app.NewMemLimiter()
	k := &webtest.Kit{T: t, App: a, Srv: webtest.Server(a)}
	k.TS = httptest.NewServer(k.Srv)
	t.Cleanup(k.TS.Close)
	return k, xrtest.Acquire(t, a, demoSlug)
}

// demoJob is one job's browser: the demo tenant's host at a viewport
// width, in a language, signed in as user; clicks counts what the person
// clicks.
type demoJob struct {
	*browsertest.Browser
	clicks int
}

func startDemoJob(t *testing.T, k *webtest.Kit, width int64, lang, user, password string) *demoJob {
	t.Helper()
	b := browsertest.New(t, k)
	b.Base = demoJobBase(t, k)
	j := &demoJob{Browser: b}
	b.Run("viewport and language", chromedp.EmulateViewport(width, 900),
		network.SetExtraHTTPHeaders(network.Headers{"Accept-Language": lang}))
	b.Run("sign in "+user, chromedp.Navigate(b.Base+"/login"), chromedp.WaitVisible("#f-email", chromedp.ByQuery),
		chromedp.SendKeys("#f-email", user, chromedp.ByQuery), chromedp.SendKeys("#f-password", password, chromedp.ByQuery),
		chromedp.Submit("#f-password", chromedp.ByQuery), chromedp.WaitVisible("nav.side", chromedp.ByQuery))
	var got string
	b.Run("page language", chromedp.AttributeValue("html", "lang", &got, nil, chromedp.ByQuery))
	if got != lang {
		t.Fatalf("page language %q, want %q", got, lang)
	}
	return j
}

// demoJobBase is the demo tenant's host on the kit's server.
func demoJobBase(t *testing.T, k *webtest.Kit) string {
	u, err := url.Parse(k.TS.URL)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + demoSlug + ".xr.test:" + u.Port()
}

// click clicks sel (counted) and waits for then.
func (j *demoJob) click(what, sel, then string) {
	j.T.Helper()
	j.clicks++
	j.Run(what, chromedp.Evaluate(`window.confirm = () => true`, nil), chromedp.Click(sel, chromedp.ByQuery), chromedp.WaitVisible(then, chromedp.ByQuery))
}

// open loads a page (a person following the menu: one click) and waits for sel.
func (j *demoJob) open(path, sel string) {
	j.T.Helper()
	j.clicks++
	j.Run("open "+path, chromedp.Navigate(j.Base+path), chromedp.WaitVisible(sel, chromedp.ByQuery))
}

func demoCount(t *testing.T, ten *app.Tenant, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := ten.DB.R.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDemoJobsInBrowser(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		job   string
		width int64
		lang  string
	}{{"cashier", 1366, "en"}, {"reseller", 390, "ar"}, {"support", 390, "en"}, {"noc", 1366, "ar"}, {"owner", 390, "en"},
		{"owner", 1366, "ar"}, {"subscriber", 390, "ar"}} {
		t.Run(fmt.Sprintf("%s/%d/%s", c.job, c.width, c.lang), func(t *testing.T) {
			t.Parallel()
			k, ten := demoJobApp(t)
			switch c.job {
			case "cashier":
				demoJobCashier(t, k, ten, c.width, c.lang)
			case "reseller":
				demoJobReseller(t, k, ten, c.width, c.lang)
			case "support":
				demoJobSupport(t, k, ten, c.width, c.lang)
			case "noc":
				demoJobNOC(t, k, ten, c.width, c.lang)
			case "owner":
				demoJobOwner(t, k, ten, c.width, c.lang)
			case "subscriber":
				demoJobSubscriber(t, k, ten, c.width, c.lang)
			}
		})
	}
}

// The cashier opens a shift, sells one of the cards it holds and prints
// the receipt: at most 6 clicks.
func demoJobCashier(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	j := startDemoJob(t, k, width, lang, demoCashier, demoCashierPassword)
	cashier := demoCount(t, ten, `SELECT id FROM managers WHERE username = ?`, demoCashier)
	j.open("/pos", "#open-btn")
	j.click("open a shift", "#open-btn", "#sell-btn")
	j.click("sell a card", "#sell-btn", `#sale-status[data-status="completed"]`)
	j.click("print the receipt", "#printed-btn", `#print-count:not([data-count="0"])`)
	if j.clicks > 6 {
		t.Errorf("%d clicks", j.clicks)
	}
	sold := demoCount(t, ten, `SELECT COUNT(*) FROM cards WHERE owner_manager_id = ? AND disposition = 'sold_counter'`, cashier)
	printed := demoCount(t, ten, `SELECT COALESCE(MAX(print_count), 0) FROM pos_sales WHERE cashier_id = ?`, cashier)
	if sold != 1 || printed < 1 {
		t.Fatalf("the cashier sold %d cards, printed %d receipts", sold, printed)
	}
	j.Axe("cashier's receipt")
}

// The reseller moves 5 of its cards to its sub-reseller from the card
// stock page, and its own stock page shows them gone.
func demoJobReseller(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	j := startDemoJob(t, k, width, lang, demoReseller, demoResellerPassword)
	north := demoCount(t, ten, `SELECT id FROM managers WHERE username = ?`, demoReseller)
	sub := demoCount(t, ten, `SELECT id FROM managers WHERE username = ?`, demoSubReseller)
	held := func(m int64) int64 {
		return demoCount(t, ten, `SELECT COUNT(*) FROM cards WHERE owner_manager_id = ? AND state = 'unused' AND disposition = 'available'`, m)
	}
	before := held(north)
	j.open("/cards/stock?mine", "#move-btn")
	if got := j.Text(fmt.Sprintf(`#holdings tr[data-manager="%d"] [data-count="available"]`, north)); got != fmt.Sprint(before) {
		t.Fatalf("the stock page shows %q, north holds %d", got, before)
	}
	j.Run("fill the move", chromedp.SetValue("#f-to", fmt.Sprint(sub), chromedp.ByQuery), chromedp.SetValue("#f-quantity", "5", chromedp.ByQuery))
	j.click("move", "#move-btn", ".flash.ok")
	if held(north) != before-5 || held(sub) != 5 {
		t.Fatalf("after the move north holds %d (was %d), north-east %d", held(north), before, held(sub))
	}
	j.open("/cards/transfers", "#transfers")
	if got := j.Text("#transfers tbody tr"); !strings.Contains(got, demoSubReseller) || !strings.Contains(got, "5") {
		t.Fatalf("history's newest row %q", got)
	}
	j.Axe("reseller's transfer history")
}

// Support opens a ticket, follows it to its subscriber and sees the
// subscriber's sessions.
func demoJobSupport(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	j := startDemoJob(t, k, width, lang, demoSupport, demoSupportPassword)
	tk := demoCount(t, ten, `SELECT t.id FROM tickets t WHERE t.requester_user_id IN (SELECT user_id FROM radius_sessions) ORDER BY t.id LIMIT 1`)
	uid := demoCount(t, ten, `SELECT requester_user_id FROM tickets WHERE id = ?`, tk)
	j.open("/tickets", fmt.Sprintf(`a[href="/tickets/%d"]`, tk))
	j.click("the ticket", fmt.Sprintf(`a[href="/tickets/%d"]`, tk), "#requester-link")
	j.click("its subscriber", "#requester-link", "#h-sessions")
	var loc string
	j.Run("where", chromedp.Location(&loc))
	if !strings.HasSuffix(loc, fmt.Sprintf("/users/%d", uid)) {
		t.Fatalf("the subscriber link led to %s", loc)
	}
	var rows int
	j.Run("sessions", chromedp.Evaluate(`document.querySelectorAll("#closed-sessions tbody tr, #live-sessions tbody tr a").length`, &rows))
	if rows == 0 {
		t.Fatal("the subscriber page shows no session")
	}
	j.Axe("support's subscriber")
}

// The NOC reaches NAS, monitoring, the map and live sessions, and opens
// the device that is down in the demo to see it down and the subscribers
// behind it.
func demoJobNOC(t *testing.T, k *webtest.Kit, ten *app.Tenant, width int64, lang string) {
	j := startDemoJob(t, k, width, lang, demoNOC, demoNOCPassword)
	for _, p := range []struct{ path, sel string }{{"/nas", "main h1"}, {"/sessions", "main h1"}, {"/monitoring/map", "main h1"}} {
		j.open(p.path, p.sel)
	}
	dev := demoCount(t, ten, `SELECT id FROM mon_devices WHERE probe_port = 9`)
	// The poller's rounds (serve runs them every second): the sector's
	// probes fail until it is down.
	for i := 0; i < 10 && demoCount(t, ten, `SELECT COUNT(*) FROM mon_devices WHERE probe_port = 9 AND status = 'down'`) == 0; i++ {
		if _, err := monitoring.PollDue(context.Background(), ten, time.Now().Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	j.open("/monitoring", fmt.Sprintf(`a[href="/monitoring/devices/device/%d"]`, dev))
	j.click("the sector that is down", fmt.Sprintf(`a[href="/monitoring/devices/device/%d"]`, dev), "#mon-impact")
	var down int
	j.Run("its state", chromedp.Evaluate(`document.querySelectorAll("#mon-status.status-down").length`, &down))
	if down != 1 {
		t.Fatalf("the sector's page does not say it is down: %q", j.Text("#mon-status"))
	}
	if got := j.Text("#mon-impact"); !strings.Contains(got, "30") {
		t.Fatalf("impact %q: the sector carries 30 subscribers", got)
	}
	j.Axe("NOC's device")
}
