package cards

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
)

// Refusals of a prepaid login and their Reply-Message texts.
var voucherMessages = map[string]string{
	"card_revoked":     "This card was revoked.",
	"card_suspended":   "This card series is suspended.",
	"card_consumed":    "This card was already redeemed onto an account.",
	"card_exhausted":   "This card is used up.",
	"card_expired":     "This card has expired.",
	"card_not_ready":   "This card is not available yet.",
	"plan_disabled":    "The plan of this card is not available.",
	"simultaneous_use": "This card is already connected from another device.",
	"tenant_locked":    "Service is suspended for this provider.",
}

func voucherRefusal(pw, reason string) *aaa.Answer {
	return &aaa.Answer{Found: true, Password: pw, Refusal: reason, ReplyMessage: voucherMessages[reason]}
}

// VoucherAuthorizer is the aaa.Service.Vouchers hook: cards of a prepaid
// series log in over RADIUS with their username and password. It answers
// (nil, false) for a username that is no card login.
//
// The first authorization of an unused card starts its validity: the card
// becomes active with first_use_at now and valid_until now + the plan's
// duration_days (the card's own expiry when the plan has none). The
// session timeout is what is left of that validity, or of the plan's time
// quota (seconds_limit) when that is less. Usage is read from the
// accounting rows of the login (radius_sessions carry no subscriber id for
// vouchers); a login that used the plan's time or data quota becomes
// exhausted. Refusals: card_revoked, card_suspended, card_consumed (it was
// redeemed onto an account), card_exhausted, card_expired (unused past its
// expiry, or active past its validity), plan_disabled, simultaneous_use.
//
// The hook runs before radiusd checks the password (it supplies the
// cleartext for PAP/CHAP/MS-CHAPv2), so an authorization with a wrong
// password also starts the validity; logins are 10 random characters
// (31^10 ≈ 8·10^14), so only a holder of the card can start it.
func VoucherAuthorizer(ctx context.Context, t *app.Tenant, username string) (*aaa.Answer, bool) {
	username = strings.TrimSpace(username)
	if username == "" {
		return nil, false
	}
	c, err := scanCard(t.DB.R.QueryRowContext(ctx, `SELECT `+cardCols+cardFrom+` WHERE c.username = ?`, username))
	if err != nil {
		if app.AsError(err) == nil {
			t.App.Log.Error("voucher lookup", "tenant", t.Slug, "err", err)
		}
		return nil, false
	}
	pw := c.Password.String
	if t.TenantInfo != nil {
		if lic := t.License(0); lic.Status == "blocked" || lic.Status == "expired" {
			return voucherRefusal(pw, "tenant_locked"), true
		}
	}
	switch {
	case c.State == StateRevoked && c.RevokedReason == revokedSuspension:
		return voucherRefusal(pw, "card_suspended"), true
	case c.State == StateRevoked:
		return voucherRefusal(pw, "card_revoked"), true
	case c.State == StateConsumed:
		return voucherRefusal(pw, "card_consumed"), true
	case c.State == StateExhausted:
		return voucherRefusal(pw, "card_exhausted"), true
	case c.BatchStatus != "ready" || !c.PlanID.Valid:
		return voucherRefusal(pw, "card_not_ready"), true
	}
	p, err := readPlan(ctx, t.DB.R, c.PlanID.Int64)
	if err != nil {
		return voucherRefusal(pw, "plan_disabled"), true
	}
	if !p.Enabled {
		return voucherRefusal(pw, "plan_disabled"), true
	}
	now := t.Now()
	if c.effectiveState(now) == stateExpired {
		return voucherRefusal(pw, "card_expired"), true
	}
	if c.State == StateUnused {
		if err := firstUse(ctx, t, c, p, now); err != nil {
			if e := app.AsError(err); e != nil {
				return voucherRefusal(pw, e.Reason), true
			}
			t.App.Log.Error("voucher first use", "tenant", t.Slug, "card", c.ID, "err", err)
			return nil, false
		}
	}
	// Usage so far, from the login's accounting rows.
	var secs, octets, live int64
	if err := t.DB.R.QueryRowContext(ctx, `SELECT COALESCE(SUM(session_time), 0), COALESCE(SUM(input_octets + output_octets), 0),
		COALESCE(SUM(stop_time IS NULL), 0) FROM radius_sessions WHERE username IN (?, ?) AND user_id IS NULL`, c.Username.String, username).
		Scan(&secs, &octets, &live); err != nil {
		t.App.Log.Error("voucher usage", "tenant", t.Slug, "card", c.ID, "err", err)
		return nil, false
	}
	exhausted := (p.SecondsLimit > 0 && secs >= p.SecondsLimit) || (p.BytesLimit > 0 && octets >= p.BytesLimit)
	if exhausted || secs != c.UsedSeconds || octets != c.UsedBytes {
		err := t.Write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE cards SET used_seconds = ?, used_bytes = ? WHERE id = ?`, secs, octets, c.ID); err != nil {
				return err
			}
			if !exhausted {
				return nil
			}
			cur, err := loadCard(ctx, tx, nil, "c.id = ?", c.ID)
			if err != nil || cur.State != StateActive {
				return err
			}
			if err := moveCard(ctx, tx, cur, change{State: StateExhausted}); err != nil {
				return err
			}
			return event(ctx, tx, cur, "exhausted", 0, map[string]any{"used_seconds": secs, "used_bytes": octets})
		})
		if err != nil {
			t.App.Log.Error("voucher usage update", "tenant", t.Slug, "card", c.ID, "err", err)
		}
		if exhausted {
			return voucherRefusal(pw, "card_exhausted"), true
		}
	}
	limit := p.SimultaneousUse
	if limit > 0 && live >= limit {
		return voucherRefusal(pw, "simultaneous_use"), true
	}
	a := &aaa.Answer{Found: true, Password: pw, RateDownKbps: p.RateDown, RateUpKbps: p.RateUp,
		Class: []byte("xr:" + t.Slug + ":card:" + strconv.FormatInt(c.ID, 10))}
	if !c.ValidUntil.IsZero() {
		a.SessionTimeout = seconds(c.ValidUntil.Sub(now))
	}
	if p.SecondsLimit > 0 {
		left := uint32(min(p.SecondsLimit-secs, math.MaxUint32))
		if a.SessionTimeout == 0 || left < a.SessionTimeout {
			a.SessionTimeout = left
		}
	}
	return a, true
}

func seconds(d time.Duration) uint32 {
	s := d.Seconds()
	switch {
	case s < 1:
		return 1
	case s > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(s)
}

// firstUse starts a prepaid login's validity (unused → active) in its own
// transaction; a concurrent first use that got there first is fine.
func firstUse(ctx context.Context, t *app.Tenant, c *cardRow, p *plan, now time.Time) error {
	return t.Write(ctx, func(tx *sql.Tx) error {
		cur, err := loadCard(ctx, tx, nil, "c.id = ?", c.ID)
		if err != nil {
			return err
		}
		if cur.State != StateUnused {
			*c = *cur
			if cur.State != StateActive {
				return app.ErrConflict("card_consumed")
			}
			return nil
		}
		if e := cur.refusal(now); e != nil {
			return e
		}
		valid := app.T(now.Add(time.Duration(p.DurationDays) * 24 * time.Hour))
		if p.DurationDays == 0 {
			valid = cur.ExpiresAt
		}
		disp := cur.Disposition
		if disp == DispAvailable {
			disp = DispCustomer
		}
		nowS := app.FormatTime(now)
		if err := moveCard(ctx, tx, cur, change{State: StateActive, Disp: disp,
			Sets: []string{"first_use_at = ?", "valid_until = ?", "used_channel = ?", "used_at = ?"}, Args: []any{nowS, valid, ChannelRadius, nowS}}); err != nil {
			return err
		}
		if err := markCirculated(ctx, tx, cur.BatchID); err != nil {
			return err
		}
		if err := cur.FirstUseAt.Scan(nowS); err != nil {
			return err
		}
		cur.ValidUntil = valid
		*c = *cur
		return event(ctx, tx, cur, "first_use", 0, map[string]any{"valid_until": valid})
	})
}

// IsVoucherLogin reports whether username is the login of a prepaid card
// (accounting records its sessions with kind voucher).
func IsVoucherLogin(ctx context.Context, q app.Querier, username string) bool {
	var one int
	return q.QueryRowContext(ctx, `SELECT 1 FROM cards WHERE username = ?`, username).Scan(&one) == nil
}
