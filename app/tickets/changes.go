package tickets

// Changing a ticket: its state, its fields, its assignee.

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"xr/app"
)

// setState moves k by action in tx (until: for snooze) and records it.
func setState(ctx context.Context, tx *sql.Tx, k *Ticket, action string, until, now time.Time) error {
	days, err := SettingTicketsReopenDays.Get(ctx, tx)
	if err != nil {
		return err
	}
	to, err := Transition(k.State, action, Move{ClosedAt: k.ClosedAt.Time, Now: now, ReopenDays: int(days)})
	if err != nil {
		return err
	}
	from := k.State
	if to == from && action != ActSnooze {
		return nil
	}
	nowT := app.T(now)
	set := map[string]any{"state": to}
	switch to {
	case StateSnoozed:
		if until.IsZero() {
			return app.ErrValidation("until_required", "until")
		}
		if !until.After(now) {
			return app.ErrValidation("snooze_in_past", "until")
		}
		set["snoozed_until"] = app.T(until)
		if _, err := app.EnqueueJob(ctx, tx, jobWake, wakePayload{TicketID: k.ID}, until, 0, 3); err != nil {
			return err
		}
	case StateResolved:
		set["resolved_at"], set["snoozed_until"] = nowT, nil
	case StateClosed:
		set["closed_at"], set["snoozed_until"] = nowT, nil
	case StateOpen:
		set["resolved_at"], set["closed_at"], set["snoozed_until"] = nil, nil, nil
	default:
		set["snoozed_until"] = nil
	}
	if err := update(ctx, tx, "tickets", k.ID, set); err != nil {
		return err
	}
	k.State = to
	if to != from {
		return emit(ctx, tx, "ticket.state_changed", *k, eventData{From: from})
	}
	return nil
}

// StateInput asks for a state action (open, pend, snooze, resolve, close, reopen).
type StateInput struct {
	Action string         `json:"action"`
	Until  app.DateOrTime `json:"until"`
}

func (in *StateInput) validate() error {
	if in.Action == "" {
		return app.ErrValidation("action_required", "action")
	}
	if !oneOf(in.Action, StateActions) {
		return app.ErrValidation("invalid_enum", "action").With("allowed", StateActions)
	}
	return nil
}

// withTicket runs fn on ticket id (in act's scope) in one write and
// returns the ticket after.
func withTicket(ctx context.Context, act *app.Actor, id int64, fn func(tx *sql.Tx, k *Ticket) error) (*Ticket, error) {
	var k Ticket
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		var err error
		if k, err = loadTicket(ctx, tx, act, id); err != nil {
			return err
		}
		if err := fn(tx, &k); err != nil {
			return err
		}
		k, err = scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ?`, id), act.Tenant.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return &k, nil
}

// ChangeState applies a state action to one ticket (409 for a move the
// state machine forbids).
func ChangeState(ctx context.Context, act *app.Actor, id int64, in StateInput) (*Ticket, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	return withTicket(ctx, act, id, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, in.Action, in.Until.Time.Time, act.Tenant.Now())
	})
}

// UpdateInput patches a ticket's fields.
type UpdateInput struct {
	Subject      app.Opt[string]            `json:"subject"`
	Priority     app.Opt[Priority]          `json:"priority"`
	CategoryID   app.Opt[int64]             `json:"category_id"`
	Tags         app.Opt[[]string]          `json:"tags"`
	CustomFields map[string]json.RawMessage `json:"custom_fields"`
	Spam         app.Opt[bool]              `json:"spam"`
}

// Update patches subject, priority, category, tags, custom fields or the
// spam mark; a new priority or category recomputes the SLA due times from
// the ticket's creation.
func Update(ctx context.Context, act *app.Actor, id int64, in UpdateInput) (*Ticket, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	tags, err := in.check()
	if err != nil {
		return nil, err
	}
	return withTicket(ctx, act, id, func(tx *sql.Tx, k *Ticket) error {
		if k.State == StateClosed {
			return app.ErrConflict("ticket_closed")
		}
		set := map[string]any{}
		if in.Subject.Set {
			set["subject"] = in.Subject.V
		}
		if in.Tags.Set {
			set["tags"] = jsonText(tags)
		}
		if in.Spam.Set {
			set["spam"] = in.Spam.V
		}
		if err := in.setCategory(ctx, tx, k, set); err != nil {
			return err
		}
		if len(set) == 0 {
			return nil
		}
		return update(ctx, tx, "tickets", k.ID, set)
	})
}

// check validates the fields that need no ticket (400s): the subject is
// trimmed, the tags normalised.
func (in *UpdateInput) check() (tags []string, err error) {
	if in.Subject.Set {
		if in.Subject.V, err = checkText(in.Subject.V, "x"); err != nil {
			return nil, err
		}
	}
	if in.Priority.Set && in.Priority.Null {
		return nil, app.ErrValidation("invalid_enum", "priority").With("allowed", Priorities)
	}
	if in.Tags.Set {
		return normTags(in.Tags.V)
	}
	return nil, nil
}

// setCategory adds to set the category, the custom fields checked against
// it, the priority and the SLA due times they imply.
func (in *UpdateInput) setCategory(ctx context.Context, tx *sql.Tx, k *Ticket, set map[string]any) error {
	cat := k.CategoryID
	if in.CategoryID.Set {
		cat = nil
		if !in.CategoryID.Null {
			if c, err := getCategory(ctx, tx, in.CategoryID.V); err != nil || !c.Enabled {
				return app.ErrValidation("invalid_category", "category_id")
			}
			cat = &in.CategoryID.V
		}
		set["category_id"] = cat
	}
	if in.CategoryID.Set || in.CustomFields != nil {
		var existing map[string]json.RawMessage
		if !in.CategoryID.Set {
			if err := json.Unmarshal(k.CustomFields, &existing); err != nil {
				return err
			}
		}
		custom, err := validateCustom(ctx, tx, cat, in.CustomFields, existing)
		if err != nil {
			return err
		}
		set["custom_fields"] = custom
	}
	prio := k.Priority
	if in.Priority.Set {
		prio = string(in.Priority.V)
		set["priority"] = prio
	}
	if in.Priority.Set || in.CategoryID.Set {
		first, res, err := dueTimes(ctx, tx, prio, cat, k.CreatedAt)
		if err != nil {
			return err
		}
		set["first_response_due"], set["resolution_due"] = first, res
	}
	return nil
}

// AssignInput sets the assignee and/or team (null clears).
type AssignInput struct {
	AssigneeID app.Opt[int64] `json:"assignee_id"`
	TeamID     app.Opt[int64] `json:"team_id"`
}

func assign(ctx context.Context, tx *sql.Tx, act *app.Actor, k *Ticket, assignee *int64) error {
	if assignee != nil {
		if err := checkAssignee(ctx, tx, act, *assignee); err != nil {
			return err
		}
	}
	if assignee == nil && k.AssigneeID == nil || assignee != nil && k.AssigneeID != nil && *assignee == *k.AssigneeID {
		return nil
	}
	var at any
	if assignee != nil {
		at = app.T(act.Tenant.Now())
	}
	if err := update(ctx, tx, "tickets", k.ID, map[string]any{"assignee_id": assignee, "assigned_at": at}); err != nil {
		return err
	}
	k.AssigneeID = assignee
	if assignee == nil {
		return nil
	}
	if err := emit(ctx, tx, "ticket.assigned", *k, eventData{}); err != nil {
		return err
	}
	return notifyAssigned(ctx, tx, act.Tenant, *k)
}

// Assign sets a ticket's assignee (an eligible manager in act's scope) and team.
func Assign(ctx context.Context, act *app.Actor, id int64, in AssignInput) (*Ticket, error) {
	if err := act.Require(PermTicketsAssign); err != nil {
		return nil, err
	}
	if !in.AssigneeID.Set && !in.TeamID.Set {
		return nil, app.ErrValidation("assignee_required", "assignee_id")
	}
	return withTicket(ctx, act, id, func(tx *sql.Tx, k *Ticket) error {
		if k.State == StateClosed {
			return app.ErrConflict("ticket_closed")
		}
		if in.TeamID.Set {
			if err := checkTeam(ctx, tx, in.TeamID, "team_id"); err != nil {
				return err
			}
			if err := update(ctx, tx, "tickets", k.ID, map[string]any{"team_id": optNull(in.TeamID)}); err != nil {
				return err
			}
		}
		if in.AssigneeID.Set {
			var a *int64
			if !in.AssigneeID.Null {
				a = &in.AssigneeID.V
			}
			return assign(ctx, tx, act, k, a)
		}
		return nil
	})
}
