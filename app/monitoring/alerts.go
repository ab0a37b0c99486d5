package monitoring

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/outbox"
)

// Alert is one raised alert.
type Alert struct {
	ID         int64    `json:"id"`
	DeviceID   int64    `json:"device_id"`
	Device     string   `json:"device"`
	DeviceKind string   `json:"device_kind"`
	DeviceRef  int64    `json:"device_ref"`
	Rule       string   `json:"rule"`
	Severity   string   `json:"severity"`
	State      string   `json:"state"`
	Message    string   `json:"message"`
	Value      *float64 `json:"value"`
	CreatedAt  app.Time `json:"created_at"`
	ResolvedAt app.Time `json:"resolved_at"`
	Acked      bool     `json:"acked"`
	AckedAt    app.Time `json:"acked_at"`
	AckedBy    *int64   `json:"acked_by"`
}

const alertCols = `a.id, a.device_id, d.name, d.kind, COALESCE(d.nas_id, d.id), a.rule, a.severity, a.state, a.message, a.value,
	a.created_at, a.resolved_at, a.acked_at, a.acked_by`

const alertFrom = ` FROM mon_alerts a JOIN mon_devices d ON d.id = a.device_id`

func scanAlert(row interface{ Scan(...any) error }) (Alert, error) {
	var a Alert
	var v sql.NullFloat64
	var by sql.NullInt64
	err := row.Scan(&a.ID, &a.DeviceID, &a.Device, &a.DeviceKind, &a.DeviceRef, &a.Rule, &a.Severity, &a.State, &a.Message, &v,
		&a.CreatedAt, &a.ResolvedAt, &a.AckedAt, &by)
	a.Value, a.AckedBy, a.Acked = nullFloat(v), nullInt(by), !a.AckedAt.IsZero()
	return a, err
}

// AlertSpec is the alert list's sorts and filters.
var AlertSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "a.id", "created_at": "a.created_at", "severity": "a.severity"},
	DefaultSort: "id",
	Filters: map[string]app.FilterKind{"state": app.FilterString, "severity": app.FilterString, "device_id": app.FilterInt,
		"acked": app.FilterBool, "rule": app.FilterString},
	Aliases: []string{"state", "severity", "device_id", "acked", "rule"},
}

// ListAlerts answers GET /admin/monitoring/alerts (alerts of the devices
// the caller sees; owners see their devices' alerts).
func ListAlerts(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Alert], error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return app.Page[Alert]{}, err
	}
	cond, args := visibleSQL(act)
	where := []string{cond}
	for _, f := range []struct{ key, col string }{{"state", "a.state"}, {"severity", "a.severity"}, {"rule", "a.rule"}} {
		if v, ok := lq.Str(f.key); ok {
			where = append(where, f.col+" = ?")
			args = append(args, v)
		}
	}
	if v, ok := lq.Int("device_id"); ok {
		where = append(where, "a.device_id = ?")
		args = append(args, v)
	}
	if v, ok := lq.Bool("acked"); ok {
		if v {
			where = append(where, "a.acked_at IS NOT NULL")
		} else {
			where = append(where, "a.acked_at IS NULL")
		}
	}
	if lq.Q != "" {
		where = append(where, "(d.name LIKE ? ESCAPE '\\' OR a.message LIKE ? ESCAPE '\\')")
		like := "%" + escapeLike(lq.Q) + "%"
		args = append(args, like, like)
	}
	return app.QueryPage(ctx, act.Tenant, lq, alertCols, alertFrom+" WHERE "+strings.Join(where, " AND "), args, "a.id",
		func(rows *sql.Rows) (Alert, error) { return scanAlert(rows) })
}

func loadAlert(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Alert, error) {
	cond, args := visibleSQL(act)
	a, err := scanAlert(q.QueryRowContext(ctx, `SELECT `+alertCols+alertFrom+` WHERE a.id = ? AND `+cond, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return a, app.ErrNotFound()
	}
	return a, err
}

// UnackedCount is the answer of GET /alerts/unacked-count.
type UnackedCount struct {
	Count    int `json:"count"`
	Critical int `json:"critical"`
}

// CountUnacked answers GET /admin/monitoring/alerts/unacked-count.
func CountUnacked(ctx context.Context, act *app.Actor) (*UnackedCount, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	var out UnackedCount
	err := act.Tenant.DB.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(a.severity = 'critical'), 0)`+alertFrom+
		` WHERE a.acked_at IS NULL AND `+cond, args...).Scan(&out.Count, &out.Critical)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AckAlert answers POST /alerts/{id}/ack (acking twice keeps the first).
func AckAlert(ctx context.Context, act *app.Actor, id int64) (*Alert, error) {
	if err := act.Require(PermMonitoringAck); err != nil {
		return nil, err
	}
	var a Alert
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadAlert(ctx, tx, act, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mon_alerts SET acked_at = ?, acked_by = ? WHERE id = ? AND acked_at IS NULL`,
			act.Tenant.NowText(), managerOrNil(act), id); err != nil {
			return err
		}
		var err error
		a, err = loadAlert(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// DeleteAlert removes one alert (bulk-delete).
func DeleteAlert(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermMonitoringAck); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadAlert(ctx, tx, act, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM mon_alerts WHERE id = ?`, id)
		return err
	})
}

// ClearResult is the answer of POST /alerts/clear-all.
type ClearResult struct {
	Deleted int64 `json:"deleted"`
}

// ClearAlerts answers POST /alerts/clear-all: every resolved alert and
// every acknowledged one of the caller's devices is deleted; open alerts
// nobody acknowledged stay (an outage is not cleared by a click).
func ClearAlerts(ctx context.Context, act *app.Actor) (*ClearResult, error) {
	if err := act.Require(PermMonitoringAck); err != nil {
		return nil, err
	}
	cond, args := visibleSQL(act)
	var out ClearResult
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM mon_alerts WHERE id IN (SELECT a.id`+alertFrom+
			` WHERE (a.state = 'resolved' OR a.acked_at IS NOT NULL) AND `+cond+`)`, args...)
		if err != nil {
			return err
		}
		out.Deleted, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AlertDeliveries answers GET /alerts/{id}/deliveries: who was notified,
// by which channel, with what result (the outbox messages of the alert).
func AlertDeliveries(ctx context.Context, act *app.Actor, id int64) ([]outbox.Delivery, error) {
	if err := act.Require(PermMonitoringView); err != nil {
		return nil, err
	}
	if _, err := loadAlert(ctx, act.Tenant.DB.R, act, id); err != nil {
		return nil, err
	}
	return outbox.Deliveries(ctx, act.Tenant, "mon_alert:"+strconv.FormatInt(id, 10))
}
