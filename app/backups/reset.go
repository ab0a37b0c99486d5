package backups

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"xr/app"
	"xr/app/identity"
)

// What a factory reset keeps. Tables kept whole: the file's marker, the
// settings and the schedules (re-armed). Tables kept in part: the owner
// (the root manager) and its credentials, the system roles.
var (
	keepTables    = map[string]bool{"meta": true, "settings": true, "schedules": true, "schema_migrations": true}
	ownerRowTable = map[string]bool{"auth_sessions": true, "recovery_codes": true, "api_tokens": true, "push_tokens": true}
	partialTables = map[string]bool{"managers": true, "manager_tree": true, "manager_roles": true, "roles": true, "role_permissions": true}
)

// ResetCount is one kind of record a factory reset deletes.
type ResetCount struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
}

// ResetPreview is GET /admin/tools/factory-reset/preview.
type ResetPreview struct {
	Deleted []ResetCount `json:"deleted"`
	Total   int64        `json:"total"`
	Kept    ResetKept    `json:"kept"`
}

// ResetKept is what survives a factory reset.
type ResetKept struct {
	Owner       ResetOwner `json:"owner"`
	License     ResetLic   `json:"license"`
	Settings    bool       `json:"settings"`
	SystemRoles int64      `json:"system_roles"`
	Schedules   int64      `json:"schedules"`
	Backups     int64      `json:"backups"`
}

// ResetOwner is the account a factory reset keeps.
type ResetOwner struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Email    string `json:"email"`
}

// ResetLic is the licence, which lives in the instance registry.
type ResetLic struct {
	Tier      string   `json:"tier"`
	MaxUsers  *int64   `json:"max_users"`
	ExpiresAt app.Time `json:"expires_at"`
}

// ResetPreviewOf is GET /admin/tools/factory-reset/preview.
func ResetPreviewOf(ctx context.Context, act *app.Actor) (*ResetPreview, error) {
	if err := authorize(act, PermToolsFactoryReset); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out *ResetPreview
	err := t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = preview(ctx, tx, t)
		return err
	})
	return out, err
}

func preview(ctx context.Context, tx *sql.Tx, t *app.Tenant) (*ResetPreview, error) {
	p := &ResetPreview{Deleted: []ResetCount{}, Kept: ResetKept{Settings: true,
		License: ResetLic{Tier: t.Tier(), MaxUsers: t.MaxUsers, ExpiresAt: t.LicenseExpiresAt}}}
	owner, err := ownerOf(ctx, tx)
	if err != nil {
		return nil, err
	}
	var email sql.NullString
	var username sql.NullString
	if err := tx.QueryRowContext(ctx, `SELECT id, username, email FROM managers WHERE id = ?`, owner).Scan(&p.Kept.Owner.ID, &username, &email); err != nil {
		return nil, err
	}
	p.Kept.Owner.Username, p.Kept.Owner.Email = username.String, email.String
	names, err := tableNames(ctx, tx)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if keepTables[n] {
			continue
		}
		q := `SELECT COUNT(*) FROM "` + n + `"`
		var args []any
		switch {
		case n == "managers":
			q, args = `SELECT COUNT(*) FROM managers WHERE id <> ?`, []any{owner}
		case n == "roles":
			q = `SELECT COUNT(*) FROM roles WHERE is_system = 0`
		case n == "manager_tree", n == "manager_roles", n == "role_permissions":
			continue // follow managers and roles
		case ownerRowTable[n]:
			q, args = `SELECT COUNT(*) FROM "`+n+`" WHERE manager_id <> ?`, []any{owner}
		}
		var k int64
		if err := tx.QueryRowContext(ctx, q, args...).Scan(&k); err != nil {
			return nil, err
		}
		if k > 0 {
			p.Deleted = append(p.Deleted, ResetCount{Kind: n, Count: k})
			p.Total += k
		}
	}
	sort.Slice(p.Deleted, func(i, j int) bool { return p.Deleted[i].Kind < p.Deleted[j].Kind })
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM roles WHERE is_system = 1`).Scan(&p.Kept.SystemRoles); err != nil {
		return nil, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schedules`).Scan(&p.Kept.Schedules); err != nil {
		return nil, err
	}
	if err := t.App.Inst.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM backups WHERE tenant_id = ?`, t.ID).Scan(&p.Kept.Backups); err != nil {
		return nil, err
	}
	return p, nil
}

func ownerOf(ctx context.Context, q app.Querier) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM managers WHERE parent_id IS NULL ORDER BY id LIMIT 1`).Scan(&id)
	return id, err
}

// ResetInput is POST /admin/tools/factory-reset.
type ResetInput struct {
	Password  string `json:"password"`   // the caller's own, re-checked
	RequestID string `json:"request_id"` // optional; a replay answers the first outcome
}

// ResetResult is what a factory reset did.
type ResetResult struct {
	SafetyBackupID int64        `json:"safety_backup_id"`
	Deleted        []ResetCount `json:"deleted"`
	Total          int64        `json:"total"`
	ResetAt        app.Time     `json:"reset_at"`
	Replay         bool         `json:"replay"`
}

// FactoryReset empties the tenant after re-checking the caller's password
// and taking a safety backup: every record goes except the owner account
// (its sign-in and credentials), the system roles, the settings, the
// schedules (their next runs queued again) and, outside the file, the
// licence, the backups and the destinations. One transaction.
func FactoryReset(ctx context.Context, act *app.Actor, in ResetInput) (*ResetResult, error) {
	if err := authorize(act, PermToolsFactoryReset); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, false); err != nil {
		return nil, err
	}
	t := act.Tenant
	if err := identity.CheckOwnPassword(ctx, t.App, act, in.Password); err != nil {
		return nil, err
	}
	mu := opLock(t.App)
	mu.Lock()
	defer mu.Unlock()
	const subject = "tools/factory-reset"
	var out ResetResult
	if replay, err := opReplay(ctx, t, in.RequestID, subject, &out); err != nil || replay {
		out.Replay = replay
		return &out, err
	}
	// Writes wait out the reset as they wait out a restore (restore.go).
	p, err := t.DB.Pause(ctx, "reset_in_progress", pauseHint)
	if err != nil {
		return nil, err
	}
	defer p.Resume()
	pctx := p.Bind(ctx)
	by := act.ManagerID
	safety, err := Take(pctx, t, TakeOptions{Kind: KindSafety, CreatedBy: &by})
	if err != nil {
		return nil, err
	}
	if safety.Verification.State != "ok" {
		return nil, app.ErrConflict("backup_not_verified")
	}
	now := app.ScheduleNow(t.App)
	err = t.Write(pctx, func(tx *sql.Tx) error {
		p, err := preview(ctx, tx, t)
		if err != nil {
			return err
		}
		out = ResetResult{SafetyBackupID: safety.ID, Deleted: p.Deleted, Total: p.Total, ResetAt: app.T(now)}
		return empty(ctx, tx, now)
	})
	if err != nil {
		return nil, err
	}
	p.Replaced()
	p.Resume()
	// The NAS rows went with the file's content: the instance index follows.
	if err := t.App.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM nas_index WHERE tenant_id = ?`, t.ID)
		return err
	}); err != nil {
		return nil, err
	}
	t.App.DropGrants(t.Slug)
	if err := t.App.Reload(ctx); err != nil {
		return nil, err
	}
	if err := opRecord(ctx, t, in.RequestID, subject, out); err != nil {
		return nil, err
	}
	return &out, nil
}

// empty deletes everything a factory reset deletes, in tx. Append-only
// guards (BEFORE DELETE triggers) are dropped for the statement and put
// back; foreign keys are checked at commit.
func empty(ctx context.Context, tx *sql.Tx, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
		return err
	}
	owner, err := ownerOf(ctx, tx)
	if err != nil {
		return err
	}
	names, err := tableNames(ctx, tx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if keepTables[n] || partialTables[n] || n == "authz_changes" {
			continue
		}
		where, args := "", []any(nil)
		if ownerRowTable[n] {
			where, args = ` WHERE manager_id <> ?`, []any{owner}
		}
		if err := deleteGuarded(ctx, tx, n, where, args...); err != nil {
			return err
		}
	}
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`DELETE FROM manager_roles WHERE manager_id <> ? OR role_id IN (SELECT id FROM roles WHERE is_system = 0)`, []any{owner}},
		{`DELETE FROM manager_tree WHERE ancestor_id <> ? OR descendant_id <> ?`, []any{owner, owner}},
		{`DELETE FROM role_permissions WHERE role_id IN (SELECT id FROM roles WHERE is_system = 0)`, nil},
		{`DELETE FROM roles WHERE is_system = 0`, nil},
		{`UPDATE managers SET group_id = NULL, balance = 0, points_balance = 0 WHERE id = ?`, []any{owner}},
	} {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("factory reset: %s: %w", s.q, err)
		}
	}
	if err := deleteGuarded(ctx, tx, "managers", ` WHERE id <> ?`, owner); err != nil {
		return err
	}
	return app.RearmSchedules(ctx, tx, now)
}

// deleteGuarded deletes rows of table, lifting its BEFORE DELETE triggers
// (append-only guards) for the statement.
func deleteGuarded(ctx context.Context, tx *sql.Tx, table, where string, args ...any) error {
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? AND sql LIKE '%BEFORE DELETE%'`, table)
	if err != nil {
		return err
	}
	type trig struct{ name, sql string }
	var guards []trig
	for rows.Next() {
		var g trig
		if err := rows.Scan(&g.name, &g.sql); err != nil {
			rows.Close()
			return err
		}
		guards = append(guards, g)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, g := range guards {
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER "`+g.name+`"`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM "`+table+`"`+where, args...); err != nil {
		return fmt.Errorf("factory reset: empty %s: %w", table, err)
	}
	for _, g := range guards {
		if _, err := tx.ExecContext(ctx, g.sql); err != nil {
			return err
		}
	}
	return nil
}
