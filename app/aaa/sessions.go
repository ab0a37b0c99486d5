package aaa

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"strings"
	"time"

	"xr/app"
	"xr/app/reports"
	"xr/app/subs"
)

// Usage is how much of its enforced quota a live session's subscriber has
// used.
type Usage struct {
	Percent   float64 `json:"percent"`
	Dimension string  `json:"dimension"` // data, time
}

// Session is a row of GET /admin/sessions (and the record of
// GET /admin/sessions/{id}, which adds the closing fields).
type Session struct {
	ID               int64        `json:"id"`
	AcctSessionID    string       `json:"acct_session_id"`
	Username         string       `json:"username"`
	UserID           *int64       `json:"user_id"`
	Kind             string       `json:"kind"`
	NASIP            string       `json:"nas_ip"`
	NASName          string       `json:"nas_name"`
	Vendor           string       `json:"vendor"`
	NASID            int64        `json:"nas_id"`
	FramedIP         string       `json:"framed_ip"`
	FramedIPv6Prefix string       `json:"framed_ipv6_prefix"`
	CallingStationID string       `json:"calling_station_id"`
	StartTime        app.Time     `json:"start_time"`
	UpdateTime       app.Time     `json:"update_time"`
	SessionTime      int64        `json:"session_time"`
	InputOctets      int64        `json:"input_octets"`
	OutputOctets     int64        `json:"output_octets"`
	ProfileName      string       `json:"profile_name"`
	Status           *subs.Status `json:"status,omitempty"`
	Usage            *Usage       `json:"usage,omitempty"`
	// InterimInterval is the session's own interim interval as observed
	// (the longest gap of 60 s or more between its updates); 0 = not yet.
	InterimInterval int64 `json:"interim_interval"`
	// Flags kept by the sweep (see truth.go): a subscriber who should not be
	// connected, a session beyond the plan's simultaneous use, an ACKed
	// Disconnect no Accounting-Stop followed within two interim intervals.
	Zombie                bool `json:"zombie"`
	OverLimit             bool `json:"over_limit"`
	DisconnectUnconfirmed bool `json:"disconnect_unconfirmed"`
	// Record only.
	StopTime          *app.Time `json:"stop_time,omitempty"`
	TerminateCause    string    `json:"terminate_cause,omitempty"`
	CloseReason       string    `json:"close_reason,omitempty"`
	DisconnectOutcome string    `json:"disconnect_outcome,omitempty"`
	// StopCause is why it ended: user_request, admin_disconnect, nas_reboot,
	// stale, idle_timeout, session_timeout, lost_carrier, ... (see truth.go).
	StopCause string `json:"stop_cause,omitempty"`
}

var sessionKinds = map[string]bool{"subscriber": true, "guest": true, "voucher": true, "unknown": true}

// SessionListSpec is GET /admin/sessions' allow-list.
var SessionListSpec = app.ListSpec{
	Sorts: map[string]string{"start_time": "s.start_time", "update_time": "s.update_time", "username": "s.username",
		"session_time": "s.session_time", "input_octets": "s.input_octets", "output_octets": "s.output_octets", "id": "s.id"},
	DefaultSort: "start_time",
	Filters: map[string]app.FilterKind{"nas_id": app.FilterInt, "kind": app.FilterString, "has_ip": app.FilterBool,
		"duration_band": app.FilterString, "expired": app.FilterBool, "user_id": app.FilterInt,
		"zombie": app.FilterBool, "over_limit": app.FilterBool, "disconnect_unconfirmed": app.FilterBool},
}

const sessionCols = `s.id, s.acct_session_id, s.username, s.user_id, s.kind, s.nas_ip, COALESCE(n.name, ''), COALESCE(n.type, ''), COALESCE(s.nas_id, 0),
	s.framed_ip, s.framed_ipv6_prefix, s.calling_station_id, s.start_time, s.update_time, s.session_time, s.input_octets, s.output_octets, s.profile_name,
	u.enabled, u.deleted_at IS NOT NULL, COALESCE(u.expiration, ''), u.bytes_limit, u.used_bytes, u.seconds_limit, u.used_seconds,
	COALESCE(p.fup_rate_down_kbps, 0), s.stop_time, s.terminate_cause, s.close_reason, s.disconnect_outcome,
	s.stop_cause, s.interim_interval, s.zombie, s.over_limit, s.disconnect_unconfirmed`

const sessionFrom = `FROM radius_sessions s LEFT JOIN nas n ON n.id = s.nas_id LEFT JOIN users u ON u.id = s.user_id LEFT JOIN profiles p ON p.id = u.profile_id`

func scanSession(rows interface{ Scan(...any) error }, now time.Time) (*Session, error) {
	s := &Session{}
	var uid sql.NullInt64
	var enabled, deleted sql.NullBool
	var exp string
	var bl, ub, sl, us, fup sql.NullInt64
	var stop sql.NullString
	if err := rows.Scan(&s.ID, &s.AcctSessionID, &s.Username, &uid, &s.Kind, &s.NASIP, &s.NASName, &s.Vendor, &s.NASID, &s.FramedIP, &s.FramedIPv6Prefix, &s.CallingStationID,
		&s.StartTime, &s.UpdateTime, &s.SessionTime, &s.InputOctets, &s.OutputOctets, &s.ProfileName,
		&enabled, &deleted, &exp, &bl, &ub, &sl, &us, &fup, &stop, &s.TerminateCause, &s.CloseReason, &s.DisconnectOutcome,
		&s.StopCause, &s.InterimInterval, &s.Zombie, &s.OverLimit, &s.DisconnectUnconfirmed); err != nil {
		return nil, err
	}
	if stop.Valid {
		t, _ := app.ParseTime(stop.String, true)
		st := app.T(t)
		s.StopTime = &st
	}
	if !uid.Valid || !enabled.Valid {
		return s, nil // no subscriber row: status and usage are absent
	}
	s.UserID = &uid.Int64
	in := subs.StatusInput{Enabled: enabled.Bool, Deleted: deleted.Bool, Online: !stop.Valid, BytesLimit: bl.Int64, UsedBytes: ub.Int64,
		SecondsLimit: sl.Int64, UsedSeconds: us.Int64, FUPRateDownKbps: fup.Int64}
	if exp != "" {
		in.Expiration, _ = app.ParseTime(exp, true)
	}
	st := subs.StatusOf(in, now)
	s.Status = &st
	switch {
	case bl.Int64 > 0:
		s.Usage = &Usage{Percent: percent(ub.Int64, bl.Int64), Dimension: "data"}
	case sl.Int64 > 0:
		s.Usage = &Usage{Percent: percent(us.Int64, sl.Int64), Dimension: "time"}
	}
	return s, nil
}

func percent(used, limit int64) float64 {
	p := float64(used) * 100 / float64(limit)
	return float64(int64(p*100+0.5)) / 100
}

// sessionScope restricts sessions to the caller's subtree: a caller without
// tenant-wide visibility sees its subscribers' sessions only.
func sessionScope(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	cond, args := act.ScopeSQL("u.parent_id")
	return "s.user_id IS NOT NULL AND " + cond, args
}

// ListSessions lists live sessions (no stop time) in the caller's scope.
func ListSessions(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Session], error) {
	if err := act.Require(reports.PermReportSessions); err != nil {
		return app.Page[Session]{}, err
	}
	t := act.Tenant
	now := t.Now()
	scope, args := sessionScope(act)
	where := []string{"s.stop_time IS NULL", scope}
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if v, ok := lq.Int("nas_id"); ok {
		add("s.nas_id = ?", v)
	}
	if v, ok := lq.Int("user_id"); ok {
		add("s.user_id = ?", v)
	}
	if v, ok := lq.Str("kind"); ok {
		if !sessionKinds[v] {
			return app.Page[Session]{}, app.ErrValidation("invalid_filter", "filter[kind]")
		}
		add("s.kind = ?", v)
	}
	if v, ok := lq.Bool("has_ip"); ok {
		if v {
			add("s.framed_ip <> ''")
		} else {
			add("s.framed_ip = ''")
		}
	}
	if v, ok := lq.Str("duration_band"); ok {
		idleSec, err := SettingRadiusIdleWindow.Get(ctx, t.DB.R)
		if err != nil {
			return app.Page[Session]{}, err
		}
		idle := time.Duration(idleSec) * time.Second
		cut := app.FormatTime(now.Add(-idle))
		switch v {
		case "stale": // no accounting update for longer than the idle window
			add("COALESCE(s.update_time, s.start_time) < ?", cut)
		case "fresh":
			add("COALESCE(s.update_time, s.start_time) >= ?", cut)
		case "under_1h":
			add("s.session_time < 3600")
		case "1h_to_24h":
			add("s.session_time >= 3600 AND s.session_time < 86400")
		case "over_24h":
			add("s.session_time >= 86400")
		default:
			return app.Page[Session]{}, app.ErrValidation("invalid_filter", "filter[duration_band]")
		}
	}
	if v, ok := lq.Bool("expired"); ok {
		// The owner's subscription ran out while the session stays up.
		if v {
			add("s.user_id IS NOT NULL AND (u.expiration IS NULL OR u.expiration <= ?)", app.FormatTime(now))
		} else {
			add("s.user_id IS NOT NULL AND u.expiration > ?", app.FormatTime(now))
		}
	}
	for _, flag := range []string{"zombie", "over_limit", "disconnect_unconfirmed"} {
		if v, ok := lq.Bool(flag); ok {
			add("s."+flag+" = ?", v)
		}
	}
	if lq.Q != "" {
		like := "%" + app.LikeEscape(lq.Q) + "%"
		add(`(s.username LIKE ? ESCAPE '\' OR u.firstname LIKE ? ESCAPE '\' OR u.lastname LIKE ? ESCAPE '\' OR s.framed_ip LIKE ? ESCAPE '\'
			OR s.calling_station_id LIKE ? ESCAPE '\' OR n.name LIKE ? ESCAPE '\')`, like, like, like, like, like, like)
	}
	page, err := app.QueryPage(ctx, t, lq, sessionCols, sessionFrom+` WHERE `+strings.Join(where, " AND "), args, "s.id",
		func(rows *sql.Rows) (Session, error) {
			s, err := scanSession(rows, now)
			if err != nil {
				return Session{}, err
			}
			s.StopTime, s.TerminateCause, s.CloseReason, s.DisconnectOutcome, s.StopCause = nil, "", "", "", ""
			return *s, nil
		})
	return page, err
}

// GetSession reads one accounting row in the caller's scope (live or not).
func GetSession(ctx context.Context, act *app.Actor, id int64) (*Session, error) {
	if err := act.Require(reports.PermReportSessions); err != nil {
		return nil, err
	}
	return getSession(ctx, act, id)
}

// getSession reads a session the caller sees for the action on it (which
// checked the caller's permission).
func getSession(ctx context.Context, act *app.Actor, id int64) (*Session, error) {
	scope, args := sessionScope(act)
	s, err := scanSession(act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+sessionCols+` `+sessionFrom+` WHERE s.id = ? AND `+scope,
		append([]any{id}, args...)...), act.Tenant.Now())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return s, err
}

// Traffic is the counter snapshot of GET /admin/sessions/{id}/traffic:
// throughput is the difference of two snapshots over their sampled_at.
type Traffic struct {
	ID           int64    `json:"id"`
	SessionTime  int64    `json:"session_time"`
	InputOctets  int64    `json:"input_octets"`
	OutputOctets int64    `json:"output_octets"`
	UpdateTime   app.Time `json:"update_time"` // when the NAS last reported
	SampledAt    app.Time `json:"sampled_at"`  // when the server read it
}

// SessionTraffic reads a session's counters as last reported.
func SessionTraffic(ctx context.Context, act *app.Actor, id int64) (*Traffic, error) {
	if err := act.Require(reports.PermReportSessions); err != nil {
		return nil, err
	}
	return sessionTraffic(ctx, act, id)
}

func sessionTraffic(ctx context.Context, act *app.Actor, id int64) (*Traffic, error) {
	s, err := getSession(ctx, act, id)
	if err != nil {
		return nil, err
	}
	return &Traffic{ID: s.ID, SessionTime: s.SessionTime, InputOctets: s.InputOctets, OutputOctets: s.OutputOctets,
		UpdateTime: s.UpdateTime, SampledAt: app.T(act.Tenant.Now())}, nil
}

// LiveTraffic is GET /admin/sessions/{id}/live-traffic. xr has no SNMP
// poller, so the source is always "interim": the counters of the last
// accounting update, with bits per second 0.
type LiveTraffic struct {
	Traffic
	Source string `json:"source"`
	RxBps  int64  `json:"rx_bps"`
	TxBps  int64  `json:"tx_bps"`
}

// SessionLiveTraffic reads the live traffic of a session.
func SessionLiveTraffic(ctx context.Context, act *app.Actor, id int64) (*LiveTraffic, error) {
	if err := act.Require(subs.PermUsersLiveTraffic); err != nil {
		return nil, err
	}
	tr, err := sessionTraffic(ctx, act, id)
	if err != nil {
		return nil, err
	}
	return &LiveTraffic{Traffic: *tr, Source: "interim"}, nil
}

// LockedMAC is the answer of POST /admin/sessions/{id}/lock-mac.
type LockedMAC struct {
	UserID     int64    `json:"user_id"`
	MAC        string   `json:"mac"`
	LockedMACs []string `json:"locked_macs"`
}

// LockSessionMAC writes the session's device MAC into its subscriber's
// locked list and turns the lock on; the current session stays up.
func LockSessionMAC(ctx context.Context, act *app.Actor, id int64) (*LockedMAC, error) {
	if err := act.Require(subs.PermUsersMacLock); err != nil {
		return nil, err
	}
	s, err := getSession(ctx, act, id)
	if err != nil {
		return nil, err
	}
	if s.UserID == nil {
		return nil, app.ErrConflict("session_has_no_subscriber")
	}
	mac := normMAC(s.CallingStationID)
	if len(mac) != 17 {
		return nil, app.ErrConflict("session_has_no_mac")
	}
	out := &LockedMAC{UserID: *s.UserID, MAC: mac}
	// The subs area owns users: it validates, writes the list and emits
	// user.updated in this transaction.
	err = act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		list, err := subs.LockMAC(ctx, tx, *s.UserID, mac, "session_lock_mac")
		out.LockedMACs = list
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DisconnectResult is the answer of POST /admin/sessions/{id}/disconnect:
// ok = the NAS accepted; nak = the NAS says there is no such session (a
// success: it is gone). A NAS that does not answer is a 502.
type DisconnectResult struct {
	OK      bool   `json:"ok"`
	NAK     bool   `json:"nak"`
	Message string `json:"message"`
}

// DisconnectSession sends an RFC 5176 Disconnect-Request for one live
// session to its NAS and records the outcome on the session.
func (s *Service) DisconnectSession(ctx context.Context, act *app.Actor, id int64) (*DisconnectResult, error) {
	if err := act.Require(subs.PermUsersLiveTraffic); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, app.ErrUnavailable("disconnect_unavailable")
	}
	sess, err := getSession(ctx, act, id)
	if err != nil {
		return nil, err
	}
	if sess.StopTime != nil {
		return nil, app.ErrConflict("session_not_live")
	}
	if s.Disconnect == nil {
		return nil, app.ErrUnavailable("disconnect_unavailable")
	}
	nas := s.nasByID(act.Tenant.Slug, sess.NASID)
	if nas == nil {
		return nil, app.ErrBadGateway("nas_unknown")
	}
	ip, _ := netip.ParseAddr(sess.FramedIP)
	outcome, err := s.Disconnect(ctx, nas, sess.Username, sess.AcctSessionID, ip)
	if outcome == "" {
		outcome = "unreachable"
	}
	// The caller hears the NAS's answer either way; the stored mark only
	// feeds the session's disconnect flags, so a failure to store it is
	// logged rather than hiding what the NAS did.
	if rerr := s.RecordCoAOutcome(ctx, act.Tenant.Slug, id, outcome); rerr != nil {
		s.log.Error("record disconnect outcome", "tenant", act.Tenant.Slug, "session", id, "outcome", outcome, "err", rerr)
	}
	switch outcome {
	case "ok":
		return &DisconnectResult{OK: true, Message: "the NAS accepted the disconnect"}, nil
	case "nak":
		return &DisconnectResult{NAK: true, Message: "the NAS has no such session"}, nil
	}
	if err != nil {
		s.log.Warn("disconnect", "tenant", act.Tenant.Slug, "session", id, "err", err)
	}
	return nil, app.ErrBadGateway("nas_unreachable")
}
