// Package tickets is the support helpdesk: tickets opened by staff or by
// subscribers on the portal, their public replies and internal notes,
// attachments (through the tenant file store, app/files), categories with
// custom fields, canned replies, macros, SLA calendars and policies,
// assignment strategies and a blocklist. The state machine is in state.go,
// business-time arithmetic in sla.go.
//
// Scope: a tenant-wide caller sees every ticket; any other manager sees the
// tickets of subscribers in its subtree, the tickets assigned to it, and
// tickets with no subscriber opened by a manager of its subtree. Outside
// that a ticket answers exactly like a missing one.
package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"xr/app"
)

// Priorities in ascending order.
var Priorities = []string{"low", "normal", "high", "urgent"}

// Priority is a JSON enum of Priorities.
type Priority string

func (p *Priority) UnmarshalJSON(b []byte) error {
	s, err := app.ParseEnum(b, Priorities...)
	*p = Priority(s)
	return err
}

// Requester is who asked: a subscriber, or an email for a ticket opened
// by staff for someone.
type Requester struct {
	UserID   *int64 `json:"user_id"`
	Username string `json:"username"`
	Email    string `json:"email"`
	Name     string `json:"name"`
}

// Ticket is one ticket as lists show it.
type Ticket struct {
	ID               int64           `json:"id"`
	Number           string          `json:"number"`
	Subject          string          `json:"subject"`
	CategoryID       *int64          `json:"category_id"`
	CategoryName     string          `json:"category_name"`
	Priority         string          `json:"priority"`
	State            string          `json:"state"`
	SnoozedUntil     app.Time        `json:"snoozed_until"`
	Requester        Requester       `json:"requester"`
	UserID           *int64          `json:"user_id"`
	AssigneeID       *int64          `json:"assignee_id"`
	AssigneeName     string          `json:"assignee_name"`
	TeamID           *int64          `json:"team_id"`
	Tags             []string        `json:"tags"`
	CustomFields     json.RawMessage `json:"custom_fields"`
	Spam             bool            `json:"spam"`
	Channel          string          `json:"channel"`
	FirstResponseDue app.Time        `json:"first_response_due"`
	ResolutionDue    app.Time        `json:"resolution_due"`
	FirstRespondedAt app.Time        `json:"first_responded_at"`
	ResolvedAt       app.Time        `json:"resolved_at"`
	ClosedAt         app.Time        `json:"closed_at"`
	LastMessageAt    app.Time        `json:"last_message_at"`
	Breached         bool            `json:"breached"`
	MessageCount     int             `json:"message_count"`
	CreatedAt        app.Time        `json:"created_at"`
	UpdatedAt        app.Time        `json:"updated_at"`

	createdBy *int64
}

// Number formats a ticket id as shown to people.
func Number(id int64) string { return fmt.Sprintf("T-%06d", id) }

// Author is who wrote a message.
type Author struct {
	Kind string `json:"kind"` // staff, subscriber
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Message is a public reply or an internal note.
type Message struct {
	ID          int64        `json:"id"`
	TicketID    int64        `json:"ticket_id"`
	Internal    bool         `json:"internal"`
	Author      Author       `json:"author"`
	Body        string       `json:"body"`
	Attachments []Attachment `json:"attachments"`
	CreatedAt   app.Time     `json:"created_at"`
}

// Attachment is a file of a ticket (optionally of one message).
type Attachment struct {
	ID          int64    `json:"id"`
	TicketID    int64    `json:"ticket_id"`
	MessageID   *int64   `json:"message_id"`
	Name        string   `json:"name"`
	ContentType string   `json:"content_type"`
	Size        int64    `json:"size"`
	SHA256      string   `json:"sha256"`
	Internal    bool     `json:"internal"`
	UploadedBy  Author   `json:"uploaded_by"`
	CreatedAt   app.Time `json:"created_at"`
	fileID      int64
}

// Detail is a ticket with its conversation.
type Detail struct {
	Ticket
	Messages    []Message    `json:"messages"`
	Attachments []Attachment `json:"attachments"`
}

// ticketCols reads names through scalar subqueries, so ticketFrom is the
// tickets table alone: a list's count then reads one index.
const ticketCols = `t.id, t.subject, t.category_id, COALESCE((SELECT name FROM ticket_categories WHERE id = t.category_id), ''),
	t.priority, t.state, t.snoozed_until, t.requester_user_id, COALESCE((SELECT username FROM users WHERE id = t.requester_user_id), ''),
	t.requester_email, t.requester_name, t.user_id, t.assignee_id,
	COALESCE((SELECT COALESCE(username, email) FROM managers WHERE id = t.assignee_id), ''), t.team_id, t.tags, t.custom_fields, t.spam,
	t.channel, t.first_response_due, t.resolution_due, t.first_responded_at, t.resolved_at, t.closed_at, t.last_message_at,
	t.message_count, t.created_at, t.updated_at, t.created_by`

const ticketFrom = ` FROM tickets t`

func scanTicket(row interface{ Scan(...any) error }, now time.Time) (Ticket, error) {
	var k Ticket
	var tags, custom string
	err := row.Scan(&k.ID, &k.Subject, &k.CategoryID, &k.CategoryName, &k.Priority, &k.State, &k.SnoozedUntil,
		&k.Requester.UserID, &k.Requester.Username, &k.Requester.Email, &k.Requester.Name, &k.UserID, &k.AssigneeID,
		&k.AssigneeName, &k.TeamID, &tags, &custom, &k.Spam, &k.Channel, &k.FirstResponseDue,
		&k.ResolutionDue, &k.FirstRespondedAt, &k.ResolvedAt, &k.ClosedAt, &k.LastMessageAt, &k.MessageCount,
		&k.CreatedAt, &k.UpdatedAt, &k.createdBy)
	if errors.Is(err, sql.ErrNoRows) {
		return k, app.ErrNotFound()
	}
	if err != nil {
		return k, err
	}
	if err := json.Unmarshal([]byte(tags), &k.Tags); err != nil {
		return k, fmt.Errorf("ticket %d tags: %w", k.ID, err)
	}
	if k.Tags == nil {
		k.Tags = []string{}
	}
	k.CustomFields = json.RawMessage(custom)
	k.Number = Number(k.ID)
	k.Breached = Breached(k.State, k.FirstResponseDue.Time, k.FirstRespondedAt.Time, k.ResolutionDue.Time, now)
	return k, nil
}

// Breached reports whether an active ticket is past one of its due times at now.
func Breached(state string, firstDue, firstAt, resDue, now time.Time) bool {
	if !Active(state) {
		return false
	}
	return !firstDue.IsZero() && firstAt.IsZero() && !now.Before(firstDue) || !resDue.IsZero() && !now.Before(resDue)
}

// staffScope is the condition restricting tickets t to what act sees.
func staffScope(act *app.Actor) (string, []any) {
	if act.TenantWide {
		return "1=1", nil
	}
	sub, args := act.ScopeSQL("su.parent_id")
	cond := `(t.assignee_id = ? OR t.user_id IN (SELECT su.id FROM users su WHERE ` + sub + `)
		OR (t.user_id IS NULL AND t.created_by IN (SELECT descendant_id FROM manager_tree WHERE ancestor_id = ?)))`
	out := append([]any{act.ManagerID}, args...)
	return cond, append(out, act.ManagerID)
}

// loadTicket reads ticket id as act sees it: 404 when missing, the same
// 404 (out of scope) when outside act's scope.
func loadTicket(ctx context.Context, q app.Querier, act *app.Actor, id int64) (Ticket, error) {
	scope, args := staffScope(act)
	k, err := scanTicket(q.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ? AND `+scope, append([]any{id}, args...)...), act.Tenant.Now())
	var ae *app.Error
	if errors.As(err, &ae) && ae.Code == app.CodeNotFound && !act.TenantWide {
		var one int
		if q.QueryRowContext(ctx, `SELECT 1 FROM tickets WHERE id = ?`, id).Scan(&one) == nil {
			return k, app.ErrOutOfScope()
		}
	}
	return k, err
}

// loadOwnTicket reads a ticket of subscriber uid (404 for any other).
func loadOwnTicket(ctx context.Context, q app.Querier, now time.Time, uid, id int64) (Ticket, error) {
	return scanTicket(q.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ? AND t.requester_user_id = ?`, id, uid), now)
}

// loadMessages reads a ticket's messages and attachments, without internal
// ones when public.
func loadMessages(ctx context.Context, q app.Querier, id int64, public bool) ([]Message, []Attachment, error) {
	where := ""
	if public {
		where = " AND internal = 0"
	}
	atts, err := loadAttachments(ctx, q, `a.ticket_id = ?`+strings.ReplaceAll(where, "internal", "a.internal"), id)
	if err != nil {
		return nil, nil, err
	}
	byMsg := map[int64][]Attachment{}
	for _, a := range atts {
		if a.MessageID != nil {
			byMsg[*a.MessageID] = append(byMsg[*a.MessageID], a)
		}
	}
	rows, err := q.QueryContext(ctx, `SELECT mm.id, mm.internal, mm.author_manager_id, mm.author_user_id,
		COALESCE(m.username, m.email, ''), COALESCE(u.username, ''), mm.body, mm.created_at
		FROM ticket_messages mm LEFT JOIN managers m ON m.id = mm.author_manager_id LEFT JOIN users u ON u.id = mm.author_user_id
		WHERE mm.ticket_id = ?`+strings.ReplaceAll(where, "internal", "mm.internal")+` ORDER BY mm.id`, id)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	msgs := []Message{}
	for rows.Next() {
		var m Message
		var mid, uid sql.NullInt64
		var mname, uname string
		if err := rows.Scan(&m.ID, &m.Internal, &mid, &uid, &mname, &uname, &m.Body, &m.CreatedAt); err != nil {
			return nil, nil, err
		}
		m.TicketID = id
		m.Author = author(mid, uid, mname, uname)
		m.Attachments = byMsg[m.ID]
		if m.Attachments == nil {
			m.Attachments = []Attachment{}
		}
		msgs = append(msgs, m)
	}
	return msgs, atts, rows.Err()
}

func author(mid, uid sql.NullInt64, mname, uname string) Author {
	if uid.Valid {
		return Author{Kind: "subscriber", ID: uid.Int64, Name: uname}
	}
	return Author{Kind: "staff", ID: mid.Int64, Name: mname}
}

func loadAttachments(ctx context.Context, q app.Querier, where string, args ...any) ([]Attachment, error) {
	rows, err := q.QueryContext(ctx, `SELECT a.id, a.ticket_id, a.message_id, f.name, f.content_type, f.size, f.sha256, a.internal,
		a.uploaded_by_manager_id, a.uploaded_by_user_id, COALESCE(m.username, m.email, ''), COALESCE(u.username, ''), a.created_at, a.file_id
		FROM ticket_attachments a JOIN files f ON f.id = a.file_id LEFT JOIN managers m ON m.id = a.uploaded_by_manager_id
		LEFT JOIN users u ON u.id = a.uploaded_by_user_id WHERE `+where+` ORDER BY a.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Attachment{}
	for rows.Next() {
		var a Attachment
		var mid, uid sql.NullInt64
		var mname, uname string
		if err := rows.Scan(&a.ID, &a.TicketID, &a.MessageID, &a.Name, &a.ContentType, &a.Size, &a.SHA256, &a.Internal,
			&mid, &uid, &mname, &uname, &a.CreatedAt, &a.fileID); err != nil {
			return nil, err
		}
		a.UploadedBy = author(mid, uid, mname, uname)
		out = append(out, a)
	}
	return out, rows.Err()
}

// normTags lowercases, trims and de-duplicates tags (at most 20 of at most
// 40 characters).
func normTags(in []string) ([]string, error) {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range in {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		if len([]rune(t)) > 40 || strings.ContainsAny(t, ",\n\r\t") {
			return nil, app.ErrValidation("invalid_tag", "tags")
		}
		seen[t] = true
		out = append(out, t)
	}
	if len(out) > 20 {
		return nil, app.ErrValidation("too_many_tags", "tags")
	}
	return out, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
