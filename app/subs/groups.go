package subs

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"xr/app"
	"xr/db"
)

// Group is a subscriber group (a label operators filter and act on).
type Group struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	UsersCount  int64    `json:"users_count"`
	CreatedAt   app.Time `json:"created_at"`
	UpdatedAt   app.Time `json:"updated_at"`
}

// GroupInput creates or patches a group.
type GroupInput struct {
	Name        app.Opt[string] `json:"name"`
	Description app.Opt[string] `json:"description"`
}

const groupCols = `g.id, g.name, g.description, (SELECT COUNT(*) FROM users u WHERE u.group_id = g.id AND u.deleted_at IS NULL), g.created_at, g.updated_at`

func scanGroup(row interface{ Scan(...any) error }) (*Group, error) {
	g := &Group{}
	err := row.Scan(&g.ID, &g.Name, &g.Description, &g.UsersCount, &g.CreatedAt, &g.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return g, err
}

func listGroups(ctx context.Context, q app.Querier) ([]Group, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+groupCols+` FROM user_groups g ORDER BY g.name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *g)
	}
	return out, rows.Err()
}

func requireGroup(ctx context.Context, q app.Querier, id int64) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM user_groups WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrValidation("group_not_found", "group_id")
	}
	return err
}

// ListGroups lists every subscriber group (one page; users_count counts
// the whole tenant).
func ListGroups(ctx context.Context, act *app.Actor) ([]Group, error) {
	if err := act.Require(PermGroupsAssign, PermGroupsManage); err != nil {
		return nil, err
	}
	return listGroups(ctx, act.Tenant.DB.R)
}

func groupConflict(err error) error {
	if db.IsUnique(err) {
		return app.ErrConflict("name_taken").With("field", "name")
	}
	return err
}

// CreateGroup adds a group.
func CreateGroup(ctx context.Context, act *app.Actor, in GroupInput) (*Group, error) {
	if err := act.Require(PermGroupsManage); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(in.Name.V)
	if name == "" {
		return nil, app.ErrValidation("name_required", "name")
	}
	if len(name) > 128 {
		return nil, app.ErrValidation("too_long", "name")
	}
	var g *Group
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := nowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO user_groups(name, description, created_at, updated_at) VALUES (?,?,?,?)`, name, in.Description.V, now, now)
		if err != nil {
			return groupConflict(err)
		}
		id, _ := r.LastInsertId()
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM user_groups g WHERE g.id = ?`, id))
		return err
	})
	return g, err
}

// UpdateGroup renames or re-describes a group.
func UpdateGroup(ctx context.Context, act *app.Actor, id int64, in GroupInput) (*Group, error) {
	if err := act.Require(PermGroupsManage); err != nil {
		return nil, err
	}
	if in.Name.Set && (in.Name.Null || strings.TrimSpace(in.Name.V) == "" || len(in.Name.V) > 128) {
		return nil, app.ErrValidation("invalid_name", "name")
	}
	var g *Group
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := requireGroup(ctx, tx, id); err != nil {
			return app.ErrNotFound()
		}
		var p app.Patch
		app.SetOptOrZero(&p, "name", in.Name, func(v string) any { return strings.TrimSpace(v) })
		app.SetOptOrZero(&p, "description", in.Description, func(v string) any { return v })
		if _, err := p.Exec(ctx, tx, "user_groups", id, nowText()); err != nil {
			return groupConflict(err)
		}
		var err error
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupCols+` FROM user_groups g WHERE g.id = ?`, id))
		return err
	})
	return g, err
}

// DeleteGroup removes a group; its subscribers become ungrouped.
func DeleteGroup(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermGroupsManage); err != nil {
		return err
	}
	return act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}
