package reports

import (
	"context"
	"database/sql"

	"xr/app"
)

// sessionScope: a caller without tenant-wide visibility sees its
// subscribers' sessions only (prepaid-card logins have no owner row).
func (w *where) sessionScope(act *app.Actor) {
	if act.TenantWide {
		return
	}
	w.add("s.user_id IS NOT NULL")
	w.scope(act, "u.parent_id")
}

// sessionStart is the column a session is dated by.
const sessionStart = "COALESCE(s.start_time, s.stop_time)"

// SessionRow is a row of /admin/reports/sessions: one closed RADIUS
// accounting session — who, on which NAS, from which MAC (calling station)
// and IP, when, how long (seconds) and how many bytes (input = sent by the
// subscriber, output = received, as the NAS counts them), and why it
// ended (terminate_cause from the NAS; close_reason e.g. stale when the
// server closed it for lack of updates).
type SessionRow struct {
	ID             int64    `json:"id"`
	AcctSessionID  string   `json:"acct_session_id"`
	Kind           string   `json:"kind"`
	UserID         *int64   `json:"user_id"`
	Username       string   `json:"username"`
	ManagerID      *int64   `json:"manager_id"`
	NASID          *int64   `json:"nas_id"`
	NAS            string   `json:"nas"`
	NASIP          string   `json:"nas_ip"`
	FramedIP       string   `json:"framed_ip"`
	MAC            string   `json:"mac"`
	Profile        string   `json:"profile"`
	StartTime      app.Time `json:"start_time"`
	StopTime       app.Time `json:"stop_time"`
	Duration       int64    `json:"duration"`
	InputBytes     int64    `json:"input_bytes"`
	OutputBytes    int64    `json:"output_bytes"`
	TotalBytes     int64    `json:"total_bytes"`
	TerminateCause string   `json:"terminate_cause"`
	CloseReason    string   `json:"close_reason"`
}

// SessionsSpec: filters user_id, nas_id, manager_id, kind, close_reason,
// terminate_cause; q searches username, IP and MAC.
var SessionsSpec = spec("start_time", map[string]string{"start_time": sessionStart, "stop_time": "s.stop_time", "duration": "s.session_time",
	"total_bytes": "(s.input_octets + s.output_octets)", "id": "s.id"},
	map[string]app.FilterKind{"user_id": app.FilterInt, "nas_id": app.FilterInt, "manager_id": app.FilterInt, "kind": app.FilterString,
		"close_reason": app.FilterString, "terminate_cause": app.FilterString})

// Sessions lists closed sessions started in the period. Aggregates:
// sessions, users (distinct), seconds, input_bytes, output_bytes,
// total_bytes.
func Sessions(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[SessionRow], error) {
	if err := act.Require(PermReportSessions); err != nil {
		return app.Page[SessionRow]{}, err
	}
	var w where
	w.add("s.stop_time IS NOT NULL")
	w.sessionScope(act)
	w.period(q, sessionStart)
	w.manager(q, "u.parent_id")
	w.eq(q, "user_id", "s.user_id")
	w.eq(q, "nas_id", "s.nas_id")
	w.eq(q, "kind", "s.kind")
	w.eq(q, "close_reason", "s.close_reason")
	w.eq(q, "terminate_cause", "s.terminate_cause")
	w.like(q, "s.username", "s.framed_ip", "s.calling_station_id")
	from := `FROM radius_sessions s LEFT JOIN users u ON u.id = s.user_id LEFT JOIN nas n ON n.id = s.nas_id` + w.sql()
	aggs := []agg{count("sessions", "COUNT(*)"), count("users", "COUNT(DISTINCT s.user_id)"), count("seconds", "SUM(s.session_time)"),
		count("input_bytes", "SUM(s.input_octets)"), count("output_bytes", "SUM(s.output_octets)"),
		count("total_bytes", "SUM(s.input_octets + s.output_octets)")}
	cols := `s.id, s.acct_session_id, s.kind, s.user_id, s.username, u.parent_id, s.nas_id, COALESCE(n.name, ''), s.nas_ip, s.framed_ip,
		s.calling_station_id, s.profile_name, s.start_time, s.stop_time, s.session_time, s.input_octets, s.output_octets, s.terminate_cause, s.close_reason`
	return run(ctx, act, q, aggs, cols, from, w.args, "s.id", func(rows *sql.Rows) (SessionRow, error) {
		var r SessionRow
		var uid, mid, nid sql.NullInt64
		err := rows.Scan(&r.ID, &r.AcctSessionID, &r.Kind, &uid, &r.Username, &mid, &nid, &r.NAS, &r.NASIP, &r.FramedIP, &r.MAC, &r.Profile,
			&r.StartTime, &r.StopTime, &r.Duration, &r.InputBytes, &r.OutputBytes, &r.TerminateCause, &r.CloseReason)
		r.UserID, r.ManagerID, r.NASID, r.TotalBytes = ptr(uid), ptr(mid), ptr(nid), r.InputBytes+r.OutputBytes
		return r, err
	})
}

// TrafficRow is a row of /admin/reports/traffic: bytes of the sessions
// started in the period (live ones with their counters so far), grouped
// by subscriber (filter[group_by]=user, the default: user_id, username,
// manager set) or by day (group_by=day: day and users set).
type TrafficRow struct {
	Day         string   `json:"day,omitempty"`
	UserID      *int64   `json:"user_id,omitempty"`
	Username    string   `json:"username,omitempty"`
	ManagerID   *int64   `json:"manager_id,omitempty"`
	Manager     string   `json:"manager,omitempty"`
	Users       int64    `json:"users"`
	Sessions    int64    `json:"sessions"`
	Seconds     int64    `json:"seconds"`
	InputBytes  int64    `json:"input_bytes"`
	OutputBytes int64    `json:"output_bytes"`
	TotalBytes  int64    `json:"total_bytes"`
	LastSeen    app.Time `json:"last_seen"`
}

// TrafficSpec: filters group_by (user|day), user_id, nas_id, manager_id,
// profile_id (the subscriber's current plan).
var TrafficSpec = spec("last_seen", map[string]string{"last_seen": "g.last_seen", "total_bytes": "g.total", "input_bytes": "g.input",
	"output_bytes": "g.output", "sessions": "g.sessions", "username": "g.username", "day": "g.day"},
	map[string]app.FilterKind{"group_by": app.FilterString, "user_id": app.FilterInt, "nas_id": app.FilterInt, "manager_id": app.FilterInt,
		"profile_id": app.FilterInt})

// Traffic groups bytes per user or per day. Aggregates: sessions, seconds,
// input_bytes, output_bytes, total_bytes.
func Traffic(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[TrafficRow], error) {
	if err := act.Require(PermReportTraffic); err != nil {
		return app.Page[TrafficRow]{}, err
	}
	by, _ := q.Str("group_by")
	if by == "" {
		by = "user"
	}
	var w where
	w.sessionScope(act)
	w.period(q, sessionStart)
	w.manager(q, "u.parent_id")
	w.eq(q, "user_id", "s.user_id")
	w.eq(q, "nas_id", "s.nas_id")
	w.eq(q, "profile_id", "u.profile_id")
	const sums = `COUNT(*) AS sessions, SUM(s.session_time) AS seconds, SUM(s.input_octets) AS input, SUM(s.output_octets) AS output,
		SUM(s.input_octets + s.output_octets) AS total, MAX(COALESCE(s.stop_time, s.update_time, s.start_time)) AS last_seen`
	var inner string
	switch by {
	case "user":
		w.add("s.user_id IS NOT NULL")
		w.like(q, "u.username")
		inner = `SELECT '' AS day, s.user_id AS user_id, MAX(u.username) AS username, MAX(u.parent_id) AS manager_id, MAX(` + mname("m") + `) AS manager,
			1 AS users, ` + sums + `, printf('%020d', s.user_id) AS k
			FROM radius_sessions s JOIN users u ON u.id = s.user_id LEFT JOIN managers m ON m.id = u.parent_id` + w.sql() + ` GROUP BY s.user_id`
	case "day":
		inner = `SELECT substr(` + sessionStart + `, 1, 10) AS day, NULL AS user_id, '' AS username, NULL AS manager_id, '' AS manager,
			COUNT(DISTINCT s.user_id) AS users, ` + sums + `, substr(` + sessionStart + `, 1, 10) AS k
			FROM radius_sessions s LEFT JOIN users u ON u.id = s.user_id` + w.sql() + ` GROUP BY substr(` + sessionStart + `, 1, 10)`
	default:
		return app.Page[TrafficRow]{}, app.ErrValidation("invalid_filter", "filter[group_by]")
	}
	aggs := []agg{count("sessions", "SUM(g.sessions)"), count("seconds", "SUM(g.seconds)"), count("input_bytes", "SUM(g.input)"),
		count("output_bytes", "SUM(g.output)"), count("total_bytes", "SUM(g.total)")}
	return run(ctx, act, q, aggs, `g.day, g.user_id, g.username, g.manager_id, g.manager, g.users, g.sessions, g.seconds, g.input, g.output, g.total, g.last_seen`,
		`FROM (`+inner+`) g`, w.args, "g.k", func(rows *sql.Rows) (TrafficRow, error) {
			var r TrafficRow
			var uid, mid sql.NullInt64
			err := rows.Scan(&r.Day, &uid, &r.Username, &mid, &r.Manager, &r.Users, &r.Sessions, &r.Seconds, &r.InputBytes, &r.OutputBytes,
				&r.TotalBytes, &r.LastSeen)
			r.UserID, r.ManagerID = ptr(uid), ptr(mid)
			return r, err
		})
}

// Suspect is a row of /admin/reports/suspicious. Refused logins (MAC
// lock, simultaneous use) are not stored, so the report works from the
// accounting that exists: per subscriber over the sessions started in the
// period, it flags
//   - many_macs: sessions from at least filter[min_macs] (default 3)
//     distinct MACs (calling station ids) — account sharing;
//   - short_sessions: at least filter[min_short] (default 10) closed
//     sessions shorter than filter[short_seconds] (default 60) — flapping
//     links or password guessing by a sharer being kicked;
//   - stale_closed: at least filter[min_stale] (default 3) sessions the
//     server closed as stale (no accounting updates) — NAS trouble or
//     accounting suppression.
//
// Only subscribers with at least one flag are listed; reasons names them.
type Suspect struct {
	UserID        int64    `json:"user_id"`
	Username      string   `json:"username"`
	ManagerID     int64    `json:"manager_id"`
	Manager       string   `json:"manager"`
	Sessions      int64    `json:"sessions"`
	DistinctMACs  int64    `json:"distinct_macs"`
	ShortSessions int64    `json:"short_sessions"`
	StaleClosed   int64    `json:"stale_closed"`
	FirstSeen     app.Time `json:"first_seen"`
	LastSeen      app.Time `json:"last_seen"`
	Reasons       []string `json:"reasons"`
}

// SuspiciousSpec: thresholds min_macs, min_short, short_seconds, min_stale
// (positive integers; otherwise 400 invalid_filter), manager_id, user_id;
// q searches the username.
var SuspiciousSpec = spec("last_seen", map[string]string{"last_seen": "h.last_seen", "distinct_macs": "h.distinct_macs",
	"short_sessions": "h.short_sessions", "stale_closed": "h.stale_closed", "username": "h.username"},
	map[string]app.FilterKind{"min_macs": app.FilterInt, "min_short": app.FilterInt, "short_seconds": app.FilterInt, "min_stale": app.FilterInt,
		"manager_id": app.FilterInt, "user_id": app.FilterInt})

// Suspicious lists flagged subscribers. Aggregates: users, many_macs,
// short_sessions, stale_closed (counts of flagged subscribers per reason).
func Suspicious(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Suspect], error) {
	if err := act.Require(PermReportSuspicious); err != nil {
		return app.Page[Suspect]{}, err
	}
	th := map[string]int64{"min_macs": 3, "min_short": 10, "short_seconds": 60, "min_stale": 3}
	for k := range th {
		if v, ok := q.Int(k); ok {
			if v < 1 {
				return app.Page[Suspect]{}, app.ErrValidation("invalid_filter", "filter["+k+"]")
			}
			th[k] = v
		}
	}
	var w where
	w.add("s.user_id IS NOT NULL")
	w.scope(act, "u.parent_id")
	w.period(q, sessionStart)
	w.manager(q, "u.parent_id")
	w.eq(q, "user_id", "s.user_id")
	w.like(q, "u.username")
	args := append([]any{th["min_macs"], th["min_short"], th["min_stale"], th["short_seconds"]}, w.args...)
	from := `FROM (SELECT g.*, g.distinct_macs >= ? AS f_macs, g.short_sessions >= ? AS f_short, g.stale_closed >= ? AS f_stale FROM (
		SELECT s.user_id AS user_id, MAX(u.username) AS username, MAX(u.parent_id) AS manager_id, MAX(` + mname("m") + `) AS manager,
			COUNT(*) AS sessions, COUNT(DISTINCT NULLIF(s.calling_station_id, '')) AS distinct_macs,
			SUM(s.stop_time IS NOT NULL AND s.session_time < ?) AS short_sessions, SUM(s.close_reason = 'stale') AS stale_closed,
			MIN(` + sessionStart + `) AS first_seen, MAX(COALESCE(s.stop_time, s.update_time, s.start_time)) AS last_seen
		FROM radius_sessions s JOIN users u ON u.id = s.user_id LEFT JOIN managers m ON m.id = u.parent_id` + w.sql() + `
		GROUP BY s.user_id) g) h WHERE h.f_macs OR h.f_short OR h.f_stale`
	aggs := []agg{count("users", "COUNT(*)"), count("many_macs", "SUM(h.f_macs)"), count("short_sessions", "SUM(h.f_short)"),
		count("stale_closed", "SUM(h.f_stale)")}
	return run(ctx, act, q, aggs, `h.user_id, h.username, h.manager_id, h.manager, h.sessions, h.distinct_macs, h.short_sessions, h.stale_closed,
		h.first_seen, h.last_seen, h.f_macs, h.f_short, h.f_stale`, from, args, "h.user_id", func(rows *sql.Rows) (Suspect, error) {
		var r Suspect
		var fm, fs, fst bool
		err := rows.Scan(&r.UserID, &r.Username, &r.ManagerID, &r.Manager, &r.Sessions, &r.DistinctMACs, &r.ShortSessions, &r.StaleClosed,
			&r.FirstSeen, &r.LastSeen, &fm, &fs, &fst)
		r.Reasons = []string{}
		for _, f := range []struct {
			on   bool
			name string
		}{{fm, "many_macs"}, {fs, "short_sessions"}, {fst, "stale_closed"}} {
			if f.on {
				r.Reasons = append(r.Reasons, f.name)
			}
		}
		return r, err
	})
}

// UserRow is a row of /admin/reports/users: a live subscriber in scope
// (created by the end of the period) with its state now — disabled,
// expired (no or past expiration) or active — and its usage in the
// period from the usage rollups (so it outlives the session archive):
// seconds and bytes as accounting reported them in the period (by UTC
// hour: a bound inside an hour counts that whole hour), sessions started
// in it; activations and their revenue (refunded ones excluded).
type UserRow struct {
	UserID            int64     `json:"user_id"`
	Username          string    `json:"username"`
	Name              string    `json:"name"`
	ManagerID         int64     `json:"manager_id"`
	Manager           string    `json:"manager"`
	ProfileID         *int64    `json:"profile_id"`
	Profile           string    `json:"profile"`
	State             string    `json:"state"`
	Online            bool      `json:"online"`
	Expiration        app.Time  `json:"expiration"`
	Balance           app.Money `json:"balance"`
	CreatedAt         app.Time  `json:"created_at"`
	Sessions          int64     `json:"sessions"`
	Seconds           int64     `json:"seconds"`
	InputBytes        int64     `json:"input_bytes"`
	OutputBytes       int64     `json:"output_bytes"`
	TotalBytes        int64     `json:"total_bytes"`
	Activations       int64     `json:"activations"`
	ActivationRevenue app.Money `json:"activation_revenue"`
}

// UsersSpec: filters manager_id, profile_id, state (active|expired|
// disabled); q searches username and name.
var UsersSpec = spec("created_at", map[string]string{"created_at": "g.created_at", "username": "g.username", "total_bytes": "g.total",
	"balance": "g.balance", "expiration": "g.expiration", "activations": "g.activations"},
	map[string]app.FilterKind{"manager_id": app.FilterInt, "profile_id": app.FilterInt, "state": app.FilterString})

// Users lists subscribers with their usage. Aggregates: users, active,
// expired, disabled, online, balance, sessions, total_bytes, activations,
// activation_revenue.
func Users(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[UserRow], error) {
	if err := act.Require(PermReportUsers); err != nil {
		return app.Page[UserRow]{}, err
	}
	from, to := bounds(q)
	var w where
	w.add("u.deleted_at IS NULL AND u.created_at <= ?", to)
	w.scope(act, "u.parent_id")
	w.manager(q, "u.parent_id")
	w.eq(q, "profile_id", "u.profile_id")
	w.like(q, "u.username", "u.firstname", "u.lastname")
	var o where
	if v, ok := q.Str("state"); ok {
		if v != "active" && v != "expired" && v != "disabled" {
			return app.Page[UserRow]{}, app.ErrValidation("invalid_filter", "filter[state]")
		}
		o.add("g.state = ?", v)
	}
	period, pargs, lo, hi := rollupPeriod(q)
	args := []any{act.Tenant.NowText(), lo, hi, lo, hi, lo, hi, lo, hi}
	args = append(append(append(args, pargs...), from, to), w.args...)
	args = append(args, o.args...)
	src := `FROM (SELECT x.*, COALESCE(x.s_in, 0) + COALESCE(x.s_out, 0) AS total FROM (SELECT u.id AS id, u.username AS username,
		TRIM(u.firstname || ' ' || u.lastname) AS name, u.parent_id AS manager_id, ` + mname("m") + ` AS manager, u.profile_id AS profile_id,
		COALESCE(p.name, '') AS profile,
		CASE WHEN u.enabled = 0 THEN 'disabled' WHEN u.expiration IS NULL OR u.expiration <= ? THEN 'expired' ELSE 'active' END AS state,
		EXISTS (SELECT 1 FROM radius_sessions ls WHERE ls.user_id = u.id AND ls.stop_time IS NULL) AS online,
		u.expiration AS expiration, u.balance AS balance, u.created_at AS created_at,
		COALESCE(us.n, 0) + IIF(u.usage_hour >= ? AND u.usage_hour < ?, u.usage_sessions, 0) AS sessions,
		COALESCE(us.secs, 0) + IIF(u.usage_hour >= ? AND u.usage_hour < ?, u.usage_secs, 0) AS seconds,
		COALESCE(us.s_in, 0) + IIF(u.usage_hour >= ? AND u.usage_hour < ?, u.usage_in, 0) AS s_in,
		COALESCE(us.s_out, 0) + IIF(u.usage_hour >= ? AND u.usage_hour < ?, u.usage_out, 0) AS s_out, ua.n AS activations, ua.rev AS activation_revenue
		FROM users u LEFT JOIN managers m ON m.id = u.parent_id LEFT JOIN profiles p ON p.id = u.profile_id
		LEFT JOIN (SELECT r.user_id AS uid, SUM(r.sessions) AS n, SUM(r.seconds) AS secs, SUM(r.input_octets) AS s_in, SUM(r.output_octets) AS s_out
			FROM usage_rollups r WHERE ` + period + ` GROUP BY r.user_id) us ON us.uid = u.id
		LEFT JOIN (SELECT a.user_id AS uid, COUNT(*) AS n, SUM(a.price) AS rev FROM user_activations a
			WHERE a.refunded_at IS NULL AND a.created_at >= ? AND a.created_at <= ? GROUP BY a.user_id) ua ON ua.uid = u.id` + w.sql() + `) x) g` + o.sql()
	aggs := []agg{count("users", "COUNT(*)"), count("active", "SUM(g.state = 'active')"), count("expired", "SUM(g.state = 'expired')"),
		count("disabled", "SUM(g.state = 'disabled')"), count("online", "SUM(g.online)"), money("balance", "SUM(g.balance)"),
		count("sessions", "SUM(g.sessions)"), count("total_bytes", "SUM(g.total)"), count("activations", "SUM(g.activations)"),
		money("activation_revenue", "SUM(g.activation_revenue)")}
	cols := `g.id, g.username, g.name, g.manager_id, g.manager, g.profile_id, g.profile, g.state, g.online, g.expiration, g.balance, g.created_at,
		COALESCE(g.sessions, 0), COALESCE(g.seconds, 0), COALESCE(g.s_in, 0), COALESCE(g.s_out, 0), g.total, COALESCE(g.activations, 0), COALESCE(g.activation_revenue, 0)`
	return run(ctx, act, q, aggs, cols, src, args, "g.id", func(rows *sql.Rows) (UserRow, error) {
		var r UserRow
		var pid sql.NullInt64
		var bal, rev int64
		err := rows.Scan(&r.UserID, &r.Username, &r.Name, &r.ManagerID, &r.Manager, &pid, &r.Profile, &r.State, &r.Online, &r.Expiration, &bal,
			&r.CreatedAt, &r.Sessions, &r.Seconds, &r.InputBytes, &r.OutputBytes, &r.TotalBytes, &r.Activations, &rev)
		r.ProfileID, r.Balance, r.ActivationRevenue = ptr(pid), app.Money(bal), app.Money(rev)
		return r, err
	})
}

// rollupPeriod selects the usage_rollups rows (alias r) covering the
// period: the daily rows of the whole UTC days inside it, the hourly rows
// of the hours at either edge (a bound inside an hour counts that hour);
// lo and hi (exclusive) bound the hours, for the subscriber's hour in
// progress (users.usage_hour, not in the rollups yet).
func rollupPeriod(q app.ListQuery) (cond string, args []any, lo, hi int64) {
	const far = int64(1) << 40 // open sides
	lo, hi = -far, far
	if v, ok := q.TimeF("from"); ok {
		lo = floorTo(v.Unix(), 3600)
	}
	if v, ok := q.TimeF("to"); ok {
		hi = floorTo(v.Unix(), 3600) + 3600 // exclusive
	}
	dLo, dHi := -floorTo(-lo, 86400), floorTo(hi, 86400)
	if dLo >= dHi {
		return `(r.grain = 'h' AND r.bucket >= ? AND r.bucket < ?)`, []any{lo, hi}, lo, hi
	}
	return `((r.grain = 'd' AND r.bucket >= ? AND r.bucket < ?) OR (r.grain = 'h' AND ((r.bucket >= ? AND r.bucket < ?) OR (r.bucket >= ? AND r.bucket < ?))))`,
		[]any{dLo, dHi, lo, dLo, dHi, hi}, lo, hi
}

func floorTo(v, step int64) int64 {
	r := v % step
	if r < 0 {
		r += step
	}
	return v - r
}
