package tickets

// Replies: staff messages on a ticket, and macros (a reply and actions in one transaction).

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"xr/app"
)

// ReplyInput is a staff message: a public reply (the requester is told)
// or an internal note. body may be empty with canned_reply_id; state is
// an optional action applied after the message (e.g. "resolve").
type ReplyInput struct {
	Body          string  `json:"body"`
	Internal      bool    `json:"internal"`
	CannedReplyID *int64  `json:"canned_reply_id"`
	AttachmentIDs []int64 `json:"attachment_ids"`
	State         string  `json:"state"`
}

func vars(k Ticket, agent string) map[string]string {
	req := k.Requester.Name
	if req == "" {
		req = k.Requester.Username
	}
	if req == "" {
		req = k.Requester.Email
	}
	return map[string]string{"requester": req, "ticket_number": Number(k.ID), "agent": agent, "subject": k.Subject}
}

func agentName(ctx context.Context, q app.Querier, id int64) (string, error) {
	var name string
	err := q.QueryRowContext(ctx, `SELECT COALESCE(NULLIF(TRIM(firstname || ' ' || lastname), ''), username, email, '') FROM managers WHERE id = ?`, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return name, err
}

// addMessage writes a message on k in tx and moves the ticket.
func addMessage(ctx context.Context, tx *sql.Tx, t *app.Tenant, k *Ticket, internal bool, mgr, uid *int64, body string, attIDs []int64) (int64, error) {
	action := ActRequesterReply
	if mgr != nil {
		action = ActStaffReply
		if internal {
			action = ActStaffNote
		}
	}
	to, err := Transition(k.State, action, Move{})
	if err != nil {
		return 0, err
	}
	now := app.T(t.Now())
	r, err := tx.ExecContext(ctx, `INSERT INTO ticket_messages(ticket_id, internal, author_manager_id, author_user_id, body, created_at) VALUES (?,?,?,?,?,?)`,
		k.ID, internal, mgr, uid, body, now)
	if err != nil {
		return 0, err
	}
	mid, _ := r.LastInsertId()
	if err := attachTo(ctx, tx, k.ID, mid, internal, uid, attIDs); err != nil {
		return 0, err
	}
	set := map[string]any{"last_message_at": now, "message_count": k.MessageCount + 1}
	if mgr != nil && !internal && k.FirstRespondedAt.IsZero() {
		set["first_responded_at"] = now
	}
	if to != k.State {
		set["state"] = to
		switch to {
		case StateOpen:
			set["resolved_at"], set["snoozed_until"] = nil, nil
		case StatePending:
			set["snoozed_until"] = nil
		}
	}
	if err := update(ctx, tx, "tickets", k.ID, set); err != nil {
		return 0, err
	}
	from := k.State
	k.State = to
	return mid, announceMessage(ctx, tx, t, *k, from, mid, internal, mgr, uid, body)
}

// attachTo binds the uploaded attachments ids to message mid: a
// subscriber's own public uploads, or any staff upload (which takes the
// message's internal mark). An id that is not such an unbound upload of
// the ticket is 400 invalid_attachment.
func attachTo(ctx context.Context, tx *sql.Tx, ticketID, mid int64, internal bool, uid *int64, ids []int64) error {
	for _, aid := range ids {
		var res sql.Result
		var err error
		if uid != nil {
			res, err = tx.ExecContext(ctx, `UPDATE ticket_attachments SET message_id = ? WHERE id = ? AND ticket_id = ? AND message_id IS NULL AND uploaded_by_user_id = ? AND internal = 0`,
				mid, aid, ticketID, *uid)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE ticket_attachments SET message_id = ?, internal = ? WHERE id = ? AND ticket_id = ? AND message_id IS NULL AND uploaded_by_manager_id IS NOT NULL`,
				mid, internal, aid, ticketID)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return app.ErrValidation("invalid_attachment", "attachment_ids").With("id", aid)
		}
	}
	return nil
}

// announceMessage emits ticket.replied for a public message and
// ticket.state_changed when it moved the ticket from from, and tells the
// requester of a staff reply (mgr, uid: the author).
func announceMessage(ctx context.Context, tx *sql.Tx, t *app.Tenant, k Ticket, from string, mid int64, internal bool, mgr, uid *int64, body string) error {
	if !internal {
		who := "staff"
		if uid != nil {
			who = "subscriber"
		}
		if err := emit(ctx, tx, "ticket.replied", k, eventData{MessageID: mid, Author: who}); err != nil {
			return err
		}
	}
	if k.State != from {
		if err := emit(ctx, tx, "ticket.state_changed", k, eventData{From: from}); err != nil {
			return err
		}
	}
	if mgr != nil && !internal {
		return notifyReply(ctx, tx, t, k, mid, body)
	}
	return nil
}

// Reply adds a staff reply or note to a ticket.
func Reply(ctx context.Context, act *app.Actor, id int64, in ReplyInput) (*Detail, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	if in.State != "" && !oneOf(in.State, StateActions) || in.State == ActSnooze {
		return nil, app.ErrValidation("invalid_enum", "state").With("allowed", StateActions)
	}
	if in.CannedReplyID == nil && strings.TrimSpace(in.Body) == "" {
		return nil, app.ErrValidation("body_required", "body")
	}
	if len(in.Body) > maxBody {
		return nil, app.ErrValidation("too_long", "body")
	}
	_, err := withTicket(ctx, act, id, func(tx *sql.Tx, k *Ticket) error {
		body := in.Body
		if in.CannedReplyID != nil {
			c, err := scanCanned(tx.QueryRowContext(ctx, `SELECT `+cannedCols+` FROM ticket_canned_replies WHERE id = ?`, *in.CannedReplyID))
			if err != nil {
				return app.ErrValidation("invalid_canned_reply", "canned_reply_id")
			}
			agent, err := agentName(ctx, tx, act.ManagerID)
			if err != nil {
				return err
			}
			rendered := Render(c.Body, vars(*k, agent))
			if strings.TrimSpace(body) == "" {
				body = rendered
			} else {
				body = strings.TrimRight(body, "\n") + "\n\n" + rendered
			}
		}
		if _, err := addMessage(ctx, tx, act.Tenant, k, in.Internal, &act.ManagerID, nil, body, in.AttachmentIDs); err != nil {
			return err
		}
		if in.State != "" {
			return setState(ctx, tx, k, in.State, time.Time{}, act.Tenant.Now())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return detail(ctx, act, id)
}

// ApplyMacro applies a macro to a ticket in one transaction: its reply
// (variables rendered), then its actions.
func ApplyMacro(ctx context.Context, act *app.Actor, id, macroID int64) (*Detail, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	_, err := withTicket(ctx, act, id, func(tx *sql.Tx, k *Ticket) error {
		m, err := scanMacro(tx.QueryRowContext(ctx, `SELECT `+macroCols+` FROM ticket_macros WHERE id = ?`, macroID))
		if err != nil {
			return err
		}
		a := m.Actions
		if a.AssigneeID != nil && !act.Can(PermTicketsAssign) {
			return app.ErrForbidden("insufficient_permissions")
		}
		if strings.TrimSpace(m.Body) != "" {
			agent, err := agentName(ctx, tx, act.ManagerID)
			if err != nil {
				return err
			}
			if _, err := addMessage(ctx, tx, act.Tenant, k, m.Internal, &act.ManagerID, nil, Render(m.Body, vars(*k, agent)), nil); err != nil {
				return err
			}
		}
		if err := applyFields(ctx, tx, k, a); err != nil {
			return err
		}
		if a.AssigneeID != nil {
			if err := assign(ctx, tx, act, k, a.AssigneeID); err != nil {
				return err
			}
		}
		if a.State != "" {
			return setState(ctx, tx, k, a.State, time.Time{}, act.Tenant.Now())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return detail(ctx, act, id)
}

// applyFields applies a macro's priority, category and tag changes (409
// ticket_closed on a closed ticket when there is any).
func applyFields(ctx context.Context, tx *sql.Tx, k *Ticket, a MacroActions) error {
	set := map[string]any{}
	if a.Priority != "" {
		set["priority"] = a.Priority
	}
	if a.CategoryID != nil {
		set["category_id"] = *a.CategoryID
	}
	if len(a.AddTags) > 0 || len(a.RemoveTags) > 0 {
		drop := map[string]bool{}
		for _, t := range a.RemoveTags {
			drop[t] = true
		}
		tags := []string{}
		for _, t := range append(k.Tags, a.AddTags...) {
			if !drop[t] {
				tags = append(tags, t)
			}
		}
		tags, err := normTags(tags)
		if err != nil {
			return err
		}
		set["tags"] = jsonText(tags)
	}
	if len(set) == 0 {
		return nil
	}
	if k.State == StateClosed {
		return app.ErrConflict("ticket_closed")
	}
	return update(ctx, tx, "tickets", k.ID, set)
}
