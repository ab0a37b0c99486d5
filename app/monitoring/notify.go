package monitoring

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"xr/app"
)

// Rules are a device's alert thresholds.
type Rules struct {
	// DownAfter is K: the device is down after K failed probes in a row
	// (default 3).
	DownAfter int `json:"down_after"`
	// LatencyMs raises a warning while an echo takes longer (0: off).
	LatencyMs float64 `json:"latency_ms"`
	// LossPct raises a warning while the loss over the last 20 echoes is
	// higher (0: off).
	LossPct float64 `json:"loss_percent"`
	// NASSilentMinutes (a NAS only) raises a warning while no accounting
	// came from the NAS for this many minutes (0: off): the RADIUS side of
	// its health, from the stored sessions.
	NASSilentMinutes int `json:"nas_silent_minutes"`
	// IfIndex, IfUtilPct and IfUtilMinutes: a warning once the interface's
	// utilisation (the busier direction over its speed, from two SNMP
	// polls) stays over IfUtilPct for IfUtilMinutes (0: off; SNMP needed).
	IfIndex       int     `json:"if_index"`
	IfUtilPct     float64 `json:"if_util_percent"`
	IfUtilMinutes int     `json:"if_util_minutes"`
}

func (r Rules) withDefaults() Rules {
	if r.DownAfter <= 0 {
		r.DownAfter = 3
	}
	return r
}

// QuietHours is a daily window (tenant time zone, "HH:MM") during which
// no email or SMS is sent; the alert and its webhook event still happen.
type QuietHours struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// NotifySettings is who is told about a device's alerts and how: GET|PUT
// .../{kind}/{ref}/notify. Webhook endpoints subscribed to device.down and
// device.up hear every device.
type NotifySettings struct {
	Emails         []string    `json:"emails"`
	Phones         []string    `json:"phones"`
	NotifyWarnings bool        `json:"notify_warnings"` // latency, loss and reboot alerts too, not only down/up
	QuietHours     *QuietHours `json:"quiet_hours"`
	// EscalateAfterMinutes: a critical alert still open and unacknowledged
	// this long is also sent to EscalateEmails (0: never), quiet hours or not.
	EscalateAfterMinutes int      `json:"escalate_after_minutes"`
	EscalateEmails       []string `json:"escalate_emails"`
	Rules                Rules    `json:"rules"`
}

var (
	e164   = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	hhmmRe = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
)

func (n *NotifySettings) validate() error {
	if len(n.Emails) > 20 {
		return app.ErrValidation("out_of_range", "emails")
	}
	if len(n.Phones) > 20 {
		return app.ErrValidation("out_of_range", "phones")
	}
	for i, e := range n.Emails {
		e = strings.TrimSpace(e)
		a, err := mail.ParseAddress(e)
		if err != nil || a.Address != e || len(e) > 254 {
			return app.ErrValidation("invalid_email", fmt.Sprintf("emails[%d]", i))
		}
		n.Emails[i] = e
	}
	for i, p := range n.Phones {
		if !e164.MatchString(strings.TrimSpace(p)) {
			return app.ErrValidation("invalid_phone", fmt.Sprintf("phones[%d]", i))
		}
		n.Phones[i] = strings.TrimSpace(p)
	}
	if len(n.EscalateEmails) > 20 {
		return app.ErrValidation("out_of_range", "escalate_emails")
	}
	for i, e := range n.EscalateEmails {
		e = strings.TrimSpace(e)
		a, err := mail.ParseAddress(e)
		if err != nil || a.Address != e || len(e) > 254 {
			return app.ErrValidation("invalid_email", fmt.Sprintf("escalate_emails[%d]", i))
		}
		n.EscalateEmails[i] = e
	}
	if n.EscalateAfterMinutes < 0 || n.EscalateAfterMinutes > 7*24*60 {
		return app.ErrValidation("out_of_range", "escalate_after_minutes")
	}
	if n.Rules.NASSilentMinutes < 0 || n.Rules.NASSilentMinutes > 7*24*60 {
		return app.ErrValidation("out_of_range", "rules.nas_silent_minutes")
	}
	if n.Rules.IfIndex < 0 {
		return app.ErrValidation("out_of_range", "rules.if_index")
	}
	if n.Rules.IfUtilPct < 0 || n.Rules.IfUtilPct > 100 {
		return app.ErrValidation("out_of_range", "rules.if_util_percent")
	}
	if n.Rules.IfUtilMinutes < 0 || n.Rules.IfUtilMinutes > 24*60 {
		return app.ErrValidation("out_of_range", "rules.if_util_minutes")
	}
	if q := n.QuietHours; q != nil {
		if !hhmmRe.MatchString(q.From) {
			return app.ErrValidation("invalid_time_of_day", "quiet_hours.from")
		}
		if !hhmmRe.MatchString(q.To) {
			return app.ErrValidation("invalid_time_of_day", "quiet_hours.to")
		}
	}
	r := &n.Rules
	if r.DownAfter < 0 || r.DownAfter > 100 {
		return app.ErrValidation("out_of_range", "rules.down_after")
	}
	if r.LatencyMs < 0 || r.LatencyMs > 60000 {
		return app.ErrValidation("out_of_range", "rules.latency_ms")
	}
	if r.LossPct < 0 || r.LossPct > 100 {
		return app.ErrValidation("out_of_range", "rules.loss_percent")
	}
	*r = r.withDefaults()
	if n.Emails == nil {
		n.Emails = []string{}
	}
	if n.Phones == nil {
		n.Phones = []string{}
	}
	if n.EscalateEmails == nil {
		n.EscalateEmails = []string{}
	}
	return nil
}

// quiet reports whether now falls in the quiet hours (tenant time zone).
func (n NotifySettings) quiet(ctx context.Context, q app.Querier, now time.Time) bool {
	if n.QuietHours == nil || n.QuietHours.From == n.QuietHours.To {
		return false
	}
	loc, err := time.LoadLocation(app.SettingTimezone.GetOr(ctx, q))
	if err != nil {
		loc = time.UTC
	}
	hm := now.In(loc).Format("15:04")
	from, to := n.QuietHours.From, n.QuietHours.To
	if from < to {
		return hm >= from && hm < to
	}
	return hm >= from || hm < to // across midnight
}

// GetNotify answers GET .../{kind}/{ref}/notify.
func GetNotify(ctx context.Context, act *app.Actor, kind string, ref int64) (*NotifySettings, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	var n NotifySettings
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		var raw string
		if err := tx.QueryRowContext(ctx, `SELECT notify FROM mon_devices WHERE id = ?`, d.ID).Scan(&raw); err != nil {
			return err
		}
		n = parseNotify(raw)
		return n.validate()
	})
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// SetNotify answers PUT .../{kind}/{ref}/notify (the whole settings).
func SetNotify(ctx context.Context, act *app.Actor, kind string, ref int64, in NotifySettings) (*NotifySettings, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		if err := in.validate(); err != nil {
			return err
		}
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE mon_devices SET notify = ?, updated_at = ? WHERE id = ?`, string(b), act.Tenant.NowText(), d.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// Owner is a manager responsible for a device.
type Owner struct {
	ManagerID int64  `json:"manager_id"`
	Username  string `json:"username"`
}

// OwnersInput is the body of PUT .../owners: the whole list.
type OwnersInput struct {
	ManagerIDs []int64 `json:"manager_ids"`
}

// OwnersResult lists a device's owners.
type OwnersResult struct {
	Owners []Owner `json:"owners"`
}

func readOwners(ctx context.Context, q app.Querier, id int64) (*OwnersResult, error) {
	rows, err := q.QueryContext(ctx, `SELECT o.manager_id, COALESCE(m.username, '') FROM mon_owners o JOIN managers m ON m.id = o.manager_id
		WHERE o.device_id = ? ORDER BY o.manager_id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &OwnersResult{Owners: []Owner{}}
	for rows.Next() {
		var o Owner
		if err := rows.Scan(&o.ManagerID, &o.Username); err != nil {
			return nil, err
		}
		out.Owners = append(out.Owners, o)
	}
	return out, rows.Err()
}

// GetOwners answers GET .../{kind}/{ref}/owners.
func GetOwners(ctx context.Context, act *app.Actor, kind string, ref int64) (*OwnersResult, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	var out *OwnersResult
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		out, err = readOwners(ctx, tx, d.ID)
		return err
	})
	return out, err
}

// SetOwners answers PUT .../{kind}/{ref}/owners: each owner must be a
// manager of the caller's subtree (400 invalid_manager_id otherwise).
func SetOwners(ctx context.Context, act *app.Actor, kind string, ref int64, in OwnersInput) (*OwnersResult, error) {
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	if len(in.ManagerIDs) > 50 {
		return nil, app.ErrValidation("out_of_range", "manager_ids")
	}
	var out *OwnersResult
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		d, err := resolve(ctx, tx, act, kind, ref)
		if err != nil {
			return err
		}
		for i, m := range in.ManagerIDs {
			ok, err := act.InScope(ctx, tx, m)
			if err != nil {
				return err
			}
			if !ok {
				return app.ErrValidation("invalid_manager_id", fmt.Sprintf("manager_ids[%d]", i))
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mon_owners WHERE device_id = ?`, d.ID); err != nil {
			return err
		}
		for _, m := range in.ManagerIDs {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO mon_owners(device_id, manager_id) VALUES (?, ?)`, d.ID, m); err != nil {
				return err
			}
		}
		out, err = readOwners(ctx, tx, d.ID)
		return err
	})
	return out, err
}
