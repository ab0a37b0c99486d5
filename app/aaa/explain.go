package aaa

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/subs"
)

// The explainer: POST /admin/radius/explain runs the authorization policy
// of an Access-Request (decide, the code Authorize runs) without its side
// effects and answers every check with its outcome, the decision the
// server would make, and the attributes of its answer for the NAS's type.

// ExplainInput is the body of POST /admin/radius/explain.
type ExplainInput struct {
	Username string `json:"username"`
	NASID    int64  `json:"nas_id"`
	// Password, when given, is checked the PAP way against the record's;
	// when absent the password check is skipped (assumed right).
	Password         *string  `json:"password"`
	CallingStationID string   `json:"calling_station_id"`
	At               app.Time `json:"at"` // evaluate as at this time (UTC); default now
	// Method is how the login authenticates (AuthMethods); default pap.
	// It decides whether a password imported hashed can be checked, and
	// what the answer carries besides the policy's attributes; given, the
	// checks include a "method" one.
	Method AuthMethod `json:"method"`
}

// AuthMethods are the methods the RADIUS server accepts, as the auth log
// names them: PAP, CHAP, MS-CHAPv2, and EAP with the method inside.
var AuthMethods = []string{"pap", "chap", "mschapv2", "eap-peap/mschapv2", "eap-ttls/pap", "eap-ttls/mschapv2",
	"eap-ttls/eap-mschapv2", "eap-mschapv2"}

// AuthMethod is a JSON enum of AuthMethods.
type AuthMethod string

func (m *AuthMethod) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, AuthMethods...)
	*m = AuthMethod(s)
	return err
}

// verifiesHashed reports whether a method checks the password itself as
// sent (PAP, also inside TTLS), which a password imported hashed needs.
func (m AuthMethod) verifiesHashed() bool { return m == "pap" || m == "eap-ttls/pap" }

// Attribute is one attribute of a RADIUS answer, decoded for reading.
type Attribute struct {
	Name       string `json:"name"`
	Type       int    `json:"type"`
	Vendor     int    `json:"vendor,omitempty"`
	VendorType int    `json:"vendor_type,omitempty"`
	Value      string `json:"value"`
}

// Explanation is the answer of the explainer.
type Explanation struct {
	Username string   `json:"username"`
	UserID   *int64   `json:"user_id"`
	NASID    int64    `json:"nas_id"`
	NASName  string   `json:"nas_name"`
	NASType  string   `json:"nas_type"`
	At       app.Time `json:"at"`
	Method   string   `json:"method"` // the method explained (default pap)
	// Result is accept, reject, dropped (the NAS is not in the RADIUS
	// directory: its packets are not answered) or not_simulated (a
	// prepaid-card login, whose authorization has effects: see Checks).
	Result string `json:"result"`
	// Reason is what the auth log would record: "" on accept, else a
	// refusal reason, unknown_user or bad_password.
	Reason string  `json:"reason"`
	Checks []Check `json:"checks"`
	// ReplacesSessions are the stale sessions the login would close
	// (radius_replace_stale_session), oldest first.
	ReplacesSessions []int64 `json:"replaces_sessions"`
	// Attributes are those of the Access-Accept (or Access-Reject) for this
	// NAS's type, as the wire layer writes them. Not shown: Proxy-State
	// (copied from the request) and, for MS-CHAPv2, MS-CHAP2-Success and
	// the MPPE keys (or MS-CHAP-Error), which depend on the request.
	Attributes []Attribute `json:"attributes"`
}

// Explain answers POST /admin/radius/explain. A subscriber outside the
// caller's subtree is explained as an unknown username; prepaid-card
// logins are recognised for tenant-wide callers only.
func (s *Service) Explain(ctx context.Context, act *app.Actor, in ExplainInput) (*Explanation, error) {
	if err := act.Require(subs.PermUsersIndex); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, app.ErrUnavailable("radius_unavailable")
	}
	if in.Username == "" {
		return nil, app.ErrValidation("username_required", "username")
	}
	if in.NASID <= 0 {
		return nil, app.ErrValidation("nas_id_required", "nas_id")
	}
	t := act.Tenant
	methodGiven := in.Method != ""
	if !methodGiven {
		in.Method = "pap"
	}
	ex := &Explanation{Username: in.Username, NASID: in.NASID, Method: string(in.Method), Checks: []Check{}, ReplacesSessions: []int64{}}
	err := t.DB.R.QueryRowContext(ctx, `SELECT name, type FROM nas WHERE id = ?`, in.NASID).Scan(&ex.NASName, &ex.NASType)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrValidation("invalid_nas_id", "nas_id")
	}
	if err != nil {
		return nil, err
	}
	now := t.Now()
	if !in.At.IsZero() {
		now = in.At.Time
	}
	ex.At = app.T(now)
	ti, release, err := s.tenant(ctx, t.Slug)
	if err != nil {
		return nil, err
	}
	defer release()
	nas := s.nasByID(t.Slug, in.NASID)
	if nas == nil {
		// Not in the directory yet (or its address does not parse): the
		// policy is still explained for the NAS's type.
		nas = &NAS{TenantSlug: t.Slug, ID: in.NASID, Name: ex.NASName, Type: ex.NASType}
	}

	key := strings.ToLower(in.Username)
	ti.mu.RLock()
	var uid int64
	if r := ti.users[key]; r != nil {
		uid = r.id
	}
	ti.mu.RUnlock()
	if uid != 0 {
		ok, err := subscriberInScope(ctx, act, uid)
		if err != nil {
			return nil, err
		}
		if !ok {
			uid = 0
		}
	}
	if uid == 0 {
		return s.explainUnknown(ctx, act, ex, nas)
	}

	pwOK, hashed := true, false
	ti.mu.RLock()
	if r := ti.users[key]; r != nil {
		hashed = strings.HasPrefix(r.password, LegacyHashPrefix)
		if in.Password != nil && !hashed {
			pwOK = subtle.ConstantTimeCompare([]byte(*in.Password), []byte(r.password)) == 1
		}
	}
	ti.mu.RUnlock()
	methodOK := !hashed || in.Method.verifiesHashed()
	// The server replaces stale sessions only for a verified login whose
	// refusal is simultaneous use; preview that with the sessions it would
	// find.
	var stale []staleSession
	after := ti.staleAfter(ctx)
	if pwOK && replaceStaleEnabled(ctx, t) {
		if stale, err = staleSessions(ctx, t.DB.R, uid, now.Add(-after), maxReplaced); err != nil {
			return nil, err
		}
	}

	ti.mu.RLock()
	r := ti.users[key]
	if r == nil || r.id != uid {
		// Changed under us (renamed or deleted): explain what is there now.
		ti.mu.RUnlock()
		return s.explainUnknown(ctx, act, ex, nas)
	}
	id := r.id
	ex.UserID = &id
	spare := 0
	if pwOK && len(stale) > 0 && s.decide(ti, r, in.CallingStationID, now, 0, nil).Refusal == "simultaneous_use" {
		spare = len(stale)
		limit := 1
		if p := ti.plans[r.profileID]; p != nil {
			limit = p.simultaneousUse
		}
		for _, st := range stale[:min(len(stale), len(r.live)-limit+1)] {
			ex.ReplacesSessions = append(ex.ReplacesSessions, st.ID)
		}
	}
	pwCheck := Check{Name: "password", Outcome: OutcomeSkip}
	switch {
	case in.Password == nil || hashed:
	case pwOK:
		pwCheck.Outcome = OutcomePass
	default:
		pwCheck.Outcome, pwCheck.Reason = OutcomeFail, ReasonBadPassword
	}
	tr := &trace{checks: []Check{{Name: "exists", Outcome: OutcomePass}}}
	if methodGiven {
		// Only when asked: PAP, the default, checks every password.
		tr.checks = append(tr.checks, methodCheck(in.Method, hashed))
	}
	tr.checks = append(tr.checks, pwCheck)
	a := s.decide(ti, r, in.CallingStationID, now, spare, tr)
	ti.overrideRate(&a, r, in.NASID, now) // a bandwidth rule in force (bandwidth.go)
	ex.Checks = tr.checks
	for i := range ex.Checks {
		ex.Checks[i].Detail = s.checkDetail(ti, r, &ex.Checks[i], in, len(ex.ReplacesSessions), after)
	}
	ti.mu.RUnlock()
	direct := s.nasByID(t.Slug, in.NASID) != nil
	ex.Checks = append(ex.Checks, nasCheck(nas, direct))
	switch {
	case !direct:
		ex.Result, ex.Reason = "dropped", "nas_unknown"
	case !methodOK:
		ex.Result, ex.Reason = "reject", ReasonPasswordReset
	case !pwOK:
		ex.Result, ex.Reason = "reject", ReasonBadPassword
	case a.Refusal != "":
		ex.Result, ex.Reason = "reject", a.Refusal
	default:
		ex.Result = "accept"
	}
	if ex.Result != "dropped" && s.ReplyAttributes != nil {
		ex.Attributes = s.ReplyAttributes(nas, &a, ex.Reason, string(in.Method))
	}
	if ex.Result != "accept" {
		ex.ReplacesSessions = ex.ReplacesSessions[:0]
		if ex.Reason == "simultaneous_use" {
			// Still refused: the server closes the stale ones all the same.
			for _, st := range stale {
				ex.ReplacesSessions = append(ex.ReplacesSessions, st.ID)
			}
		}
	}
	if ex.Attributes == nil {
		ex.Attributes = []Attribute{}
	}
	return ex, nil
}

// explainUnknown explains a username the index does not hold (or one the
// caller may not see): the server answers it as bad credentials, unless it
// is a prepaid-card login.
func (s *Service) explainUnknown(ctx context.Context, act *app.Actor, ex *Explanation, nas *NAS) (*Explanation, error) {
	t := act.Tenant
	if act.TenantWide && s.IsVoucher != nil && s.IsVoucher(ctx, t.DB.R, ex.Username) {
		ex.Result = "not_simulated"
		ex.Checks = append(ex.Checks, Check{Name: "exists", Outcome: OutcomePass,
			Detail: "a prepaid-card login: the cards area decides it, and its first authorization starts the card's validity, so it is not simulated"})
		ex.Attributes = []Attribute{}
		return ex, nil
	}
	detail := "no subscriber has this username"
	if act.TenantWide {
		var n int
		if err := t.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM users WHERE username = ? AND deleted_at IS NOT NULL`, ex.Username).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			detail = "only a deleted subscriber had this username; deleted subscribers cannot log in"
		}
	}
	ex.Checks = append(ex.Checks, Check{Name: "exists", Outcome: OutcomeFail, Reason: ReasonUnknownUser, Detail: detail})
	direct := s.nasByID(t.Slug, ex.NASID) != nil
	ex.Checks = append(ex.Checks, nasCheck(nas, direct))
	ex.Result, ex.Reason = "reject", ReasonUnknownUser
	if !direct {
		ex.Result, ex.Reason = "dropped", "nas_unknown"
	} else if s.ReplyAttributes != nil {
		ex.Attributes = s.ReplyAttributes(nas, &Answer{}, ReasonUnknownUser, ex.Method)
	}
	if ex.Attributes == nil {
		ex.Attributes = []Attribute{}
	}
	return ex, nil
}

// subscriberInScope reports whether the subscriber's manager is in the
// caller's subtree.
func subscriberInScope(ctx context.Context, act *app.Actor, uid int64) (bool, error) {
	if act.TenantWide {
		return true, nil
	}
	_, err := subs.Lookup(ctx, act.Tenant.DB.R, act, uid)
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		return false, nil
	}
	return err == nil, err
}

// ReasonPasswordReset is the refusal of a method that cannot check a
// password imported hashed (the wire layer's password_reset_required).
const ReasonPasswordReset = "password_reset_required"

// methodCheck words how the method authenticates, and fails it for a
// password imported hashed that the method cannot check.
func methodCheck(m AuthMethod, hashed bool) Check {
	c := Check{Name: "method", Outcome: OutcomePass, Detail: methodDetails[m]}
	if hashed && !m.verifiesHashed() {
		c.Outcome, c.Reason = OutcomeFail, ReasonPasswordReset
		c.Detail += "; the password was imported hashed, which only PAP (also inside TTLS) can check: reset it"
	}
	return c
}

var methodDetails = map[AuthMethod]string{
	"pap":      "PAP: the password as sent, encrypted with the NAS secret",
	"chap":     "CHAP: a challenge-response over the password",
	"mschapv2": "MS-CHAPv2: a challenge-response over the password's NT hash; the Accept adds MS-CHAP2-Success and the MS-MPPE keys",
	"eap-peap/mschapv2": "EAP-PEAP: MS-CHAPv2 inside a TLS tunnel to the server's EAP certificate; the Accept adds EAP-Success, " +
		"the tunnel's MS-MPPE keys and User-Name when the inner identity differs from the outer",
	"eap-ttls/pap":      "EAP-TTLS: the password inside a TLS tunnel; the Accept adds EAP-Success, the tunnel's MS-MPPE keys and User-Name when the inner identity differs",
	"eap-ttls/mschapv2": "EAP-TTLS: MS-CHAPv2 inside a TLS tunnel; the Accept adds EAP-Success, the tunnel's MS-MPPE keys and User-Name when the inner identity differs",
	"eap-ttls/eap-mschapv2": "EAP-TTLS: EAP-MSCHAPv2 inside a TLS tunnel; the Accept adds EAP-Success, the tunnel's MS-MPPE keys and " +
		"User-Name when the inner identity differs",
	"eap-mschapv2": "EAP-MSCHAPv2 without a tunnel; the Accept adds EAP-Success and the MS-MPPE keys",
}

func nasCheck(nas *NAS, inDirectory bool) Check {
	if !inDirectory {
		return Check{Name: "nas", Outcome: OutcomeFail, Reason: "nas_unknown",
			Detail: "this NAS is not in the RADIUS directory (its address does not parse, or the directory was not reloaded): its requests are dropped unanswered"}
	}
	return Check{Name: "nas", Outcome: OutcomePass,
		Detail: fmt.Sprintf("NAS %q (%s, type %s): no subscriber or plan is restricted to particular NASes", nas.Name, nas.IP, nasTypeName(nas.Type))}
}

func nasTypeName(t string) string {
	if t == "" {
		return "generic"
	}
	return t
}

// checkDetail words the facts behind one check of decide. It runs under
// ti.mu's read lock.
func (s *Service) checkDetail(ti *tenantIndex, r *record, c *Check, in ExplainInput, replaces int, staleAfter time.Duration) string {
	p := ti.plans[r.profileID]
	switch c.Name {
	case "exists":
		return fmt.Sprintf("subscriber #%d", r.id)
	case "method":
		return c.Detail
	case "password":
		switch c.Outcome {
		case OutcomeSkip:
			if strings.HasPrefix(r.password, LegacyHashPrefix) {
				return "the password was imported hashed: the server checks it by PAP only (the explainer does not)"
			}
			return "no password given: assumed right (the server checks PAP, CHAP, MS-CHAPv2 and the credentials inside EAP against the same password)"
		case OutcomeFail:
			return "the given password is not the subscriber's"
		}
		return "the given password is the subscriber's"
	case "tenant":
		if c.Outcome == OutcomeFail {
			return "the provider's licence is blocked or expired"
		}
		return "the provider's licence is active"
	case "enabled":
		switch c.Reason {
		case "deleted":
			return "the subscriber is deleted"
		case "disabled":
			return "the subscriber is disabled"
		}
		return "the subscriber is enabled"
	case "plan":
		switch {
		case p == nil:
			return "no plan: no rate limit, simultaneous use 1"
		case c.Outcome == OutcomeFail:
			return fmt.Sprintf("plan %q is disabled", p.name)
		}
		return fmt.Sprintf("plan %q", p.name)
	case "expiry":
		switch {
		case c.Reason == "not_activated":
			return "never activated (no expiration)"
		case c.Reason == "expired":
			return "expired at " + app.FormatTime(r.expiration)
		case c.Outcome == OutcomeAdjusted && r.expiration.IsZero():
			return fmt.Sprintf("never activated: the plan parks such logins in pool %q with no rate limit", p.expiredPool)
		case c.Outcome == OutcomeAdjusted:
			return fmt.Sprintf("expired at %s: the plan parks such logins in pool %q with no rate limit", app.FormatTime(r.expiration), p.expiredPool)
		}
		return fmt.Sprintf("expires at %s (Session-Timeout until then)", app.FormatTime(r.expiration))
	case "quota":
		switch c.Outcome {
		case OutcomeSkip:
			return "no data quota"
		case OutcomeFail:
			return fmt.Sprintf("data quota used up: %d of %d bytes, and the plan has no FUP rate", r.usedBytes, r.bytesLimit)
		case OutcomeAdjusted:
			return fmt.Sprintf("data quota used up: %d of %d bytes", r.usedBytes, r.bytesLimit)
		}
		return fmt.Sprintf("%d of %d bytes used", r.usedBytes, r.bytesLimit)
	case "fup":
		if c.Outcome == OutcomeAdjusted {
			return fmt.Sprintf("the plan's FUP rate applies: %d kbps down, %d kbps up", p.fupDown, p.fupUp)
		}
		return "the FUP rate does not apply (quota left, or none)"
	case "time_quota":
		switch c.Outcome {
		case OutcomeSkip:
			return "no time quota"
		case OutcomeFail:
			return fmt.Sprintf("time quota used up: %d of %d seconds", r.usedSecs, r.secondsLimit)
		}
		return fmt.Sprintf("%d of %d seconds used (Session-Timeout at most what is left)", r.usedSecs, r.secondsLimit)
	case "mac_lock":
		switch c.Outcome {
		case OutcomeSkip:
			return "MAC lock off"
		case OutcomeFail:
			if in.CallingStationID == "" {
				return "MAC lock on and no calling_station_id given"
			}
			return fmt.Sprintf("MAC lock on: %s is not among the %d allowed addresses", normMAC(in.CallingStationID), len(r.macs))
		}
		return fmt.Sprintf("MAC lock on: %s is allowed", normMAC(in.CallingStationID))
	case "parental":
		return ti.parentalDetail(r, c, ti.explainAt(in))
	case "simultaneous_use":
		limit := 1
		if p != nil {
			limit = p.simultaneousUse
		}
		switch c.Outcome {
		case OutcomeSkip:
			return fmt.Sprintf("no simultaneous-use limit (%d open sessions)", len(r.live))
		case OutcomeFail:
			return fmt.Sprintf("%d open sessions, limit %d", len(r.live), limit)
		case OutcomeAdjusted:
			return fmt.Sprintf("%d open sessions, limit %d: the login replaces %d stale session(s) (no accounting for %s; radius_replace_stale_session)",
				len(r.live), limit, replaces, staleAfter)
		}
		return fmt.Sprintf("%d open sessions, limit %d", len(r.live), limit)
	}
	return ""
}
