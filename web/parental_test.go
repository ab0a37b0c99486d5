package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"database/sql"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app"
	"xr/app/aaa"
	"xr/app/parental"
	"xr/app/portalentry"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// Helpers of the parental-control and guest tests (prefix par).

// parKit is the bandwidth kit (real RADIUS on loopback, fake NASes
// answering Disconnect) with the tenant in Asia/Riyadh (UTC+3), guest
// logins wired as the command line wires them, and a fake clock.
type parKit struct {
	*webtest.BandwidthKit
	now  time.Time
	nas  *aaa.NAS // its CoA port is disc
	disc *discNAS
}

// discNAS is a NAS stand-in answering Disconnect-Requests with
// Disconnect-ACK; it keeps the usernames it was asked to disconnect.
type discNAS struct {
	conn *net.UDPConn
	mu   sync.Mutex
	got  []string
}

func newDiscNAS(t *testing.T, ip string) *discNAS {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		t.Fatal(err)
	}
	f := &discNAS{conn: c}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			p, err := radius.Parse(append([]byte{}, buf[:n]...), []byte(webtest.RadiusSecret))
			if err != nil || p.Code != radius.CodeDisconnectRequest {
				continue
			}
			f.mu.Lock()
			f.got = append(f.got, rfc2865.UserName_GetString(p))
			f.mu.Unlock()
			if b, err := p.Response(radius.CodeDisconnectACK).Encode(); err == nil {
				_, _ = c.WriteToUDP(b, from)
			}
		}
	}()
	return f
}

func newParKit(t *testing.T) *parKit {
	k := &parKit{BandwidthKit: webtest.NewBandwidthKit(t)}
	k.Svc.Vouchers, k.Svc.IsGuest = parental.WithGuests(nil), parental.IsGuestLogin
	k.disc = newDiscNAS(t, "127.0.0.4")
	if _, err := aaa.CreateNAS(context.Background(), xrtest.System(t, k.Acquire("acme")), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "home"},
		IP: app.Opt[string]{Set: true, V: "127.0.0.4"}, Secret: app.Opt[string]{Set: true, V: webtest.RadiusSecret},
		CoAPort: app.Opt[int]{Set: true, V: k.disc.conn.LocalAddr().(*net.UDPAddr).Port}}); err != nil {
		t.Fatal(err)
	}
	xrtest.Eventually(t, "the NAS in the directory", func() bool {
		var ok bool
		k.nas, ok = k.Svc.LookupNAS(netip.MustParseAddr("127.0.0.4"))
		return ok
	})
	k.exec(`INSERT INTO settings(key, value) VALUES ('timezone', '"Asia/Riyadh"') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	k.exec(`INSERT INTO authz_changes(profile_id) VALUES (-1)`) // the index reloads its zone
	return k
}

func (k *parKit) exec(q string, args ...any) {
	k.T.Helper()
	if err := k.Acquire("acme").Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(q, args...)
		return err
	}); err != nil {
		k.T.Fatal(err)
	}
}

func (k *parKit) at(now time.Time) {
	k.now = now
	k.App.SetClock(func() time.Time { return now })
}

// riyadh is a wall time of November 2025 in the tenant's zone (UTC+3), in
// UTC; the 17th is a Monday. The fake clock stays before the real one, so
// the tokens issued at the real time stay valid.
func riyadh(day, hour, min int) time.Time {
	return time.Date(2025, 11, day, hour-3, min, 0, 0, time.UTC)
}

func (k *parKit) portal(prefix, method, path, tok string, body any) webtest.Resp {
	k.T.Helper()
	return k.Do(method, "acme", "/api/v1"+prefix+path, tok, body)
}

func (k *parKit) subscriber(name string) (int64, string) {
	k.T.Helper()
	id := k.CreateUser(name)
	r := k.portal("/portal", "POST", "/login", "", map[string]any{"username": name, "password": "pw-" + name})
	if r.Status != 200 {
		k.T.Fatalf("portal login: %d %s", r.Status, r.Body)
	}
	return id, r.Data()["token"].(string)
}

// access sends an Access-Request and answers the reply.
func (k *parKit) access(user, password string) *radius.Packet {
	k.T.Helper()
	p := radius.New(radius.CodeAccessRequest, []byte(webtest.RadiusSecret))
	rfc2865.UserName_SetString(p, user)
	rfc2865.UserPassword_SetString(p, password)
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	h := hmac.New(md5.New, []byte(webtest.RadiusSecret))
	h.Write(b)
	rfc2869.MessageAuthenticator_Set(p, h.Sum(nil))
	return k.Exchange(p, k.AuthAddr)
}

func (k *parKit) wantAccept(user, password string) *radius.Packet {
	k.T.Helper()
	r := k.access(user, password)
	if r.Code != radius.CodeAccessAccept {
		k.T.Fatalf("%s at %s: %v %q, want Access-Accept", user, k.now, r.Code, rfc2865.ReplyMessage_GetString(r))
	}
	return r
}

func (k *parKit) wantReject(user, password, message string) {
	k.T.Helper()
	r := k.access(user, password)
	if r.Code != radius.CodeAccessReject || rfc2865.ReplyMessage_GetString(r) != message {
		k.T.Fatalf("%s at %s: %v %q, want Access-Reject %q", user, k.now, r.Code, rfc2865.ReplyMessage_GetString(r), message)
	}
}

// runDue runs the jobs due at the fake clock and answers how many ran.
func (k *parKit) runDue() int {
	k.T.Helper()
	n, err := k.App.Jobs.RunDue(context.Background(), "acme", k.now)
	if err != nil {
		k.T.Fatal(err)
	}
	return n
}

// disconnects counts the Disconnect-Requests the NAS stand-in got for user.
func (k *parKit) disconnects(user string) int {
	k.disc.mu.Lock()
	defer k.disc.mu.Unlock()
	n := 0
	for _, u := range k.disc.got {
		if u == user {
			n++
		}
	}
	return n
}

func (k *parKit) stored(q string, args ...any) string {
	k.T.Helper()
	var v sql.NullString
	if err := k.Acquire("acme").DB.R.QueryRow(q, args...).Scan(&v); err != nil && err != sql.ErrNoRows {
		k.T.Fatal(err)
	}
	return v.String
}

const parBlockedMsg = "Internet access is blocked by parental control now."

func TestParentalWindowsEnforcedByRadius(t *testing.T) {
	t.Parallel()
	k := newParKit(t)
	uid, tok := k.subscriber("kid")
	k.at(riyadh(17, 20, 0))

	// Mondays 21:00-22:00 Riyadh time.
	r := k.portal("/portal", "PUT", "/parental/rules", tok, map[string]any{"windows": []any{
		map[string]any{"weekdays": []string{"mon"}, "start": "21:00", "end": "22:00"}}})
	if r.Status != 200 || r.Data()["blocked"] != false || r.Data()["next_block_at"] != app.FormatTime(riyadh(17, 21, 0)) ||
		r.Data()["timezone"] != "Asia/Riyadh" {
		t.Fatalf("rules: %d %s", r.Status, r.Body)
	}
	// Before the window: accepted, Session-Timeout up to the window start.
	acc := k.wantAccept("kid", "pw-kid")
	if st := rfc2865.SessionTimeout_Get(acc); st != 3600 {
		t.Fatalf("Session-Timeout %d, want 3600 (the window start)", st)
	}
	k.Online(k.nas, "kid", "sess-1")
	if n := k.runDue(); n != 0 {
		t.Fatalf("%d jobs ran before the window", n)
	}

	// The window starts: the job disconnects the live session, logins are
	// refused with their own reason, the explainer shows the step.
	k.at(riyadh(17, 21, 0))
	if n := k.runDue(); n != 1 {
		t.Fatalf("%d jobs at the window start", n)
	}
	if d := k.disconnects("kid"); d != 1 {
		t.Fatalf("%d Disconnect-Requests at the window start", d)
	}
	if o := k.stored(`SELECT disconnect_outcome FROM radius_sessions WHERE acct_session_id = 'sess-1'`); o != "ok" {
		t.Fatalf("disconnect outcome %q", o)
	}
	// The next start is queued (next Monday), once.
	if next := k.stored(`SELECT group_concat(run_at) FROM jobs WHERE kind = 'parental.edge' AND state = 'queued'`); next != app.FormatTime(riyadh(24, 21, 0)) {
		t.Fatalf("queued edges %q", next)
	}
	// The NAS ends it (Accounting-Stop).
	if err := k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{{NAS: k.nas, Status: aaa.StatusStop, SessionID: "sess-1", Username: "kid", EventTime: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	k.wantReject("kid", "pw-kid", parBlockedMsg)
	ex := k.Do("POST", "acme", "/api/v1/admin/radius/explain", k.Tok, map[string]any{"username": "kid", "nas_id": k.nas.ID, "password": "pw-kid"})
	if ex.Status != 200 || ex.Data()["reason"] != "parental_blocked" {
		t.Fatalf("explain: %d %s", ex.Status, ex.Body)
	}
	found := false
	for _, c := range ex.Data()["checks"].([]any) {
		m := c.(map[string]any)
		if m["name"] == "parental" && m["outcome"] == "fail" && m["detail"] == "blocked by parental control until "+app.FormatTime(riyadh(17, 22, 0)) {
			found = true
		}
	}
	if !found {
		t.Fatalf("no failed parental check: %s", ex.Body)
	}
	g := k.portal("/user", "GET", "/parental", tok, nil)
	if g.Status != 200 || g.Data()["blocked"] != true || g.Data()["blocked_until"] != app.FormatTime(riyadh(17, 22, 0)) {
		t.Fatalf("state in the window: %d %s", g.Status, g.Body)
	}

	// The window ends: allowed again.
	k.at(riyadh(17, 22, 0))
	k.wantAccept("kid", "pw-kid")
	ex = k.Do("POST", "acme", "/api/v1/admin/radius/explain", k.Tok, map[string]any{"username": "kid", "nas_id": k.nas.ID, "password": "pw-kid"})
	passed := false
	for _, c := range ex.Data()["checks"].([]any) {
		m := c.(map[string]any)
		passed = passed || (m["name"] == "parental" && m["outcome"] == "pass")
	}
	if ex.Data()["result"] != "accept" || !passed {
		t.Fatalf("explain after the window: %s", ex.Body)
	}

	// Pause now for 30 minutes: the live session is cut at once, logins are
	// refused until the pause ends.
	k.Online(k.nas, "kid", "sess-2")
	p := k.portal("/portal", "POST", "/parental/pause", tok, map[string]any{"minutes": 30})
	if p.Status != 200 || p.Data()["blocked"] != true || p.Data()["paused_until"] != app.FormatTime(riyadh(17, 22, 30)) {
		t.Fatalf("pause: %d %s", p.Status, p.Body)
	}
	if n := k.runDue(); n != 1 || k.disconnects("kid") != 2 {
		t.Fatalf("pause: %d jobs, %d disconnects", n, k.disconnects("kid"))
	}
	k.wantReject("kid", "pw-kid", parBlockedMsg)
	k.at(riyadh(17, 22, 30))
	k.wantAccept("kid", "pw-kid")

	// Refusals store nothing.
	before := k.stored(`SELECT windows || '|' || COALESCE(paused_until, '') || '|' || updated_at FROM parental_controls WHERE user_id = ?`, uid)
	webtest.ExpectErr(t, k.portal("/portal", "PUT", "/parental/rules", tok, map[string]any{"windows": []any{map[string]any{"start": "25:00", "end": "07:00"}}}),
		400, "ERR_VALIDATION", "invalid_time_of_day")
	webtest.ExpectErr(t, k.portal("/portal", "PUT", "/parental/rules", tok, map[string]any{"windows": []any{map[string]any{"weekdays": []string{"funday"}, "start": "20:00", "end": "07:00"}}}),
		400, "ERR_VALIDATION", "invalid_weekday")
	webtest.ExpectErr(t, k.portal("/user", "POST", "/parental/pause", tok, map[string]any{"minutes": 5000}), 400, "ERR_VALIDATION", "pause_minutes_out_of_range")
	webtest.ExpectErr(t, k.portal("/user", "POST", "/parental/pause", tok, map[string]any{}), 400, "ERR_VALIDATION", "minutes_required")
	if after := k.stored(`SELECT windows || '|' || COALESCE(paused_until, '') || '|' || updated_at FROM parental_controls WHERE user_id = ?`, uid); after != before {
		t.Fatalf("a refusal wrote: %q -> %q", before, after)
	}
}

func TestParentalUnlockPINAndCaptcha(t *testing.T) {
	t.Parallel()
	k := newParKit(t)
	uid, tok := k.subscriber("teen")
	k.at(riyadh(17, 20, 0))
	portalentry.SetCaptchaDigits(k.App, func() []byte { return []byte{4, 2, 4, 2, 4, 2} })

	// Every day 21:00-07:00.
	if r := k.portal("/user", "PUT", "/parental/rules", tok, map[string]any{"windows": []any{map[string]any{"start": "21:00", "end": "07:00"}}}); r.Status != 200 {
		t.Fatalf("rules: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.portal("/portal", "POST", "/parental/pin", tok, map[string]any{"pin": "12a4"}), 400, "ERR_VALIDATION", "invalid_pin_format")
	if r := k.portal("/portal", "POST", "/parental/pin", tok, map[string]any{"pin": "2468"}); r.Status != 200 || r.Data()["pin_set"] != true {
		t.Fatalf("pin: %d %s", r.Status, r.Body)
	}
	hash := k.stored(`SELECT pin_hash FROM parental_controls WHERE user_id = ?`, uid)
	if len(hash) < 10 || hash[:10] != "$argon2id$" {
		t.Fatalf("pin stored as %q", hash)
	}
	// Changing asks the current PIN.
	webtest.ExpectErr(t, k.portal("/portal", "POST", "/parental/pin", tok, map[string]any{"pin": "1357"}), 400, "ERR_VALIDATION", "current_pin_required")
	webtest.ExpectErr(t, k.portal("/portal", "POST", "/parental/pin", tok, map[string]any{"pin": "1357", "current_pin": "0000"}), 400, "ERR_VALIDATION", "invalid_pin")
	if k.stored(`SELECT pin_hash FROM parental_controls WHERE user_id = ?`, uid) != hash {
		t.Fatal("a refused change replaced the PIN")
	}
	unlock := func(prefix string, body map[string]any) webtest.Resp {
		return k.Do("POST", "acme", "/api/v1"+prefix+"/parental/unlock", "", body)
	}
	// Not blocked at 20:00: nothing to unlock, nothing stored.
	webtest.ExpectErr(t, unlock("/portal", map[string]any{"username": "teen", "pin": "2468"}), 409, "ERR_CONFLICT", "not_blocked")

	k.at(riyadh(17, 23, 0))
	k.wantReject("teen", "pw-teen", parBlockedMsg)
	// Wrong PINs are counted; an unknown name answers alike.
	for i := 1; i <= 3; i++ {
		webtest.ExpectErr(t, unlock("/portal", map[string]any{"username": "teen", "pin": "1111"}), 401, "ERR_UNAUTHORIZED", "invalid_pin")
		if n := k.stored(`SELECT pin_failures FROM parental_controls WHERE user_id = ?`, uid); n != fmt.Sprint(i) {
			t.Fatalf("failures %s after %d wrong PINs", n, i)
		}
	}
	webtest.ExpectErr(t, unlock("/portal", map[string]any{"username": "nobody", "pin": "1111"}), 401, "ERR_UNAUTHORIZED", "invalid_pin")
	webtest.ExpectErr(t, unlock("/portal", map[string]any{"username": "teen"}), 400, "ERR_VALIDATION", "pin_required")
	// Now a captcha is required, even with the right PIN.
	webtest.ExpectErr(t, unlock("/user", map[string]any{"username": "teen", "pin": "2468"}), 400, "ERR_VALIDATION", "captcha_required")
	c := k.Do("GET", "acme", "/api/v1/portal/captcha", "", nil)
	if c.Status != 200 {
		t.Fatalf("captcha: %d %s", c.Status, c.Body)
	}
	webtest.ExpectErr(t, unlock("/user", map[string]any{"username": "teen", "pin": "2468", "captcha_id": c.Data()["captcha_id"], "captcha_answer": "000000"}),
		400, "ERR_VALIDATION", "captcha_invalid")
	if n := k.stored(`SELECT pin_failures FROM parental_controls WHERE user_id = ?`, uid); n != "3" {
		t.Fatalf("failures %s after captcha refusals", n)
	}
	k.wantReject("teen", "pw-teen", parBlockedMsg)
	c = k.Do("GET", "acme", "/api/v1/portal/captcha", "", nil)
	r := unlock("/user", map[string]any{"username": "TEEN", "pin": "2468", "captcha_id": c.Data()["captcha_id"], "captcha_answer": "424242"})
	if r.Status != 200 || r.Data()["unlocked_until"] != app.FormatTime(riyadh(18, 7, 0)) {
		t.Fatalf("unlock: %d %s", r.Status, r.Body)
	}
	if n := k.stored(`SELECT pin_failures FROM parental_controls WHERE user_id = ?`, uid); n != "0" {
		t.Fatalf("failures %s after the right PIN", n)
	}
	// The current window is lifted, the next one blocks again.
	k.wantAccept("teen", "pw-teen")
	k.at(riyadh(18, 7, 0))
	k.wantAccept("teen", "pw-teen")
	k.at(riyadh(18, 21, 0))
	k.wantReject("teen", "pw-teen", parBlockedMsg)
	// The edge job queued after the unlock is the next window's start.
	if next := k.stored(`SELECT group_concat(run_at) FROM jobs WHERE kind = 'parental.edge' AND state = 'queued'`); next != app.FormatTime(riyadh(18, 21, 0)) {
		t.Fatalf("queued edges %q", next)
	}

	// Staff clear a forgotten PIN; it can then be set without the old one.
	cl := k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/users/%d/parental/pin", uid), k.Tok, nil)
	if cl.Status != 200 || cl.Data()["pin_set"] != false || k.stored(`SELECT pin_hash FROM parental_controls WHERE user_id = ?`, uid) != "" {
		t.Fatalf("clear: %d %s", cl.Status, cl.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", fmt.Sprintf("/api/v1/users/%d/parental/pin", uid), k.Tok, nil), 409, "ERR_CONFLICT", "no_pin")
	sv := k.Do("GET", "acme", fmt.Sprintf("/api/v1/users/%d/parental", uid), k.Tok, nil)
	if sv.Status != 200 || sv.Data()["pin_set"] != false || len(sv.Data()["windows"].([]any)) != 1 || sv.Data()["blocked"] != true {
		t.Fatalf("staff view: %d %s", sv.Status, sv.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/users/999999/parental", k.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := k.portal("/portal", "POST", "/parental/pin", tok, map[string]any{"pin": "97531"}); r.Status != 200 {
		t.Fatalf("new pin: %d %s", r.Status, r.Body)
	}

	// Switched off: 403 feature_disabled on both prefixes.
	k.exec(`INSERT INTO settings(key, value) VALUES ('portal_feature_parental', 'false') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	for _, prefix := range []string{"/portal", "/user"} {
		webtest.ExpectErr(t, k.portal(prefix, "GET", "/parental", tok, nil), 403, "ERR_FORBIDDEN", "feature_disabled")
		webtest.ExpectErr(t, unlock(prefix, map[string]any{"username": "teen", "pin": "97531"}), 403, "ERR_FORBIDDEN", "feature_disabled")
	}
}

func TestGuestAccessWithinPlanLimits(t *testing.T) {
	t.Parallel()
	k := newParKit(t)
	_, tok := k.subscriber("host")
	k.at(riyadh(17, 20, 0))

	// The plan offers none yet.
	for _, prefix := range []string{"/portal", "/user"} {
		r := k.portal(prefix, "GET", "/guest/context", tok, nil)
		if r.Status != 200 || r.Data()["offered"] != false {
			t.Fatalf("%s context: %d %s", prefix, r.Status, r.Body)
		}
	}
	webtest.ExpectErr(t, k.portal("/portal", "POST", "/guest/register", tok, map[string]any{"minutes": 30}), 409, "ERR_CONFLICT", "guest_not_offered")

	lim := k.Do("PUT", "acme", fmt.Sprintf("/api/v1/admin/profiles/%d/guest-limits", k.Plan), k.Tok, map[string]any{"max_active": 1, "max_minutes": 60})
	if lim.Status != 200 || ptNum(lim.Data()["max_active"]) != 1 {
		t.Fatalf("limits: %d %s", lim.Status, lim.Body)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", fmt.Sprintf("/api/v1/admin/profiles/%d/guest-limits", k.Plan), k.Tok, map[string]any{"max_active": -1, "max_minutes": 60}),
		400, "ERR_VALIDATION", "out_of_range")

	webtest.ExpectErr(t, k.portal("/portal", "POST", "/guest/register", tok, map[string]any{"minutes": 90}), 400, "ERR_VALIDATION", "guest_minutes_out_of_range")
	if n := k.stored(`SELECT COUNT(*) FROM guest_accesses`); n != "0" {
		t.Fatalf("a refusal stored %s guests", n)
	}
	r := k.portal("/user", "POST", "/guest/register", tok, map[string]any{"name": "Aunt", "minutes": 30})
	if r.Status != 201 || r.Data()["username"] == "" || r.Data()["password"] == "" || r.Data()["ends_at"] != app.FormatTime(k.now.Add(30*time.Minute)) {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	user, pw := r.Data()["username"].(string), r.Data()["password"].(string)
	webtest.ExpectErr(t, k.portal("/portal", "POST", "/guest/register", tok, map[string]any{"minutes": 10}), 409, "ERR_CONFLICT", "guest_limit_reached")
	if n := k.stored(`SELECT COUNT(*) FROM guest_accesses`); n != "1" {
		t.Fatalf("%s guests stored", n)
	}
	c := k.portal("/portal", "GET", "/guest/context", tok, nil)
	if c.Status != 200 || c.Data()["offered"] != true || ptNum(c.Data()["active"]) != 1 {
		t.Fatalf("context: %d %s", c.Status, c.Body)
	}

	// RADIUS: the guest logs in within its time (Session-Timeout its end),
	// with a wrong password it is refused, after its end it is refused.
	acc := k.wantAccept(user, pw)
	if st := rfc2865.SessionTimeout_Get(acc); st != 1800 {
		t.Fatalf("guest Session-Timeout %d", st)
	}
	if r := k.access(user, "wrong"); r.Code != radius.CodeAccessReject {
		t.Fatalf("wrong guest password: %v", r.Code)
	}
	// Its accounting is a guest session, not the subscriber's.
	k.Online(k.nas, user, "guest-sess")
	if kind := k.stored(`SELECT kind || '/' || COALESCE(user_id, 0) FROM radius_sessions WHERE acct_session_id = 'guest-sess'`); kind != "guest/0" {
		t.Fatalf("guest session stored as %q", kind)
	}
	k.at(k.now.Add(30 * time.Minute))
	k.wantReject(user, pw, "This guest access has ended.")
	// Its slot is free again.
	if r := k.portal("/portal", "POST", "/guest/register", tok, map[string]any{"minutes": 10}); r.Status != 201 {
		t.Fatalf("second guest: %d %s", r.Status, r.Body)
	}

	k.exec(`INSERT INTO settings(key, value) VALUES ('portal_feature_guest', 'false') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	webtest.ExpectErr(t, k.portal("/user", "GET", "/guest/context", tok, nil), 403, "ERR_FORBIDDEN", "feature_disabled")
}
