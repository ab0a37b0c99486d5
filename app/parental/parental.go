package parental

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/portal"
	"xr/app/portalentry"
	"xr/app/subs"
)

// Parental control, as the portal offers it to a subscriber (the parent):
//
//   - Rules are blocked weekly windows (PUT /parental/rules), each on some
//     weekdays from start to end (HH:MM) in the tenant's time zone (the
//     tenant setting `timezone`); a window whose end is not after its start
//     crosses midnight, start = end blocks 24 hours. Inside a window RADIUS
//     answers Access-Reject with reason parental_blocked; at a window start
//     the job parental.edge sends a Disconnect to the live sessions; at its
//     end logins are accepted again (an Access-Accept carries a
//     Session-Timeout up to the next window start).
//   - A pause (POST /parental/pause) blocks now for N minutes, disconnecting
//     the live sessions at once; minutes 0 ends a pause.
//   - The PIN (POST /parental/pin, 4 to 8 digits) is stored as an argon2id
//     hash (app.HashPassword); changing it asks the current one. A staff
//     member clears a forgotten PIN from the console.
//   - Unlock (POST /parental/unlock, public: the blocked device has no
//     portal session) identifies the subscriber by its username and PIN. A
//     right PIN lifts the block in force now, the current window (or pause)
//     until its end only: the next window blocks again. Wrong PINs are
//     counted; from the third failure on, the request must carry a captcha
//     (GET /portal/captcha) until a right PIN resets the count. An unknown
//     username, a subscriber without a PIN and a wrong PIN answer alike
//     (401 invalid_pin).

// EdgeJob disconnects a subscriber at the start of a block and queues the
// next start.
const EdgeJob = "parental.edge"

// Limits of the input.
const (
	maxWindows           = 28
	maxPauseMinutes      = 24 * 60
	captchaAfter         = 3 // wrong PINs before a captcha is asked
	pinMinLen, pinMaxLen = 4, 8
)

// Window is a blocked window as the API shows it.
type Window struct {
	Weekdays []string `json:"weekdays"` // sun..sat; empty = every day
	Start    string   `json:"start"`    // HH:MM
	End      string   `json:"end"`      // HH:MM; not after start = crosses midnight
}

// RulesInput is PUT /parental/rules: the whole list of windows.
type RulesInput struct {
	Windows []Window `json:"windows"`
}

// PauseInput is POST /parental/pause.
type PauseInput struct {
	Minutes *int `json:"minutes"` // 1..1440; 0 ends a pause
}

// PINInput is POST /parental/pin.
type PINInput struct {
	PIN        string `json:"pin"`
	CurrentPIN string `json:"current_pin"` // required when a PIN is set
}

// UnlockInput is POST /parental/unlock.
type UnlockInput struct {
	Username      string `json:"username"`
	PIN           string `json:"pin"`
	CaptchaID     string `json:"captcha_id"`
	CaptchaAnswer string `json:"captcha_answer"`
	IP            string `json:"-"`
}

// State is GET /parental (and the staff view of a subscriber's).
type State struct {
	UserID          int64    `json:"user_id"`
	Timezone        string   `json:"timezone"`
	Windows         []Window `json:"windows"`
	PINSet          bool     `json:"pin_set"`
	PINFailures     int      `json:"pin_failures"`
	CaptchaRequired bool     `json:"captcha_required"` // an unlock must carry a captcha
	PausedUntil     app.Time `json:"paused_until"`
	UnlockedUntil   app.Time `json:"unlocked_until"`
	Blocked         bool     `json:"blocked"`       // blocked now
	BlockedUntil    app.Time `json:"blocked_until"` // end of the block in force
	NextBlockAt     app.Time `json:"next_block_at"` // next window start
}

// Unlocked is POST /parental/unlock.
type Unlocked struct {
	UnlockedUntil app.Time `json:"unlocked_until"`
}

// row is a subscriber's parental_controls row (zero when none).
type row struct {
	exists      bool
	windows     []aaa.ParentalWindow
	paused      time.Time
	unlocked    time.Time
	pinHash     string
	pinFailures int
	edgeJob     sql.NullInt64
}

func readRow(ctx context.Context, q app.Querier, uid int64) (*row, error) {
	r := &row{}
	var ws, paused, unlocked string
	err := q.QueryRowContext(ctx, `SELECT windows, COALESCE(paused_until, ''), COALESCE(unlocked_until, ''), pin_hash, pin_failures, edge_job_id
		FROM parental_controls WHERE user_id = ?`, uid).Scan(&ws, &paused, &unlocked, &r.pinHash, &r.pinFailures, &r.edgeJob)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r.exists = true
	if r.windows, err = aaa.ParseParentalWindows(ws); err != nil {
		return nil, fmt.Errorf("parental %d windows: %w", uid, err)
	}
	if paused != "" {
		if r.paused, err = app.ParseTime(paused, false); err != nil {
			return nil, err
		}
	}
	if unlocked != "" {
		if r.unlocked, err = app.ParseTime(unlocked, false); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *row) parental() *aaa.Parental {
	return &aaa.Parental{Windows: r.windows, PausedUntil: r.paused, UnlockedUntil: r.unlocked}
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return app.FormatTime(t)
}

// save writes the row (insert or update) with its next edge job: the old
// queued one is cancelled and a new one queued at the block in force
// (now) or the next window start.
func (r *row) save(ctx context.Context, tx *sql.Tx, t *app.Tenant, uid int64, now time.Time) error {
	if err := r.rearm(ctx, tx, t, uid, now); err != nil {
		return err
	}
	b, err := json.Marshal(r.windows)
	if err != nil {
		return err
	}
	if r.windows == nil {
		b = []byte("[]")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO parental_controls(user_id, windows, paused_until, unlocked_until, pin_hash, pin_failures, edge_job_id, updated_at)
		VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(user_id) DO UPDATE SET windows = excluded.windows, paused_until = excluded.paused_until,
		unlocked_until = excluded.unlocked_until, pin_hash = excluded.pin_hash, pin_failures = excluded.pin_failures,
		edge_job_id = excluded.edge_job_id, updated_at = excluded.updated_at`,
		uid, string(b), nullTime(r.paused), nullTime(r.unlocked), r.pinHash, r.pinFailures, r.edgeJob, app.FormatTime(now))
	return err
}

// rearm cancels the queued edge job and queues the next one.
func (r *row) rearm(ctx context.Context, tx *sql.Tx, t *app.Tenant, uid int64, now time.Time) error {
	if r.edgeJob.Valid {
		if err := app.CancelJob(ctx, tx, r.edgeJob.Int64); err != nil && app.AsError(err) == nil {
			return err
		}
		r.edgeJob = sql.NullInt64{}
	}
	at := nextEdge(r.parental(), now, app.TenantLocation(ctx, tx))
	if at.IsZero() {
		return nil
	}
	id, err := app.EnqueueJob(ctx, tx, EdgeJob, map[string]int64{"user_id": uid}, at, 0, 3)
	if err != nil {
		return err
	}
	r.edgeJob = sql.NullInt64{Int64: id, Valid: true}
	return nil
}

// nextEdge is when the edge job runs next: now when a block is in force
// (its sessions are cut at once), else the next window start (or zero).
func nextEdge(p *aaa.Parental, now time.Time, loc *time.Location) time.Time {
	if blocked, _ := p.Block(now, loc); blocked {
		return now
	}
	after := now
	if now.Before(p.UnlockedUntil) {
		after = p.UnlockedUntil.Add(-time.Second) // the block after the lifted one
	}
	return p.NextStart(after, loc)
}

func (r *row) state(ctx context.Context, q app.Querier, uid int64, now time.Time) *State {
	tz := app.SettingTimezone.GetOr(ctx, q)
	loc := app.TenantLocation(ctx, q)
	p := r.parental()
	s := &State{UserID: uid, Timezone: tz, Windows: []Window{}, PINSet: r.pinHash != "", PINFailures: r.pinFailures,
		CaptchaRequired: r.pinFailures >= captchaAfter}
	for _, w := range r.windows {
		s.Windows = append(s.Windows, windowOut(w))
	}
	if now.Before(r.paused) {
		s.PausedUntil = app.T(r.paused)
	}
	if now.Before(r.unlocked) {
		s.UnlockedUntil = app.T(r.unlocked)
	}
	blocked, until := p.Block(now, loc)
	s.Blocked = blocked
	if blocked {
		s.BlockedUntil = app.T(until)
	}
	if next := p.NextStart(now, loc); !next.IsZero() {
		s.NextBlockAt = app.T(next)
	}
	return s
}

func windowOut(w aaa.ParentalWindow) Window {
	out := Window{Weekdays: []string{}, Start: fmt.Sprintf("%02d:%02d", w.Start/60, w.Start%60), End: fmt.Sprintf("%02d:%02d", w.End/60, w.End%60)}
	if w.Mask != 127 {
		for i, d := range app.Weekdays {
			if w.Mask&(1<<i) != 0 {
				out.Weekdays = append(out.Weekdays, d)
			}
		}
	}
	return out
}

func parseWindows(in []Window) ([]aaa.ParentalWindow, error) {
	if len(in) > maxWindows {
		return nil, app.ErrValidation("too_many_windows", "windows").With("max", maxWindows)
	}
	out := []aaa.ParentalWindow{}
	for i, w := range in {
		field := fmt.Sprintf("windows[%d]", i)
		var pw aaa.ParentalWindow
		var err error
		if pw.Start, err = app.ParseTimeOfDay(w.Start, field+".start"); err != nil {
			return nil, err
		}
		if pw.End, err = app.ParseTimeOfDay(w.End, field+".end"); err != nil {
			return nil, err
		}
		for _, d := range w.Weekdays {
			k := -1
			for j, name := range app.Weekdays {
				if strings.EqualFold(strings.TrimSpace(d), name) {
					k = j
				}
			}
			if k < 0 {
				return nil, app.ErrValidation("invalid_weekday", field+".weekdays").With("value", d)
			}
			pw.Mask |= 1 << k
		}
		if pw.Mask == 0 {
			pw.Mask = 127
		}
		out = append(out, pw)
	}
	return out, nil
}

// subscriber checks the caller is a portal subscriber with the feature on.
func subscriber(ctx context.Context, act *app.Actor, f portal.Feature) (int64, error) {
	if act.Kind != app.CredSubscriber || act.SubscriberID == 0 {
		return 0, app.ErrForbidden("insufficient_permissions")
	}
	if err := portal.RequireFeature(ctx, act.Tenant, f); err != nil {
		return 0, err
	}
	return act.SubscriberID, nil
}

// Get is GET /parental.
func Get(ctx context.Context, act *app.Actor) (*State, error) {
	uid, err := subscriber(ctx, act, portal.FeatureParental)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *State
	err = t.Read(ctx, func(tx *sql.Tx) error {
		r, err := readRow(ctx, tx, uid)
		if err != nil {
			return err
		}
		out = r.state(ctx, tx, uid, t.Now())
		return nil
	})
	return out, err
}

// change runs one change of a subscriber's row in one transaction and
// answers the new state.
func change(ctx context.Context, t *app.Tenant, uid int64, fn func(r *row, now time.Time) error) (*State, error) {
	var out *State
	now := t.Now()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := readRow(ctx, tx, uid)
		if err != nil {
			return err
		}
		if err := fn(r, now); err != nil {
			return err
		}
		if err := r.save(ctx, tx, t, uid, now); err != nil {
			return err
		}
		out = r.state(ctx, tx, uid, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PutRules is PUT /parental/rules: the blocked windows, replacing the
// list. A window in force now disconnects the live sessions (edge job).
func PutRules(ctx context.Context, act *app.Actor, in RulesInput) (*State, error) {
	uid, err := subscriber(ctx, act, portal.FeatureParental)
	if err != nil {
		return nil, err
	}
	ws, err := parseWindows(in.Windows)
	if err != nil {
		return nil, err
	}
	return change(ctx, act.Tenant, uid, func(r *row, now time.Time) error {
		r.windows = ws
		return nil
	})
}

// Pause is POST /parental/pause: blocks now for minutes (0 ends a pause;
// a pause also ends an unlock in force).
func Pause(ctx context.Context, act *app.Actor, in PauseInput) (*State, error) {
	uid, err := subscriber(ctx, act, portal.FeatureParental)
	if err != nil {
		return nil, err
	}
	if in.Minutes == nil {
		return nil, app.ErrValidation("minutes_required", "minutes")
	}
	if *in.Minutes < 0 || *in.Minutes > maxPauseMinutes {
		return nil, app.ErrValidation("pause_minutes_out_of_range", "minutes").With("max", maxPauseMinutes)
	}
	return change(ctx, act.Tenant, uid, func(r *row, now time.Time) error {
		if *in.Minutes == 0 {
			r.paused = time.Time{}
			return nil
		}
		r.paused = now.Add(time.Duration(*in.Minutes) * time.Minute).Truncate(time.Second)
		r.unlocked = time.Time{}
		return nil
	})
}

func validPIN(pin, field string) error {
	if pin == "" {
		return app.ErrValidation("pin_required", field)
	}
	if len(pin) < pinMinLen || len(pin) > pinMaxLen {
		return app.ErrValidation("invalid_pin_format", field)
	}
	for _, c := range pin {
		if c < '0' || c > '9' {
			return app.ErrValidation("invalid_pin_format", field)
		}
	}
	return nil
}

// SetPIN is POST /parental/pin: sets the PIN, or changes it with the
// current one (400 invalid_pin naming current_pin otherwise).
func SetPIN(ctx context.Context, act *app.Actor, in PINInput) (*State, error) {
	uid, err := subscriber(ctx, act, portal.FeatureParental)
	if err != nil {
		return nil, err
	}
	if err := validPIN(in.PIN, "pin"); err != nil {
		return nil, err
	}
	hash := app.HashPassword(in.PIN)
	return change(ctx, act.Tenant, uid, func(r *row, now time.Time) error {
		if r.pinHash != "" {
			if in.CurrentPIN == "" {
				return app.ErrValidation("current_pin_required", "current_pin")
			}
			if !app.VerifyPassword(r.pinHash, in.CurrentPIN) {
				return app.ErrValidation("invalid_pin", "current_pin")
			}
		}
		r.pinHash, r.pinFailures = hash, 0
		return nil
	})
}

// Unlock is POST /parental/unlock (public): username and PIN lift the
// block in force until its end. Wrong PINs are counted (the only write of
// a refusal); from captchaAfter failures on a captcha is required.
func Unlock(ctx context.Context, t *app.Tenant, in UnlockInput) (*Unlocked, error) {
	if err := portal.RequireFeature(ctx, t, portal.FeatureParental); err != nil {
		return nil, err
	}
	username := strings.TrimSpace(in.Username)
	if username == "" {
		return nil, app.ErrValidation("username_required", "username")
	}
	if in.PIN == "" {
		return nil, app.ErrValidation("pin_required", "pin")
	}
	invalid := app.ErrUnauthorized("invalid_pin")
	u, err := subs.ReadName(ctx, t.DB.R, username)
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		app.VerifyPassword("", in.PIN) // the same work as a known name
		return nil, invalid
	}
	if err != nil {
		return nil, err
	}
	uid := u.ID
	r, err := readRow(ctx, t.DB.R, uid)
	if err != nil {
		return nil, err
	}
	if r.pinHash == "" {
		app.VerifyPassword("", in.PIN)
		return nil, invalid
	}
	if r.pinFailures >= captchaAfter {
		if err := portalentry.VerifyCaptcha(ctx, t, in.CaptchaID, in.CaptchaAnswer, in.IP); err != nil {
			return nil, err
		}
	}
	if !app.VerifyPassword(r.pinHash, in.PIN) {
		if err := t.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE parental_controls SET pin_failures = pin_failures + 1 WHERE user_id = ?`, uid)
			return err
		}); err != nil {
			return nil, err
		}
		return nil, invalid
	}
	var out Unlocked
	now := t.Now()
	err = t.Write(ctx, func(tx *sql.Tx) error {
		r, err := readRow(ctx, tx, uid)
		if err != nil {
			return err
		}
		blocked, until := r.parental().Block(now, app.TenantLocation(ctx, tx))
		if !blocked {
			return app.ErrConflict("not_blocked")
		}
		r.unlocked, r.pinFailures = until, 0
		if err := r.save(ctx, tx, t, uid, now); err != nil {
			return err
		}
		out.UnlockedUntil = app.T(until)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// runEdge is the job at a block start: it disconnects the subscriber's
// live sessions when blocked now and queues the next start. A job that is
// no longer the row's (the rules changed since) does nothing.
func runEdge(ctx context.Context, jc *app.JobContext) (any, error) {
	var p struct {
		UserID int64 `json:"user_id"`
	}
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	now := t.Now()
	var blocked bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := readRow(ctx, tx, p.UserID)
		if err != nil {
			return err
		}
		if !r.exists || !r.edgeJob.Valid || r.edgeJob.Int64 != jc.Job.ID {
			return nil
		}
		loc := app.TenantLocation(ctx, tx)
		pr := r.parental()
		var until time.Time
		blocked, until = pr.Block(now, loc)
		r.edgeJob = sql.NullInt64{}
		after := now
		if blocked {
			after = until.Add(-time.Second)
		}
		if next := pr.NextStart(after, loc); !next.IsZero() {
			id, err := app.EnqueueJob(ctx, tx, EdgeJob, map[string]int64{"user_id": p.UserID}, next, 0, 3)
			if err != nil {
				return err
			}
			r.edgeJob = sql.NullInt64{Int64: id, Valid: true}
		}
		_, err = tx.ExecContext(ctx, `UPDATE parental_controls SET edge_job_id = ? WHERE user_id = ?`, r.edgeJob, p.UserID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !blocked {
		return map[string]any{"blocked": false}, nil
	}
	n := 0
	if t.App.CanDisconnectUsers() {
		// Sessions that stay up are refused at their next login; an
		// unreachable NAS is recorded on the session by the RADIUS area.
		if n, err = t.App.DisconnectUser(ctx, t, p.UserID); err != nil && app.AsError(err) == nil {
			return nil, err
		}
	}
	return map[string]any{"blocked": true, "disconnected": n}, nil
}
