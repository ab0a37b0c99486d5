package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// pressEnterOn focuses an element as Tab would and presses Enter on it:
// the action works from the keyboard.
func pressEnterOn(sel string) chromedp.Action {
	return chromedp.Tasks{chromedp.Focus(sel, chromedp.ByQuery), chromedp.KeyEvent(kb.Enter)}
}

func acceptConfirms() chromedp.Action { return chromedp.Evaluate(`window.confirm = () => true`, nil) }

// markStale marks the current page so a wait can tell the next one from
// it (a flash left by the previous action must not count).
func markStale() chromedp.Action { return chromedp.Evaluate(`document.body.dataset.stale = "1"`, nil) }

const freshOK, freshBad = "body:not([data-stale]) .flash.ok", "body:not([data-stale]) .flash.bad"

// TestConsoleSessionsDisconnect: the operator disconnects a live session
// from /sessions; the fake NAS answers ACK, then nothing; each outcome is
// shown on the page and recorded on the session row. A session that
// starts later appears by the 5 s refresh, without a reload.
func TestConsoleSessionsDisconnect(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	b := browsertest.New(t, k.Kit)
	k.User("bob", 1, "")
	k.Start("bob", "b1", "100.64.0.7", "AA:BB:CC:00:00:07")
	id := k.SessionID("b1")
	b.SignIn("owner")

	b.Run("sessions page", chromedp.Navigate(b.Base+"/sessions"), chromedp.WaitVisible("#dc-"+id, chromedp.ByQuery))
	if got := b.Text("#sessions-table tbody"); !strings.Contains(got, "bob") || !strings.Contains(got, "100.64.0.7") || !strings.Contains(got, "core-1") {
		t.Fatalf("sessions row: %q", got)
	}
	if got := b.Text("nav.side [aria-current=page]"); got != "Live sessions" {
		t.Fatalf("active menu item %q", got)
	}
	b.Axe("sessions")
	b.Shot("sessions")

	// Filters: an unknown kind hides it, the subscriber kind shows it.
	b.Run("kind filter", chromedp.Navigate(b.Base+"/sessions?kind=guest"), chromedp.WaitVisible("#sessions-table", chromedp.ByQuery))
	if got := b.Text("#sessions-table tbody"); strings.Contains(got, "bob") {
		t.Fatalf("guest filter shows bob: %q", got)
	}
	b.Run("q filter", chromedp.Navigate(b.Base+"/sessions?q=bo&kind=subscriber"), chromedp.WaitVisible("#dc-"+id, chromedp.ByQuery))

	// Disconnect with the keyboard: the NAS accepts.
	b.Run("disconnect (ACK)", markStale(), acceptConfirms(), pressEnterOn("#dc-"+id), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "accepted") {
		t.Fatalf("ACK flash %q", got)
	}
	var loc string
	b.Run("location", chromedp.Location(&loc))
	if !strings.Contains(loc, "/sessions?") || !strings.Contains(loc, "q=bo") {
		t.Fatalf("after disconnect at %s, want the filtered list", loc)
	}
	outcome := func() string {
		var o string
		if err := k.Acquire("acme").DB.R.QueryRow(`SELECT disconnect_outcome FROM radius_sessions WHERE acct_session_id = 'b1'`).Scan(&o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := outcome(); o != "ok" || len(k.Sent) != 1 || k.Sent[0] != "b1" {
		t.Fatalf("stored outcome %q, sent %v", o, k.Sent)
	}

	// The NAS does not answer: said as the API says it (502 nas_unreachable).
	k.Outcome = "unreachable"
	b.Run("disconnect (no answer)", markStale(), acceptConfirms(), chromedp.Click("#dc-"+id, chromedp.ByQuery), chromedp.WaitVisible(freshBad, chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "did not answer") {
		t.Fatalf("unreachable flash %q", got)
	}
	if o := outcome(); o != "unreachable" {
		t.Fatalf("stored outcome %q", o)
	}

	// The session's record shows it.
	b.Run("session record", chromedp.Navigate(b.Base+"/sessions/"+id), chromedp.WaitVisible("#outcome", chromedp.ByQuery))
	if got := b.Text("#outcome"); !strings.Contains(got, "unreachable") {
		t.Fatalf("record outcome %q", got)
	}
	b.Axe("session record")

	// A session that starts now shows up by the list's own refresh.
	b.Run("back to list", chromedp.Navigate(b.Base+"/sessions"), chromedp.WaitVisible("#dc-"+id, chromedp.ByQuery))
	k.Start("bob", "b2", "100.64.0.8", "")
	b.Run("refreshed", chromedp.WaitVisible("#session-"+k.SessionID("b2"), chromedp.ByQuery))
	b.NoDialog("sessions")
}

// TestConsoleUsersBulkDisable: subscribers ticked in the list, the
// confirmation tells how many will change (and nothing changes before it
// is confirmed), then exactly those are disabled. The filters narrow the
// list by plan and by expiry.
func TestConsoleUsersBulkDisable(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	b := browsertest.New(t, s.Kit)
	plan := s.Plan(map[string]any{"name": "Fiber", "price": 5, "duration_days": 30})
	soon := app.FormatTime(time.Now().Add(72 * time.Hour))
	later := app.FormatTime(time.Now().Add(60 * 24 * time.Hour))
	a := s.User("", map[string]any{"username": "ann", "profile_id": plan})
	bb := s.User("", map[string]any{"username": "ben"})
	c := s.User("", map[string]any{"username": "cyd"})
	s.Exec(`UPDATE users SET expiration = ? WHERE id = ?`, soon, a)
	s.Exec(`UPDATE users SET expiration = ? WHERE id IN (?, ?)`, later, bb, c)
	b.SignIn("owner")

	sel := func(id int64) string { return fmt.Sprintf("#sel-%d", id) }
	b.Run("list", chromedp.Navigate(b.Base+"/users"), chromedp.WaitVisible(sel(c), chromedp.ByQuery))
	b.Axe("subscribers with bulk")

	// "Select all" ticks every row of the page.
	var ticked int
	b.Run("select all", chromedp.Click("#sel-all", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("input[name=ids]:checked").length`, &ticked))
	if ticked != 3 {
		t.Fatalf("select all ticked %d", ticked)
	}
	b.Run("unselect all", chromedp.Click("#sel-all", chromedp.ByQuery))

	// Tick two with the keyboard (space on a checkbox), ask to disable.
	b.Run("tick", chromedp.Focus(sel(a), chromedp.ByQuery), chromedp.KeyEvent(" "), chromedp.Click(sel(bb), chromedp.ByQuery),
		pressEnterOn("#bulk-disable"), chromedp.WaitVisible("#bulk-count", chromedp.ByQuery))
	if got := b.Text("#bulk-count"); !strings.Contains(got, "2 subscriber(s) will be disabled") {
		t.Fatalf("confirmation says %q", got)
	}
	if got := b.Text("#bulk-confirm"); !strings.Contains(got, "2") {
		t.Fatalf("confirm button %q", got)
	}
	enabled := func(id int64) int64 { return s.Scalar(`SELECT enabled FROM users WHERE id = ?`, id) }
	if enabled(a) != 1 || enabled(bb) != 1 {
		t.Fatal("subscribers changed before the confirmation")
	}
	b.Axe("bulk confirmation")
	b.Run("confirm", markStale(), pressEnterOn("#bulk-confirm"), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if got := b.Text(".flash"); !strings.Contains(got, "2 subscriber(s) changed") {
		t.Fatalf("flash %q", got)
	}
	if enabled(a) != 0 || enabled(bb) != 0 || enabled(c) != 1 {
		t.Fatalf("enabled after bulk: %d %d %d", enabled(a), enabled(bb), enabled(c))
	}
	ev := s.Scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.disabled'`)
	if ev != 2 {
		t.Fatalf("user.disabled events %d", ev)
	}

	// Nothing ticked: said, nothing run.
	b.Run("empty bulk", markStale(), chromedp.Click("#bulk-enable", chromedp.ByQuery), chromedp.WaitVisible(freshBad, chromedp.ByQuery))

	// Filters: plan, then expiring within 7 days.
	b.Run("plan filter", chromedp.Navigate(fmt.Sprintf("%s/users?plan=%d", b.Base, plan)), chromedp.WaitVisible("#users-table", chromedp.ByQuery))
	if got := b.Text("#users-table tbody"); !strings.Contains(got, "ann") || strings.Contains(got, "ben") {
		t.Fatalf("plan filter: %q", got)
	}
	b.Run("expiring filter", chromedp.Navigate(b.Base+"/users"), chromedp.WaitVisible(sel(c), chromedp.ByQuery),
		chromedp.SendKeys("#f-expiring", "7", chromedp.ByQuery), chromedp.WaitNotPresent(sel(c), chromedp.ByQuery))
	if got := b.Text("#users-table tbody"); !strings.Contains(got, "ann") || strings.Contains(got, "cyd") {
		t.Fatalf("expiring filter: %q", got)
	}
	// A refused filter value is said beside its field.
	b.Run("bad filter", chromedp.Navigate(b.Base+"/users?expiring=-3"), chromedp.WaitVisible("#e-expiring", chromedp.ByQuery))
	b.NoDialog("subscribers")
}

// TestConsoleUserRecord: the record shows live and closed sessions and the
// usage chart; the operator edits the subscriber (a refused value keeps
// the form), locks the session's MAC, resets the quota, disconnects, and
// opens a portal session whose token is shown once.
func TestConsoleUserRecord(t *testing.T) {
	t.Parallel()
	k := webtest.NewSessionsKit(t)
	b := browsertest.New(t, k.Kit)
	r := k.Do("POST", "acme", "/api/v1/users", k.OwnerToken, map[string]any{"username": "dana", "password": "pw-dana-1", "firstname": "Dana"})
	if r.Status != 201 {
		t.Fatalf("create: %s", r.Body)
	}
	uid := int64(r.Data()["id"].(float64))
	k.Exec(`UPDATE users SET used_bytes = 777 WHERE id = ?`, uid)
	ctx := context.Background()
	// One closed session with traffic, one live.
	k.Start("dana", "d0", "100.64.1.1", "")
	if err := k.Svc.RecordAccounting(ctx, []aaa.AcctEvent{{NAS: k.NAS, Status: aaa.StatusStop, SessionID: "d0", Username: "dana",
		InputOctets: 3 << 20, OutputOctets: 9 << 20, SessionTime: 600, EventTime: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	k.Start("dana", "d1", "100.64.1.2", "aa:bb:cc:dd:ee:01")
	live := k.SessionID("d1")
	b.SignIn("owner")

	b.Run("record", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.Base, uid)), chromedp.WaitVisible("#live-sessions", chromedp.ByQuery),
		chromedp.WaitVisible("#usage-chart canvas", chromedp.ByQuery))
	if got := b.Text("#live-sessions tbody"); !strings.Contains(got, "100.64.1.2") {
		t.Fatalf("live sessions: %q", got)
	}
	if got := b.Text("#closed-sessions tbody"); !strings.Contains(got, "100.64.1.1") {
		t.Fatalf("closed sessions: %q", got)
	}
	var usageRows int
	b.Run("usage table", chromedp.Evaluate(`document.querySelectorAll("#usage-table tbody tr").length`, &usageRows))
	if usageRows < 2 { // a day with traffic and the total
		t.Fatalf("usage table rows %d", usageRows)
	}
	b.Axe("subscriber record")
	b.Shot("subscriber-record")
	b.NoDialog("record")

	// Edit: a refused email is said beside the field, nothing stored.
	b.Run("edit form", pressEnterOn("#edit"), chromedp.WaitVisible("#f-firstname", chromedp.ByQuery))
	b.Axe("edit subscriber")
	b.Run("bad email", chromedp.SetValue("#f-email", "not-an-email", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("f-email").type = "text"`, nil),
		chromedp.Click("#save", chromedp.ByQuery), chromedp.WaitVisible("#e-email", chromedp.ByQuery))
	var email string
	k.Acquire("acme").DB.R.QueryRow(`SELECT email FROM users WHERE id = ?`, uid).Scan(&email)
	if email != "" {
		t.Fatalf("refused email stored: %q", email)
	}
	exp := time.Now().Add(10 * 24 * time.Hour).UTC()
	b.Run("edit", chromedp.SetValue("#f-firstname", "Dana Q", chromedp.ByQuery), chromedp.SetValue("#f-email", "dana@example.com", chromedp.ByQuery),
		chromedp.SetValue("#f-phone", "+961 1 234", chromedp.ByQuery), chromedp.SetValue("#f-static_ip", "100.64.9.9", chromedp.ByQuery),
		chromedp.SetValue("#f-notes", "gate code 42", chromedp.ByQuery), chromedp.SetValue("#f-expiration", exp.Format("2006-01-02T15:04"), chromedp.ByQuery),
		pressEnterOn("#save"), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	var first, phone, ip, notes, expStored string
	k.Acquire("acme").DB.R.QueryRow(`SELECT firstname, email, phone, static_ip, notes, expiration FROM users WHERE id = ?`, uid).
		Scan(&first, &email, &phone, &ip, &notes, &expStored)
	if first != "Dana Q" || email != "dana@example.com" || phone != "+961 1 234" || ip != "100.64.9.9" || notes != "gate code 42" ||
		expStored != exp.Format("2006-01-02 15:04")+":00" {
		t.Fatalf("stored after edit: %q %q %q %q %q %q", first, email, phone, ip, notes, expStored)
	}
	if got := b.Text("#static-ip"); got != "100.64.9.9" {
		t.Fatalf("record shows static IP %q", got)
	}

	// MAC lock from the live session row.
	b.Run("lock mac", markStale(), pressEnterOn("#umac-"+live), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	var locked int
	var macs string
	k.Acquire("acme").DB.R.QueryRow(`SELECT mac_lock_enabled, mac_locked_addrs FROM users WHERE id = ?`, uid).Scan(&locked, &macs)
	if locked != 1 || !strings.Contains(macs, "aa:bb:cc:dd:ee:01") {
		t.Fatalf("mac lock stored %d %s", locked, macs)
	}
	if got := b.Text("#mac-lock"); !strings.Contains(got, "aa:bb:cc:dd:ee:01") {
		t.Fatalf("record shows MAC lock %q", got)
	}

	// Reset quota.
	b.Run("reset quota", markStale(), acceptConfirms(), pressEnterOn("#reset-quota"), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	var used int64
	k.Acquire("acme").DB.R.QueryRow(`SELECT used_bytes FROM users WHERE id = ?`, uid).Scan(&used)
	if used != 0 {
		t.Fatalf("used_bytes after reset %d", used)
	}

	// Disconnect every live session of the subscriber.
	k.Sent = nil
	b.Run("disconnect", markStale(), acceptConfirms(), pressEnterOn("#disconnect"), chromedp.WaitVisible(freshOK, chromedp.ByQuery))
	if len(k.Sent) != 1 || k.Sent[0] != "d1" {
		t.Fatalf("disconnect sent %v", k.Sent)
	}

	// Login-as: a portal session token, shown once, that the portal accepts.
	b.Run("login as", acceptConfirms(), pressEnterOn("#login-as"), chromedp.WaitVisible("#portal-token", chromedp.ByQuery))
	var tok string
	b.Run("token", chromedp.Value("#portal-token", &tok, chromedp.ByQuery))
	if len(tok) < 20 {
		t.Fatalf("token %q", tok)
	}
	if me := k.Do("GET", "acme", "/api/v1/portal/me", tok, nil); me.Status != 200 {
		t.Fatalf("portal with the shown token: %d %s", me.Status, me.Body)
	}
	b.Axe("login-as")
	b.Run("reload record", chromedp.Navigate(fmt.Sprintf("%s/users/%d", b.Base, uid)), chromedp.WaitVisible("#balance", chromedp.ByQuery))
	var again int
	b.Run("token gone", chromedp.Evaluate(`document.querySelectorAll("#portal-token").length`, &again))
	if again != 0 {
		t.Fatal("the portal token is shown again")
	}
	b.NoDialog("record actions")
}
