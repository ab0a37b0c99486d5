package cards

import (
	"testing"
	"time"
	"xr/internal/xrtest"
)

func TestVoucherLogins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Hour pack", xrtest.Money("2"), 7, 0, 3600)
	b := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 6, PlanProfileID: plan})
	type login struct {
		id         int64
		user, pass string
	}
	var ls []login
	rows, _ := e.ten.DB.R.Query(`SELECT id, username, password FROM cards WHERE batch_id = ? ORDER BY seq`, b.ID)
	for rows.Next() {
		var l login
		rows.Scan(&l.id, &l.user, &l.pass)
		ls = append(ls, l)
	}
	rows.Close()

	// Unknown usernames are not vouchers.
	if a, ok := VoucherAuthorizer(e.ctx, e.ten, "nobody"); ok || a != nil {
		t.Fatal("unknown username answered")
	}
	// Accounting tells voucher logins from unknown names (session kind).
	if IsVoucherLogin(e.ctx, e.ten.DB.R, "nobody") || !IsVoucherLogin(e.ctx, e.ten.DB.R, ls[0].user) {
		t.Fatal("IsVoucherLogin")
	}
	// First use: active, validity started from the plan's duration; the
	// session timeout is the time quota (1 h) being less than 7 days.
	a, ok := VoucherAuthorizer(e.ctx, e.ten, ls[0].user)
	if !ok || !a.Found || a.Refusal != "" || a.Password != ls[0].pass || a.SessionTimeout != 3600 {
		t.Fatalf("first use: %+v %v", a, ok)
	}
	c, _ := loadCard(e.ctx, e.ten.DB.R, nil, "c.id = ?", ls[0].id)
	if c.State != StateActive || c.FirstUseAt.IsZero() || c.ValidUntil.Sub(c.FirstUseAt.Time) != 7*24*time.Hour || c.UsedChannel != ChannelRadius {
		t.Fatalf("after first use: %+v", c)
	}
	if bb := e.batch(b.ID); bb.Used != 1 || bb.Unused != 5 || bb.Available != 5 || !bb.InCirculation {
		t.Fatalf("counters: %+v", bb)
	}
	// Again (case-insensitive login): still accepted, validity not restarted.
	a, ok = VoucherAuthorizer(e.ctx, e.ten, ls[0].user)
	if !ok || a.Refusal != "" {
		t.Fatalf("second auth: %+v", a)
	}
	// Usage from accounting: 3000 s used leaves 600 s; a live session
	// counts toward simultaneous use (plan default 1).
	e.exec(`INSERT INTO radius_sessions(acct_session_id, username, start_time, stop_time, session_time, input_octets, output_octets, kind)
		VALUES ('s1', ?, '2026-01-01 00:00:00', '2026-01-01 01:00:00', 3000, 10, 20, 'unknown')`, ls[0].user)
	a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[0].user)
	if a.Refusal != "" || a.SessionTimeout != 600 {
		t.Fatalf("after usage: %+v", a)
	}
	if e.scalar(`SELECT used_seconds FROM cards WHERE id = ?`, ls[0].id) != 3000 {
		t.Fatal("usage not recorded on the card")
	}
	e.exec(`INSERT INTO radius_sessions(acct_session_id, username, start_time, session_time, kind) VALUES ('s2', ?, '2026-01-01 02:00:00', 0, 'unknown')`, ls[0].user)
	a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[0].user)
	if a.Refusal != "simultaneous_use" {
		t.Fatalf("simultaneous: %+v", a)
	}
	// Time quota used up: exhausted (written), refused from then on.
	e.exec(`UPDATE radius_sessions SET stop_time = '2026-01-01 03:00:00', session_time = 700 WHERE acct_session_id = 's2'`)
	a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[0].user)
	if a.Refusal != "card_exhausted" || a.Password != ls[0].pass {
		t.Fatalf("exhausted: %+v", a)
	}
	if st := e.str(`SELECT state FROM cards WHERE id = ?`, ls[0].id); st != StateExhausted {
		t.Fatalf("state %s", st)
	}
	// Active past its validity: expired.
	VoucherAuthorizer(e.ctx, e.ten, ls[1].user)
	e.exec(`UPDATE cards SET valid_until = '2001-01-01 00:00:00' WHERE id = ?`, ls[1].id)
	if a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[1].user); a.Refusal != "card_expired" {
		t.Fatalf("validity over: %+v", a)
	}
	// Unused past its expiry: expired, and not started.
	e.exec(`UPDATE cards SET expires_at = '2001-01-01 00:00:00' WHERE id = ?`, ls[2].id)
	if a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[2].user); a.Refusal != "card_expired" || e.str(`SELECT state FROM cards WHERE id = ?`, ls[2].id) != StateUnused {
		t.Fatalf("expired: %+v", a)
	}
	// Revoked; suspended; consumed (redeemed onto an account).
	RevokeCard(e.ctx, e.owner, ls[3].id)
	if a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[3].user); a.Refusal != "card_revoked" {
		t.Fatalf("revoked: %+v", a)
	}
	u := e.user("sub", e.owner.ManagerID)
	code := e.str(`SELECT code FROM cards WHERE id = ?`, ls[4].id)
	if _, err := Redeem(e.ctx, e.owner, RedeemInput{Code: code, UserID: u, RequestID: "x"}); err != nil {
		t.Fatal(err)
	}
	if a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[4].user); a.Refusal != "card_consumed" {
		t.Fatalf("consumed: %+v", a)
	}
	SuspendBatch(e.ctx, e.owner, b.ID)
	if a, _ = VoucherAuthorizer(e.ctx, e.ten, ls[5].user); a.Refusal != "card_suspended" {
		t.Fatalf("suspended: %+v", a)
	}
	// An active login cannot be redeemed onto an account.
	_, err := Redeem(e.ctx, e.owner, RedeemInput{Code: e.str(`SELECT code FROM cards WHERE id = ?`, ls[1].id), UserID: u, RequestID: "y"})
	xrtest.WantReason(t, err, 409, "card_consumed")
	e.stockOK(b.ID)
	// The card's lookup shows the login use.
	l, _ := Search(e.ctx, e.owner, "username", ls[1].user)
	if l.UsedByKind == nil || *l.UsedByKind != "login" || *l.UsedChannel != ChannelRadius || l.FirstUseAt.IsZero() || l.EffectiveState != "expired" {
		t.Fatalf("lookup: %+v", l)
	}
}
