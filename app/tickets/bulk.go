package tickets

// Bulk actions on tickets, each ticket on its own.

import (
	"context"
	"database/sql"
	"time"

	"xr/app"
)

func bulk(ctx context.Context, act *app.Actor, ids []int64, fn func(tx *sql.Tx, k *Ticket) error) (app.BulkResult, error) {
	in := app.BulkIDs{IDs: ids}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, ids, func(ctx context.Context, id int64) error {
		_, err := withTicket(ctx, act, id, fn)
		return err
	}), nil
}

// BulkClose closes tickets.
func BulkClose(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, ActClose, time.Time{}, act.Tenant.Now())
	})
}

// BulkResolve resolves tickets.
func BulkResolve(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, ActResolve, time.Time{}, act.Tenant.Now())
	})
}

// BulkReopen reopens resolved tickets and closed ones within the reopen window.
func BulkReopen(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, ActBulkReopen, time.Time{}, act.Tenant.Now())
	})
}

// BulkSnoozeInput snoozes tickets until a time.
type BulkSnoozeInput struct {
	IDs   []int64        `json:"ids"`
	Until app.DateOrTime `json:"until"`
}

// BulkSnooze snoozes tickets.
func BulkSnooze(ctx context.Context, act *app.Actor, in BulkSnoozeInput) (app.BulkResult, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return app.BulkResult{}, err
	}
	until := in.Until.Time.Time
	if until.IsZero() {
		return app.BulkResult{}, app.ErrValidation("until_required", "until")
	}
	if !until.After(act.Tenant.Now()) {
		return app.BulkResult{}, app.ErrValidation("snooze_in_past", "until")
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error { return setState(ctx, tx, k, ActSnooze, until, act.Tenant.Now()) })
}

// BulkAssignInput assigns tickets (assignee_id null unassigns).
type BulkAssignInput struct {
	IDs        []int64        `json:"ids"`
	AssigneeID app.Opt[int64] `json:"assignee_id"`
}

// BulkAssign assigns tickets to one eligible manager.
func BulkAssign(ctx context.Context, act *app.Actor, in BulkAssignInput) (app.BulkResult, error) {
	if err := act.Require(PermTicketsAssign); err != nil {
		return app.BulkResult{}, err
	}
	if !in.AssigneeID.Set {
		return app.BulkResult{}, app.ErrValidation("assignee_required", "assignee_id")
	}
	var a *int64
	if !in.AssigneeID.Null {
		a = &in.AssigneeID.V
		if err := checkAssignee(ctx, act.Tenant.DB.R, act, *a); err != nil {
			return app.BulkResult{}, err
		}
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		if k.State == StateClosed {
			return app.ErrConflict("ticket_closed")
		}
		return assign(ctx, tx, act, k, a)
	})
}

// BulkTeamInput sets the team of tickets (null clears).
type BulkTeamInput struct {
	IDs    []int64        `json:"ids"`
	TeamID app.Opt[int64] `json:"team_id"`
}

// BulkTeam sets tickets' team.
func BulkTeam(ctx context.Context, act *app.Actor, in BulkTeamInput) (app.BulkResult, error) {
	if err := act.Require(PermTicketsAssign); err != nil {
		return app.BulkResult{}, err
	}
	if !in.TeamID.Set {
		return app.BulkResult{}, app.ErrValidation("team_required", "team_id")
	}
	if err := checkTeam(ctx, act.Tenant.DB.R, in.TeamID, "team_id"); err != nil {
		return app.BulkResult{}, err
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		if k.State == StateClosed {
			return app.ErrConflict("ticket_closed")
		}
		return update(ctx, tx, "tickets", k.ID, map[string]any{"team_id": optNull(in.TeamID)})
	})
}

// BulkPriorityInput sets the priority of tickets.
type BulkPriorityInput struct {
	IDs      []int64  `json:"ids"`
	Priority Priority `json:"priority"`
}

// BulkPriority sets tickets' priority (due times recomputed).
func BulkPriority(ctx context.Context, act *app.Actor, in BulkPriorityInput) (app.BulkResult, error) {
	if err := act.Require(PermTicketsAssign); err != nil {
		return app.BulkResult{}, err
	}
	if in.Priority == "" {
		return app.BulkResult{}, app.ErrValidation("priority_required", "priority")
	}
	p := app.Opt[Priority]{Set: true, V: in.Priority}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return patchIn(ctx, tx, k, UpdateInput{Priority: p})
	})
}

// BulkCategoryInput sets the category of tickets (null clears).
type BulkCategoryInput struct {
	IDs        []int64        `json:"ids"`
	CategoryID app.Opt[int64] `json:"category_id"`
}

// BulkCategory sets tickets' category (custom values of the old one are dropped).
func BulkCategory(ctx context.Context, act *app.Actor, in BulkCategoryInput) (app.BulkResult, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return app.BulkResult{}, err
	}
	if !in.CategoryID.Set {
		return app.BulkResult{}, app.ErrValidation("category_required", "category_id")
	}
	if !in.CategoryID.Null {
		if c, err := getCategory(ctx, act.Tenant.DB.R, in.CategoryID.V); err != nil || !c.Enabled {
			return app.BulkResult{}, app.ErrValidation("invalid_category", "category_id")
		}
	}
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return patchIn(ctx, tx, k, UpdateInput{CategoryID: in.CategoryID})
	})
}

// patchIn is Update's effect for bulk rows (priority or category).
func patchIn(ctx context.Context, tx *sql.Tx, k *Ticket, in UpdateInput) error {
	if k.State == StateClosed {
		return app.ErrConflict("ticket_closed")
	}
	set := map[string]any{}
	prio, cat := k.Priority, k.CategoryID
	if in.Priority.Set {
		prio = string(in.Priority.V)
		set["priority"] = prio
	}
	if in.CategoryID.Set {
		cat = nil
		if !in.CategoryID.Null {
			cat = &in.CategoryID.V
		}
		set["category_id"] = cat
		custom, err := validateCustom(ctx, tx, cat, nil, nil)
		if err != nil {
			return app.ErrConflict("category_fields_required")
		}
		set["custom_fields"] = custom
	}
	first, res, err := dueTimes(ctx, tx, prio, cat, k.CreatedAt)
	if err != nil {
		return err
	}
	set["first_response_due"], set["resolution_due"] = first, res
	return update(ctx, tx, "tickets", k.ID, set)
}
