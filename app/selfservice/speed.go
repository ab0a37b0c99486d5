package selfservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/portal"
	"xr/app/subs"
)

// A speed boost is a bandwidth override (bandwidth_rules, kind override,
// target the subscriber) from now to its end: the RADIUS index applies it
// at the next Access-Accept like any override, the live sessions get a CoA
// at once, and the job runner reverts it at its end (JobBoostEnd). Staff
// see it among the bandwidth overrides and their CoA history.

// Boost is one speed boost of the subscriber.
type Boost struct {
	ID           int64     `json:"id"`
	OptionID     *int64    `json:"option_id"`
	RateDownKbps int64     `json:"rate_down_kbps"`
	RateUpKbps   int64     `json:"rate_up_kbps"`
	Price        app.Money `json:"price"`
	StartsAt     app.Time  `json:"starts_at"`
	EndsAt       app.Time  `json:"ends_at"`
	State        string    `json:"state"`     // active, ended, cancelled
	ApplyCoA     string    `json:"apply_coa"` // per live session: ack, nak, timeout, error; none without one
	RevertCoA    string    `json:"revert_coa"`
	EndedAt      app.Time  `json:"ended_at"`
}

// Speed is GET /portal/speed: the plan's rate, the boost in force and the
// boosts the plan offers.
type Speed struct {
	RateDownKbps int64         `json:"rate_down_kbps"`
	RateUpKbps   int64         `json:"rate_up_kbps"`
	Active       *Boost        `json:"active"`
	Options      []BoostOption `json:"options"`
}

// SpeedInput is PUT /portal/speed: the option to buy.
type SpeedInput struct {
	OptionID  int64  `json:"option_id"`
	RequestID string `json:"request_id"`
}

const boostCols = `id, option_id, rate_down_kbps, rate_up_kbps, price, starts_at, ends_at, state, apply_coa, revert_coa, ended_at`

func scanBoost(row interface{ Scan(...any) error }) (*Boost, error) {
	var b Boost
	var opt sql.NullInt64
	var price int64
	if err := row.Scan(&b.ID, &opt, &b.RateDownKbps, &b.RateUpKbps, &price, &b.StartsAt, &b.EndsAt, &b.State, &b.ApplyCoA, &b.RevertCoA, &b.EndedAt); err != nil {
		return nil, err
	}
	if opt.Valid {
		b.OptionID = &opt.Int64
	}
	b.Price = app.Money(price)
	return &b, nil
}

// activeBoost is the subscriber's boost in force at now, or nil.
func activeBoost(ctx context.Context, q app.Querier, uid int64, now time.Time) (*Boost, error) {
	b, err := scanBoost(q.QueryRowContext(ctx, `SELECT `+boostCols+` FROM ss_boosts WHERE user_id = ? AND state = 'active' AND ends_at > ? ORDER BY id DESC LIMIT 1`,
		uid, app.FormatTime(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return b, err
}

// GetSpeed reads the caller's speed, boost and options.
func GetSpeed(ctx context.Context, act *app.Actor) (*Speed, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureSpeedBoost); err != nil {
		return nil, err
	}
	var out *Speed
	err := t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = readSpeed(ctx, tx, uid, t.Now())
		return err
	})
	return out, err
}

func readSpeed(ctx context.Context, q app.Querier, uid int64, now time.Time) (*Speed, error) {
	s, err := readSubscriber(ctx, q, uid)
	if err != nil {
		return nil, err
	}
	out := &Speed{Options: []BoostOption{}}
	if s.profileID != 0 {
		if err := q.QueryRowContext(ctx, `SELECT rate_down_kbps, rate_up_kbps FROM profiles WHERE id = ?`, s.profileID).Scan(&out.RateDownKbps, &out.RateUpKbps); err != nil {
			return nil, err
		}
		if out.Options, err = boostOptions(ctx, q, s.profileID); err != nil {
			return nil, err
		}
	}
	out.Active, err = activeBoost(ctx, q, uid, now)
	return out, err
}

// SetSpeed buys a boost of the caller's plan (400 boost_option_not_found
// for an option the plan does not offer; 409 boost_active while one is in
// force; 409 insufficient_balance beyond the debt limit — nothing written
// then), applies it at once by CoA on the live sessions and queues its
// revert. Idempotent on request_id.
func SetSpeed(ctx context.Context, act *app.Actor, in SpeedInput) (*Boost, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureSpeedBoost); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.OptionID <= 0 {
		return nil, app.ErrValidation("boost_option_not_found", "option_id")
	}
	var out Boost
	var replay bool
	var ruleID int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("portal/%d/speed", uid), Input: in}, func() (Boost, error) {
			now := t.Now()
			s, err := readSubscriber(ctx, tx, uid)
			if err != nil {
				return Boost{}, err
			}
			var opt BoostOption
			var price int64
			err = tx.QueryRowContext(ctx, `SELECT id, rate_down_kbps, rate_up_kbps, duration_minutes, price FROM ss_boost_options WHERE id = ? AND profile_id = ?`,
				in.OptionID, s.profileID).Scan(&opt.ID, &opt.RateDownKbps, &opt.RateUpKbps, &opt.DurationMinutes, &price)
			if errors.Is(err, sql.ErrNoRows) {
				return Boost{}, app.ErrValidation("boost_option_not_found", "option_id")
			}
			if err != nil {
				return Boost{}, err
			}
			opt.Price = app.Money(price)
			if cur, err := activeBoost(ctx, tx, uid, now); err != nil || cur != nil {
				if err != nil {
					return Boost{}, err
				}
				return Boost{}, app.ErrConflict("boost_active").With("ends_at", cur.EndsAt)
			}
			var ledger any
			if opt.Price > 0 {
				_, lid, err := subs.MoveBalance(ctx, tx, subs.Movement{UserID: uid, Amount: -opt.Price, Kind: "speed_boost", RefType: "ss_boost",
					RequestID: in.RequestID, Note: fmt.Sprintf("speed boost %d/%d kbps, %d min", opt.RateDownKbps, opt.RateUpKbps, opt.DurationMinutes), CheckCredit: true})
				if err != nil {
					return Boost{}, err
				}
				ledger = lid
			}
			end := now.Add(time.Duration(opt.DurationMinutes) * time.Minute)
			ids, _ := json.Marshal([]int64{uid})
			r, err := tx.ExecContext(ctx, `INSERT INTO bandwidth_rules(kind, name, target_kind, target_ids, rate_down_kbps, rate_up_kbps, starts_at, ends_at, created_at, updated_at)
				VALUES ('override', ?, 'users', ?, ?, ?, ?, ?, ?, ?)`, "portal speed boost", string(ids), opt.RateDownKbps, opt.RateUpKbps,
				app.FormatTime(now), app.FormatTime(end), app.FormatTime(now), app.FormatTime(now))
			if err != nil {
				return Boost{}, err
			}
			ruleID, _ = r.LastInsertId()
			r, err = tx.ExecContext(ctx, `INSERT INTO ss_boosts(user_id, option_id, rule_id, rate_down_kbps, rate_up_kbps, price, ledger_id, starts_at, ends_at, state, created_at)
				VALUES (?,?,?,?,?,?,?,?,?,'active',?)`, uid, opt.ID, ruleID, opt.RateDownKbps, opt.RateUpKbps, int64(opt.Price), ledger,
				app.FormatTime(now), app.FormatTime(end), app.FormatTime(now))
			if err != nil {
				return Boost{}, err
			}
			id, _ := r.LastInsertId()
			job, err := app.EnqueueJob(ctx, tx, JobBoostEnd, boostJob{BoostID: id}, end, 0, 5)
			if err != nil {
				return Boost{}, err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE ss_boosts SET job_id = ? WHERE id = ?`, job, id); err != nil {
				return Boost{}, err
			}
			b, err := scanBoost(tx.QueryRowContext(ctx, `SELECT `+boostCols+` FROM ss_boosts WHERE id = ?`, id))
			if err != nil {
				return Boost{}, err
			}
			return *b, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if replay {
		return &out, nil
	}
	coa, err := sendRates(ctx, t, uid, ruleID, "apply")
	if err != nil {
		return nil, err
	}
	out.ApplyCoA = coa
	err = t.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE ss_boosts SET apply_coa = ? WHERE id = ?`, coa, out.ID)
		return err
	})
	return &out, err
}

// CancelSpeed ends the caller's boost now (409 no_active_boost without
// one); what it cost is not refunded.
func CancelSpeed(ctx context.Context, act *app.Actor) (*Boost, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := portal.RequireFeature(ctx, t, portal.FeatureSpeedBoost); err != nil {
		return nil, err
	}
	var id int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		b, err := activeBoost(ctx, tx, uid, t.Now())
		if err != nil {
			return err
		}
		if b == nil {
			return app.ErrConflict("no_active_boost")
		}
		id = b.ID
		return endBoost(ctx, tx, t, b.ID, "cancelled")
	})
	if err != nil {
		return nil, err
	}
	return revertRates(ctx, t, uid, id, "revert")
}

// endBoost marks a boost ended (or cancelled), reverts its rule and
// cancels its job unless it is the one running.
func endBoost(ctx context.Context, tx *sql.Tx, t *app.Tenant, id int64, state string) error {
	var rule, job sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT rule_id, job_id FROM ss_boosts WHERE id = ?`, id).Scan(&rule, &job); err != nil {
		return err
	}
	now := t.NowText()
	if _, err := tx.ExecContext(ctx, `UPDATE ss_boosts SET state = ?, ended_at = ? WHERE id = ?`, state, now, id); err != nil {
		return err
	}
	if rule.Valid {
		if _, err := tx.ExecContext(ctx, `UPDATE bandwidth_rules SET reverted_at = ?, updated_at = ? WHERE id = ? AND reverted_at IS NULL`, now, now, rule.Int64); err != nil {
			return err
		}
	}
	if state == "cancelled" && job.Valid {
		return cancelJob(ctx, tx, job.Int64)
	}
	return nil
}

// revertRates sends the live sessions their rate without the boost and
// records the outcome on the boost.
func revertRates(ctx context.Context, t *app.Tenant, uid, id int64, action string) (*Boost, error) {
	var rule sql.NullInt64
	if err := t.DB.R.QueryRowContext(ctx, `SELECT rule_id FROM ss_boosts WHERE id = ?`, id).Scan(&rule); err != nil {
		return nil, err
	}
	coa, err := sendRates(ctx, t, uid, rule.Int64, action)
	if err != nil {
		return nil, err
	}
	var b *Boost
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE ss_boosts SET revert_coa = ? WHERE id = ?`, coa, id); err != nil {
			return err
		}
		var err error
		b, err = scanBoost(tx.QueryRowContext(ctx, `SELECT `+boostCols+` FROM ss_boosts WHERE id = ?`, id))
		return err
	})
	return b, err
}

type boostJob struct {
	BoostID int64 `json:"boost_id"`
}

// runBoostEnd reverts a boost at its end.
func runBoostEnd(ctx context.Context, jc *app.JobContext) (any, error) {
	var p boostJob
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	var uid int64
	var state string
	var ends app.Time
	err := t.DB.R.QueryRowContext(ctx, `SELECT user_id, state, ends_at FROM ss_boosts WHERE id = ?`, p.BoostID).Scan(&uid, &state, &ends)
	if errors.Is(err, sql.ErrNoRows) {
		return map[string]string{"skipped": "gone"}, nil
	}
	if err != nil {
		return nil, err
	}
	if state != "active" {
		return map[string]string{"skipped": state}, nil
	}
	if t.Now().Before(ends.Time) {
		return nil, &app.RetryLater{At: ends.Time, Reason: "not over"}
	}
	if err := t.Write(ctx, func(tx *sql.Tx) error { return endBoost(ctx, tx, t, p.BoostID, "ended") }); err != nil {
		return nil, err
	}
	b, err := revertRates(ctx, t, uid, p.BoostID, "expire")
	if err != nil {
		return nil, err
	}
	return map[string]string{"ended": "ok", "coa": b.RevertCoA}, nil
}

// sendRates sends each live session of subscriber uid the rate in force
// now (a CoA through aaa.Service.ChangeSessionRate, the one CoA path),
// records each outcome in bandwidth_coa under ruleID, and answers the
// outcomes joined ("none" without a live session). A session held at the
// plan's FUP rate keeps it.
func sendRates(ctx context.Context, t *app.Tenant, uid, ruleID int64, action string) (string, error) {
	type sess struct {
		rowID, parentID, nasID, profileID, groupID int64
		sid, username                              string
		inFUP                                      bool
	}
	var list []sess
	var rules []aaa.RateRule
	var down, up int64
	var loc *time.Location
	err := t.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT s.id, u.parent_id, s.nas_id, s.acct_session_id, s.username, COALESCE(u.profile_id, 0), COALESCE(u.group_id, 0),
			u.bytes_limit > 0 AND u.used_bytes >= u.bytes_limit FROM radius_sessions s JOIN users u ON u.id = s.user_id
			WHERE s.user_id = ? AND s.stop_time IS NULL ORDER BY s.id`, uid)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s sess
			if err := rows.Scan(&s.rowID, &s.parentID, &s.nasID, &s.sid, &s.username, &s.profileID, &s.groupID, &s.inFUP); err != nil {
				return err
			}
			list = append(list, s)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(list) == 0 {
			return nil
		}
		if err := tx.QueryRowContext(ctx, `SELECT rate_down_kbps, rate_up_kbps FROM profiles WHERE id = ?`, list[0].profileID).Scan(&down, &up); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return err
		}
		loc = app.TenantLocation(ctx, tx)
		rules, err = aaa.LoadRateRules(ctx, tx)
		return err
	})
	if err != nil || len(list) == 0 {
		return "none", err
	}
	svc := aaa.ServiceOf(t.App)
	now := t.Now()
	type sent struct {
		s       sess
		d, u    int64
		outcome string
		nasType string
	}
	var results []sent
	for _, s := range list {
		if s.inFUP {
			continue
		}
		d, u := down, up
		if r := aaa.PickRate(rules, s.profileID, s.groupID, s.nasID, uid, now, loc); r != nil {
			d, u = r.Down, r.Up
		}
		out := sent{s: s, d: d, u: u, outcome: aaa.RateError}
		if svc != nil {
			out.nasType = svc.NASType(t.Slug, s.nasID)
			out.outcome = svc.ChangeSessionRate(ctx, t.Slug, s.nasID, s.username, s.sid, d, u)
		}
		results = append(results, out)
	}
	if len(results) == 0 {
		return "none", nil
	}
	outcomes := map[string]bool{}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		stamp := t.NowText()
		for _, r := range results {
			outcomes[r.outcome] = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO bandwidth_coa(rule_id, action, session_id, user_id, parent_id, username, nas_id, nas_type, rate_down_kbps, rate_up_kbps, outcome, created_at)
				VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, ruleID, action, r.s.rowID, uid, r.s.parentID, r.s.username, r.s.nasID, r.nasType, r.d, r.u, r.outcome, stamp); err != nil {
				return err
			}
		}
		return nil
	})
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ","), err
}
