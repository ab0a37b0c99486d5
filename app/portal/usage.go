package portal

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
)

// Period is the current period: from the last activation (not refunded)
// to the expiration. Start is null when the subscriber was never activated.
type Period struct {
	Start app.Time `json:"start"`
	End   app.Time `json:"end"`
}

func readPeriod(ctx context.Context, q app.Querier, uid int64, exp app.Time) (Period, error) {
	p := Period{End: exp}
	var start sql.NullString
	if err := q.QueryRowContext(ctx, `SELECT MAX(created_at) FROM user_activations WHERE user_id = ? AND refunded_at IS NULL`, uid).Scan(&start); err != nil {
		return p, err
	}
	if start.Valid {
		if v, err := app.ParseTime(start.String, false); err == nil {
			p.Start = app.T(v)
		}
	}
	return p, nil
}

// UsageDay is one day of GET /portal/usage's history (UTC days).
type UsageDay struct {
	Date     string `json:"date"`
	Bytes    int64  `json:"bytes"`
	BytesIn  int64  `json:"bytes_in"`
	BytesOut int64  `json:"bytes_out"`
	Seconds  int64  `json:"seconds"`
	Sessions int64  `json:"sessions"`
}

// Usage is GET /portal/usage: the current period's usage against its
// limits (percent null when the dimension is unlimited) and the last 30
// days by day from the usage rollups (bytes and seconds on the day
// accounting reported them, sessions on the day they started).
type Usage struct {
	Period         Period     `json:"period"`
	UsedBytes      int64      `json:"used_bytes"`
	BytesLimit     int64      `json:"bytes_limit"`
	BytesPercent   *float64   `json:"bytes_percent"`
	UsedSeconds    int64      `json:"used_seconds"`
	SecondsLimit   int64      `json:"seconds_limit"`
	SecondsPercent *float64   `json:"seconds_percent"`
	Days           []UsageDay `json:"days"`
}

func percent(used, limit int64) *float64 {
	if limit <= 0 {
		return nil
	}
	p := float64(used) * 100 / float64(limit)
	p = float64(int64(p*100+0.5)) / 100
	return &p
}

// GetUsage reads the caller's usage in one snapshot.
func GetUsage(ctx context.Context, act *app.Actor) (*Usage, error) {
	t, uid := act.Tenant, act.SubscriberID
	var u Usage
	err := t.Read(ctx, func(tx *sql.Tx) error {
		s, err := readSelf(ctx, tx, t.Now(), uid)
		if err != nil {
			return err
		}
		if u.Period, err = readPeriod(ctx, tx, uid, s.Expiration); err != nil {
			return err
		}
		u.UsedBytes, u.BytesLimit, u.UsedSeconds, u.SecondsLimit = s.Quota.UsedBytes, s.Quota.BytesLimit, s.Quota.UsedSeconds, s.Quota.SecondsLimit
		u.BytesPercent, u.SecondsPercent = percent(u.UsedBytes, u.BytesLimit), percent(u.UsedSeconds, u.SecondsLimit)
		now := act.Tenant.Now()
		first := now.AddDate(0, 0, -29).Truncate(24 * time.Hour)
		rows, err := tx.QueryContext(ctx, `SELECT bucket, input_octets, output_octets, seconds, sessions
			FROM usage_rollups WHERE user_id = ? AND grain = 'd' AND bucket >= ? ORDER BY bucket`, uid, first.Unix())
		if err != nil {
			return err
		}
		defer rows.Close()
		byDay := map[string]UsageDay{}
		for rows.Next() {
			var d UsageDay
			var bucket int64
			if err := rows.Scan(&bucket, &d.BytesIn, &d.BytesOut, &d.Seconds, &d.Sessions); err != nil {
				return err
			}
			d.Date = time.Unix(bucket, 0).UTC().Format("2006-01-02")
			d.Bytes = d.BytesIn + d.BytesOut
			byDay[d.Date] = d
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// The hour in progress is on the subscriber's row until accounting
		// hands it to the rollups.
		var hour, in, out, secs, n int64
		if err := tx.QueryRowContext(ctx, `SELECT usage_hour, usage_in, usage_out, usage_secs, usage_sessions FROM users WHERE id = ?`, uid).
			Scan(&hour, &in, &out, &secs, &n); err != nil {
			return err
		}
		if hour >= first.Unix() && (in != 0 || out != 0 || secs != 0 || n != 0) {
			day := time.Unix(hour, 0).UTC().Format("2006-01-02")
			d := byDay[day]
			d.Date, d.BytesIn, d.BytesOut, d.Seconds, d.Sessions = day, d.BytesIn+in, d.BytesOut+out, d.Seconds+secs, d.Sessions+n
			d.Bytes = d.BytesIn + d.BytesOut
			byDay[day] = d
		}
		u.Days = make([]UsageDay, 0, 30)
		for i := range 30 {
			day := first.AddDate(0, 0, i).Format("2006-01-02")
			d, ok := byDay[day]
			if !ok {
				d = UsageDay{Date: day}
			}
			u.Days = append(u.Days, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// QuotaBucket is one enforced dimension of the current period.
type QuotaBucket struct {
	Dimension string   `json:"dimension"` // data (bytes) or time (seconds)
	Unit      string   `json:"unit"`
	Limit     int64    `json:"limit"`
	Used      int64    `json:"used"`
	Remaining int64    `json:"remaining"`
	Percent   *float64 `json:"percent"`
	Exhausted bool     `json:"exhausted"`
	Period    Period   `json:"period"`
}

// QuotaBuckets lists one bucket per enforced dimension (a limit > 0) of
// the caller's current period; none when nothing is enforced.
func QuotaBuckets(ctx context.Context, act *app.Actor) ([]QuotaBucket, error) {
	t, uid := act.Tenant, act.SubscriberID
	out := []QuotaBucket{}
	err := t.Read(ctx, func(tx *sql.Tx) error {
		s, err := readSelf(ctx, tx, t.Now(), uid)
		if err != nil {
			return err
		}
		p, err := readPeriod(ctx, tx, uid, s.Expiration)
		if err != nil {
			return err
		}
		add := func(dim, unit string, limit, used int64) {
			if limit <= 0 {
				return
			}
			out = append(out, QuotaBucket{Dimension: dim, Unit: unit, Limit: limit, Used: used, Remaining: max(0, limit-used),
				Percent: percent(used, limit), Exhausted: used >= limit, Period: p})
		}
		add("data", "bytes", s.Quota.BytesLimit, s.Quota.UsedBytes)
		add("time", "seconds", s.Quota.SecondsLimit, s.Quota.UsedSeconds)
		return nil
	})
	return out, err
}

// RadiusSession is a row of GET /portal/sessions.
type RadiusSession struct {
	ID             int64    `json:"id"`
	StartTime      app.Time `json:"start_time"`
	StopTime       app.Time `json:"stop_time"` // null while live
	Online         bool     `json:"online"`
	SessionTime    int64    `json:"session_time"`
	InputOctets    int64    `json:"input_octets"`
	OutputOctets   int64    `json:"output_octets"`
	FramedIP       string   `json:"framed_ip"`
	CallingStation string   `json:"calling_station_id"`
	NASIP          string   `json:"nas_ip"`
	TerminateCause string   `json:"terminate_cause"`
}

var sessionSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "r.id", "start_time": "r.id"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"online": app.FilterBool, "started_from": app.FilterTime, "started_to": app.FilterTime},
}

// SessionSpec is the list spec of GET /portal/sessions (newest first).
func SessionSpec() app.ListSpec { return sessionSpec }

// Sessions lists the caller's RADIUS sessions.
func Sessions(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[RadiusSession], error) {
	t, uid := act.Tenant, act.SubscriberID
	from, args := `FROM radius_sessions r WHERE r.user_id = ?`, []any{uid}
	if v, ok := lq.Bool("online"); ok {
		if v {
			from += ` AND r.stop_time IS NULL`
		} else {
			from += ` AND r.stop_time IS NOT NULL`
		}
	}
	if v, ok := lq.TimeF("started_from"); ok {
		from += ` AND r.start_time >= ?`
		args = append(args, app.FormatTime(v.Time))
	}
	if v, ok := lq.TimeF("started_to"); ok {
		from += ` AND r.start_time <= ?`
		args = append(args, app.FormatTime(v.Time))
	}
	return app.QueryPage(ctx, t, lq, `r.id, r.start_time, r.stop_time, r.session_time, r.input_octets, r.output_octets, r.framed_ip,
		r.calling_station_id, r.nas_ip, r.terminate_cause`, from, args, "r.id",
		func(rows *sql.Rows) (RadiusSession, error) {
			var s RadiusSession
			err := rows.Scan(&s.ID, &s.StartTime, &s.StopTime, &s.SessionTime, &s.InputOctets, &s.OutputOctets, &s.FramedIP,
				&s.CallingStation, &s.NASIP, &s.TerminateCause)
			s.Online = s.StopTime.IsZero()
			return s, err
		})
}

// UsageMonth is one calendar month (UTC) of the caller's usage.
type UsageMonth struct {
	Month   string `json:"month"` // yyyy-MM
	Bytes   int64  `json:"bytes"`
	Seconds int64  `json:"seconds"`
}

// UsageMonths is the caller's usage per month over the last twelve, newest
// first, summed from the daily rollups (months with no use are left out).
func UsageMonths(ctx context.Context, act *app.Actor) ([]UsageMonth, error) {
	t, uid := act.Tenant, act.SubscriberID
	now := t.Now().UTC()
	first := time.Date(now.Year(), now.Month()-11, 1, 0, 0, 0, 0, time.UTC)
	rows, err := t.DB.R.QueryContext(ctx, `SELECT strftime('%Y-%m', bucket, 'unixepoch') AS m, SUM(input_octets + output_octets), SUM(seconds)
		FROM usage_rollups WHERE user_id = ? AND grain = 'd' AND bucket >= ? GROUP BY m ORDER BY m DESC`, uid, first.Unix())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []UsageMonth{}
	for rows.Next() {
		var m UsageMonth
		if err := rows.Scan(&m.Month, &m.Bytes, &m.Seconds); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
