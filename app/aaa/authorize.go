package aaa

import (
	"context"
	"database/sql"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"xr/app"
)

// Answer is the decision about a username, before radiusd checks the
// password against Password.
type Answer struct {
	Found           bool
	Password        string
	Refusal         string // "" = accept
	ReplyMessage    string
	SessionTimeout  uint32
	InterimInterval uint32
	RateDownKbps    int64
	RateUpKbps      int64
	FramedIP        netip.Addr
	FramedPool      string
	Class           []byte
}

// Reasons of a decision that are not refusals of a known account: the
// auth log and the explainer tell them apart, the Access-Reject does not
// (both answer "invalid username or password", so names do not leak).
const (
	ReasonUnknownUser = "unknown_user"
	ReasonBadPassword = "bad_password"
)

// Refusal reasons and their Reply-Message texts.
var replyMessages = map[string]string{
	"disabled":         "Your account is suspended.",
	"deleted":          "Your account does not exist.",
	"expired":          "Your subscription has expired.",
	"not_activated":    "Your subscription is not active yet.",
	"quota_exhausted":  "Your data quota is used up.",
	"time_exhausted":   "Your time quota is used up.",
	"mac_not_allowed":  "This device is not allowed on your account.",
	"simultaneous_use": "Your account is already connected from another device.",
	"plan_disabled":    "Your plan is not available.",
	"tenant_locked":    "Service is suspended for this provider.",
	"parental_blocked": "Internet access is blocked by parental control now.",
}

func refuse(pw, reason string) Answer {
	return Answer{Found: true, Password: pw, Refusal: reason, ReplyMessage: replyMessages[reason]}
}

// Check outcomes.
const (
	OutcomePass     = "pass"
	OutcomeFail     = "fail"
	OutcomeAdjusted = "adjusted" // passes, but changes the Access-Accept (expired pool, FUP rate, a replaced session)
	OutcomeSkip     = "skip"     // does not apply (no limit, lock off) or could not be evaluated
)

// Check is one step of the authorization policy as the explainer shows it.
type Check struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// trace records the checks of one decision for the explainer; the hot path
// passes nil and records nothing (every method is a no-op on nil).
type trace struct{ checks []Check }

func (tr *trace) add(name, outcome, reason string) {
	if tr != nil {
		tr.checks = append(tr.checks, Check{Name: name, Outcome: outcome, Reason: reason})
	}
}

// Authorize decides from memory; no query per packet. The policy is decide.
func (s *Service) Authorize(ctx context.Context, nas *NAS, username, mac string) (Answer, error) {
	if err := s.fenced(); err != nil {
		return Answer{}, err
	}
	ti, release, err := s.tenant(ctx, nas.TenantSlug)
	if err != nil {
		return Answer{}, err
	}
	defer release()
	ti.mu.RLock()
	r := ti.users[strings.ToLower(username)]
	if r == nil {
		ti.mu.RUnlock()
		if s.Vouchers != nil {
			if a, ok := s.Vouchers(ctx, ti.t, username); ok {
				if a.InterimInterval == 0 {
					a.InterimInterval = ti.interim
				}
				return *a, nil
			}
		}
		return Answer{}, nil
	}
	now := s.app.Now()
	a := s.decide(ti, r, mac, now, 0, nil)
	ti.overrideRate(&a, r, nas.ID, now)
	ti.mu.RUnlock()
	return a, nil
}

// decide is the authorization policy of a subscriber, shared by Authorize
// and the explainer; it runs under ti.mu's read lock. The order of checks
// is fixed: tenant licence, enabled (and not deleted), plan enabled, expiry
// (or the plan's expired pool), data quota (or the plan's FUP rate), time
// quota, MAC lock, simultaneous use. The first failing check is the
// refusal. Without a trace (the hot path) it returns at that check; with
// one it evaluates and records every check. spare is how many open
// sessions to leave out of the simultaneous-use count (the explainer's
// preview of replacing stale sessions; Authorize replaces them instead).
func (s *Service) decide(ti *tenantIndex, r *record, mac string, now time.Time, spare int, tr *trace) Answer {
	var refusal string
	// fail records a failed check; it reports whether to stop here.
	fail := func(name, reason string) bool {
		if refusal == "" {
			refusal = reason
		}
		tr.add(name, OutcomeFail, reason)
		return tr == nil
	}
	// A blocked or expired tenant gets no service; being over the subscriber
	// cap locks only the admin surface.
	locked := false
	if info, ok := s.app.TenantBySlug(ti.slug); ok {
		lic := (&app.Tenant{TenantInfo: info}).License(0)
		locked = lic.Status == "blocked" || lic.Status == "expired"
	}
	if !locked {
		tr.add("tenant", OutcomePass, "")
	} else if fail("tenant", "tenant_locked") {
		return refuse(r.password, refusal)
	}
	switch {
	case r.deleted:
		if fail("enabled", "deleted") {
			return refuse(r.password, refusal)
		}
	case !r.enabled:
		if fail("enabled", "disabled") {
			return refuse(r.password, refusal)
		}
	default:
		tr.add("enabled", OutcomePass, "")
	}
	p := ti.plans[r.profileID]
	a := Answer{Found: true, Password: r.password, InterimInterval: ti.interim}
	switch {
	case p == nil:
		tr.add("plan", OutcomeSkip, "")
	case !p.enabled:
		if fail("plan", "plan_disabled") {
			return refuse(r.password, refusal)
		}
	default:
		tr.add("plan", OutcomePass, "")
	}
	if p != nil {
		a.RateDownKbps, a.RateUpKbps = p.rateDown, p.rateUp
	}
	pool := p != nil && p.expiredPool != ""
	switch {
	case r.expiration.IsZero() && !pool:
		if fail("expiry", "not_activated") {
			return refuse(r.password, refusal)
		}
	case !r.expiration.IsZero() && !r.expiration.After(now) && !pool:
		if fail("expiry", "expired") {
			return refuse(r.password, refusal)
		}
	case r.expiration.IsZero() || !r.expiration.After(now):
		// Expired (or never activated) but the plan parks such subscribers
		// in a pool (a captive page to renew from) instead of refusing them.
		a.FramedPool, a.RateDownKbps, a.RateUpKbps = p.expiredPool, 0, 0
		tr.add("expiry", OutcomeAdjusted, "")
	default:
		a.SessionTimeout = clampSeconds(r.expiration.Sub(now).Seconds())
		tr.add("expiry", OutcomePass, "")
	}
	fup := p != nil && (p.fupDown != 0 || p.fupUp != 0)
	usedBytes, usedSecs := r.usedBytes, r.usedSecs
	if r.bytesLimit > 0 || r.secondsLimit > 0 {
		jb, js := s.journalUsage(ti, r.id) // a standby's own accounting
		usedBytes, usedSecs = usedBytes+jb, usedSecs+js
	}
	switch {
	case r.bytesLimit <= 0:
		tr.add("quota", OutcomeSkip, "")
		tr.add("fup", OutcomeSkip, "")
	case usedBytes < r.bytesLimit:
		tr.add("quota", OutcomePass, "")
		tr.add("fup", OutcomeSkip, "")
	case !fup:
		if fail("quota", "quota_exhausted") {
			return refuse(r.password, refusal)
		}
		tr.add("fup", OutcomeSkip, "")
	default:
		a.RateDownKbps, a.RateUpKbps = p.fupDown, p.fupUp
		tr.add("quota", OutcomeAdjusted, "")
		tr.add("fup", OutcomeAdjusted, "")
	}
	if r.secondsLimit > 0 {
		left := r.secondsLimit - usedSecs
		if left <= 0 {
			if fail("time_quota", "time_exhausted") {
				return refuse(r.password, refusal)
			}
		} else {
			if a.SessionTimeout == 0 || uint32(min(left, math.MaxUint32)) < a.SessionTimeout {
				a.SessionTimeout = uint32(min(left, math.MaxUint32))
			}
			tr.add("time_quota", OutcomePass, "")
		}
	} else {
		tr.add("time_quota", OutcomeSkip, "")
	}
	switch {
	case !r.macLock:
		tr.add("mac_lock", OutcomeSkip, "")
	case !r.macs[normMAC(mac)]:
		if fail("mac_lock", "mac_not_allowed") {
			return refuse(r.password, refusal)
		}
	default:
		tr.add("mac_lock", OutcomePass, "")
	}
	// Parental control (parental.go): a blocked window or a pause.
	if ti.checkParental(r, &a, now, tr) && fail("parental", ReasonParentalBlocked) {
		return refuse(r.password, refusal)
	}
	limit := 1
	if p != nil {
		limit = p.simultaneousUse
	}
	live := len(r.live)
	if s.journal != nil && limit > 0 {
		live = s.journalLive(ti, r.id, r.live) // a standby's own accounting
	}
	switch {
	case limit <= 0:
		tr.add("simultaneous_use", OutcomeSkip, "")
	case live >= limit && live-spare >= limit:
		if fail("simultaneous_use", "simultaneous_use") {
			return refuse(r.password, refusal)
		}
	case live >= limit:
		tr.add("simultaneous_use", OutcomeAdjusted, "")
	default:
		tr.add("simultaneous_use", OutcomePass, "")
	}
	if refusal != "" {
		return refuse(r.password, refusal)
	}
	if r.staticIP != "" {
		if ip, err := netip.ParseAddr(r.staticIP); err == nil {
			a.FramedIP = ip
		}
	}
	a.Class = []byte("xr:" + ti.slug + ":" + strconv.FormatInt(r.id, 10))
	return a
}

func clampSeconds(f float64) uint32 {
	if f <= 0 {
		return 1
	}
	if f > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(f)
}

// Replacing stale sessions: the Access-Request side of the over-limit rule.
// A subscriber whose Accounting-Stop was lost has an open session that is
// no longer there, and would be refused for simultaneous use until the
// sweep closes it (FreeRADIUS #3046 is the classic complaint). With the
// tenant setting radius_replace_stale_session on (the default; false or 0
// turns it off), a login refused for simultaneous use, whose password was
// verified, closes the subscriber's oldest stale session (close_reason and
// stop_cause "replaced"), sends the NAS a Disconnect-Request for it, and
// is decided again, until it is under the limit or no stale session is
// left. Stale is the sweep's word: no accounting for
// radius_stale_multiplier_pct % (default 250) of the tenant's
// radius_interim_interval (default 300 s), and at least
// radius_stale_floor_seconds (default 300); with the defaults 750 s.
const (
	// maxReplaced bounds the sessions one login may replace.
	maxReplaced = 8
)

// staleSession is an open session that may be replaced.
type staleSession struct {
	ID, NASID                     int64
	SessionID, Username, FramedIP string
	LastHeard                     app.Time
}

// staleAfter is how long a session may go unheard of before a login may
// replace it.
func (ti *tenantIndex) staleAfter(ctx context.Context) time.Duration {
	ti.mu.RLock()
	interim := int64(ti.interim)
	ti.mu.RUnlock()
	if interim <= 0 {
		interim = 300
	}
	pct := max(SettingRadiusStalePct.GetOr(ctx, ti.t.DB.R), 100)
	floor := max(SettingRadiusStaleFloor.GetOr(ctx, ti.t.DB.R), 60)
	return time.Duration(max(floor, interim*pct/100)) * time.Second
}

const sqlStaleSessions = `SELECT id, COALESCE(nas_id, 0), acct_session_id, username, framed_ip, COALESCE(update_time, start_time)
	FROM radius_sessions WHERE user_id = ? AND stop_time IS NULL AND COALESCE(update_time, start_time) < ?
	ORDER BY COALESCE(update_time, start_time), id LIMIT ?`

// staleSessions lists a subscriber's stale open sessions, oldest first.
func staleSessions(ctx context.Context, q app.Querier, userID int64, cut time.Time, limit int) ([]staleSession, error) {
	rows, err := q.QueryContext(ctx, sqlStaleSessions, userID, app.FormatTime(cut), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []staleSession
	for rows.Next() {
		var st staleSession
		if err := rows.Scan(&st.ID, &st.NASID, &st.SessionID, &st.Username, &st.FramedIP, &st.LastHeard); err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// replaceStaleEnabled reads radius_replace_stale_session (JSON true/false
// or 1/0; default true, also when the stored value is corrupt: logged).
func replaceStaleEnabled(ctx context.Context, t *app.Tenant) bool {
	return SettingRadiusReplaceStale.GetOr(ctx, t.DB.R)
}

// ReplaceStale is asked by the wire layer, after the password was
// verified, about a login Authorize refused for simultaneous use. It
// replaces the subscriber's stale sessions, oldest first, while the
// decision is still simultaneous_use, and returns the decision made after
// them; replaced is false when it replaced none (the refusal stands).
func (s *Service) ReplaceStale(ctx context.Context, nas *NAS, username, mac string) (a Answer, replaced bool, err error) {
	ti, release, err := s.tenant(ctx, nas.TenantSlug)
	if err != nil {
		return Answer{}, false, err
	}
	defer release()
	if s.app.IsStandby() || !replaceStaleEnabled(ctx, ti.t) {
		// A standby cannot close the primary's sessions: the refusal
		// stands there, rather than a write failing the answer.
		return Answer{}, false, nil
	}
	key := strings.ToLower(username)
	after := ti.staleAfter(ctx)
	for n := 0; ; n++ {
		now := s.app.Now()
		ti.mu.RLock()
		r := ti.users[key]
		var uid int64
		if r != nil {
			a, uid = s.decide(ti, r, mac, now, 0, nil), r.id
			ti.overrideRate(&a, r, nas.ID, now)
		}
		ti.mu.RUnlock()
		if r == nil || a.Refusal != "simultaneous_use" || n == maxReplaced {
			return a, replaced && r != nil, nil
		}
		cut := now.Add(-after)
		list, err := staleSessions(ctx, ti.t.DB.R, uid, cut, 1)
		if err != nil || len(list) == 0 {
			return a, replaced, err
		}
		ok, err := s.closeReplaced(ctx, ti, list[0], cut)
		if err != nil {
			return a, replaced, err
		}
		if ok {
			replaced = true
			go s.disconnectReplaced(ti.slug, list[0])
		}
	}
}

// closeReplaced closes one stale session (if it is still open and stale)
// and applies that to memory, as the sweep does.
func (s *Service) closeReplaced(ctx context.Context, ti *tenantIndex, st staleSession, cut time.Time) (bool, error) {
	var effs []effect
	var keys []string
	ti.gate.RLock()
	defer ti.gate.RUnlock()
	err := ti.t.WriteNoHooks(ctx, func(tx *sql.Tx) error {
		events, err := s.sessionEvents(ctx, tx, tx.ExecContext)
		if err != nil {
			return err
		}
		effs, keys, err = closeWhere(ctx, tx, events, "id = ? AND stop_time IS NULL AND COALESCE(update_time, start_time) < ?",
			[]any{st.ID, app.FormatTime(cut)}, s.app.NowText(), "replaced", "Session-Replaced")
		return err
	})
	if err != nil {
		return false, err
	}
	ti.mu.Lock()
	for _, k := range keys {
		delete(ti.sessions, k)
	}
	for _, e := range effs {
		if r := ti.byID[e.user]; r != nil {
			delete(r.live, e.close)
		}
	}
	ti.mu.Unlock()
	return len(keys) > 0, nil
}

// disconnectReplaced asks the NAS to end a replaced session (it may still
// be up there: stale only means unheard of) and records the outcome.
func (s *Service) disconnectReplaced(slug string, st staleSession) {
	if s.Disconnect == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	outcome := "unreachable"
	if nas := s.nasByID(slug, st.NASID); nas != nil {
		ip, _ := netip.ParseAddr(st.FramedIP)
		if out, err := s.Disconnect(ctx, nas, st.Username, st.SessionID, ip); err == nil || out != "" {
			outcome = out
		}
	}
	if err := s.RecordCoAOutcome(ctx, slug, st.ID, outcome); err != nil {
		s.log.Warn("replaced session disconnect outcome", "tenant", slug, "session", st.ID, "err", err)
	}
}
