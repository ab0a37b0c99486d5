package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/mail"
	"strings"

	"xr/app"
	"xr/app/subs"
)

const (
	maxBody    = 20000
	maxSubject = 200
)

// eventData is the payload of the ticket.* events.
type eventData struct {
	TicketID   int64  `json:"ticket_id"`
	Number     string `json:"number"`
	Subject    string `json:"subject"`
	State      string `json:"state"`
	Priority   string `json:"priority"`
	UserID     *int64 `json:"user_id"`
	AssigneeID *int64 `json:"assignee_id"`
	From       string `json:"from_state,omitempty"`
	MessageID  int64  `json:"message_id,omitempty"`
	Author     string `json:"author,omitempty"`
}

func emit(ctx context.Context, tx *sql.Tx, typ string, k Ticket, extra eventData) error {
	d := extra
	d.TicketID, d.Number, d.Subject, d.State, d.Priority, d.UserID, d.AssigneeID = k.ID, Number(k.ID), k.Subject, k.State, k.Priority, k.UserID, k.AssigneeID
	return app.Emit(ctx, tx, typ, d)
}

// ---- Create ----

// CreateInput opens a ticket for a subscriber (user_id) or for an email.
type CreateInput struct {
	Subject        string                     `json:"subject"`
	Body           string                     `json:"body"`
	CategoryID     *int64                     `json:"category_id"`
	Priority       Priority                   `json:"priority"`
	UserID         *int64                     `json:"user_id"`
	RequesterEmail string                     `json:"requester_email"`
	RequesterName  string                     `json:"requester_name"`
	AssigneeID     *int64                     `json:"assignee_id"`
	TeamID         *int64                     `json:"team_id"`
	Tags           []string                   `json:"tags"`
	CustomFields   map[string]json.RawMessage `json:"custom_fields"`
}

// newTicket is a ticket about to be inserted (staff or portal).
type newTicket struct {
	subject, body, priority, email, name, channel string
	categoryID, requesterUID, userID, assignee    *int64
	teamID, createdBy                             *int64
	tags                                          []string
	custom                                        map[string]json.RawMessage
	portal                                        bool
}

func checkText(subject, body string) (string, error) {
	subject = strings.TrimSpace(subject)
	if subject == "" {
		return "", app.ErrValidation("subject_required", "subject")
	}
	if len([]rune(subject)) > maxSubject {
		return "", app.ErrValidation("too_long", "subject")
	}
	if strings.TrimSpace(body) == "" {
		return "", app.ErrValidation("body_required", "body")
	}
	if len(body) > maxBody {
		return "", app.ErrValidation("too_long", "body")
	}
	return subject, nil
}

// insertTicket writes a new ticket and its first message in tx.
func insertTicket(ctx context.Context, tx *sql.Tx, t *app.Tenant, n newTicket) (Ticket, error) {
	teamID, spam, err := route(ctx, tx, n)
	if err != nil {
		return Ticket{}, err
	}
	custom, err := validateCustom(ctx, tx, n.categoryID, n.custom, nil)
	if err != nil {
		return Ticket{}, err
	}
	now := app.T(t.Now())
	first, res, err := dueTimes(ctx, tx, n.priority, n.categoryID, now)
	if err != nil {
		return Ticket{}, err
	}
	assignee := n.assignee
	if assignee == nil && !spam {
		if assignee, err = defaultAssignee(ctx, tx, teamID); err != nil {
			return Ticket{}, err
		}
	}
	var assignedAt any
	if assignee != nil {
		assignedAt = now
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO tickets(subject, category_id, priority, state, requester_user_id, requester_email, requester_name,
		user_id, assignee_id, assigned_at, team_id, tags, custom_fields, spam, channel, created_by, first_response_due, resolution_due,
		last_message_at, message_count, created_at, updated_at) VALUES (?,?,?,'new',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?)`,
		n.subject, n.categoryID, n.priority, n.requesterUID, n.email, n.name, n.userID, assignee, assignedAt, teamID, jsonText(n.tags),
		custom, spam, n.channel, n.createdBy, first, res, now, now, now)
	if err != nil {
		return Ticket{}, err
	}
	id, _ := r.LastInsertId()
	if err := insertFirstMessage(ctx, tx, id, n, now); err != nil {
		return Ticket{}, err
	}
	k, err := scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ?`, id), t.Now())
	if err != nil {
		return k, err
	}
	return k, announceCreated(ctx, tx, t, k)
}

// route applies the blocklist (403 requester_blocked, or spam) and finds
// the team: the category's, unless the ticket names one.
func route(ctx context.Context, tx *sql.Tx, n newTicket) (teamID *int64, spam bool, err error) {
	action, err := blocked(ctx, tx, n.email, n.requesterUID)
	if err != nil {
		return nil, false, err
	}
	if action == "refuse" {
		return nil, false, app.ErrForbidden("requester_blocked")
	}
	if n.categoryID != nil {
		c, err := getCategory(ctx, tx, *n.categoryID)
		if err != nil || !c.Enabled || n.portal && !c.Portal {
			return nil, false, app.ErrValidation("invalid_category", "category_id")
		}
		teamID = c.TeamID
	}
	if n.teamID != nil {
		teamID = n.teamID
		if err := checkTeam(ctx, tx, app.Opt[int64]{Set: true, V: *n.teamID}, "team_id"); err != nil {
			return nil, false, err
		}
	}
	return teamID, action == "spam", nil
}

// defaultAssignee is the agent the tenant's assignment strategy picks in
// the team (nil: none).
func defaultAssignee(ctx context.Context, tx *sql.Tx, teamID *int64) (*int64, error) {
	strategy, err := SettingTicketsAssignment.Get(ctx, tx)
	if err != nil {
		return nil, err
	}
	return autoAssignee(ctx, tx, strategy, teamID)
}

// insertFirstMessage writes the opening message: by the subscriber on the
// portal, else by the staff member who opened the ticket.
func insertFirstMessage(ctx context.Context, tx *sql.Tx, id int64, n newTicket, now app.Time) error {
	var authorMgr, authorUser any
	if n.requesterUID == nil || !n.portal {
		authorMgr = n.createdBy
	}
	if n.portal {
		authorUser = n.requesterUID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO ticket_messages(ticket_id, internal, author_manager_id, author_user_id, body, created_at) VALUES (?,0,?,?,?,?)`,
		id, authorMgr, authorUser, n.body, now)
	return err
}

// announceCreated emits ticket.created, and ticket.assigned with the
// assignee's notice when the ticket has one.
func announceCreated(ctx context.Context, tx *sql.Tx, t *app.Tenant, k Ticket) error {
	if err := emit(ctx, tx, "ticket.created", k, eventData{}); err != nil {
		return err
	}
	if k.AssigneeID == nil {
		return nil
	}
	if err := emit(ctx, tx, "ticket.assigned", k, eventData{}); err != nil {
		return err
	}
	return notifyAssigned(ctx, tx, t, k)
}

// Create opens a ticket as staff.
func Create(ctx context.Context, act *app.Actor, in CreateInput) (*Detail, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	n, err := in.check(act)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	var k Ticket
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if in.UserID != nil {
			if err := staffRequester(ctx, tx, act, *in.UserID, &n); err != nil {
				return err
			}
		}
		if in.AssigneeID != nil {
			if err := checkAssignee(ctx, tx, act, *in.AssigneeID); err != nil {
				return err
			}
		}
		var err error
		k, err = insertTicket(ctx, tx, t, n)
		return err
	})
	if err != nil {
		return nil, err
	}
	return detail(ctx, act, k.ID)
}

// check validates a staff ticket (400s; 403 for an assignee without
// prm_tickets_assign) into the ticket to insert.
func (in *CreateInput) check(act *app.Actor) (newTicket, error) {
	subject, err := checkText(in.Subject, in.Body)
	if err != nil {
		return newTicket{}, err
	}
	if in.Priority == "" {
		in.Priority = "normal"
	}
	tags, err := normTags(in.Tags)
	if err != nil {
		return newTicket{}, err
	}
	email := strings.ToLower(strings.TrimSpace(in.RequesterEmail))
	if email != "" {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
			return newTicket{}, app.ErrValidation("invalid_email", "requester_email")
		}
	}
	if in.UserID == nil && email == "" {
		return newTicket{}, app.ErrValidation("requester_required", "user_id")
	}
	if len(in.RequesterName) > 128 {
		return newTicket{}, app.ErrValidation("too_long", "requester_name")
	}
	if in.AssigneeID != nil && !act.Can(PermTicketsAssign) {
		return newTicket{}, app.ErrForbidden("insufficient_permissions")
	}
	return newTicket{subject: subject, body: in.Body, priority: string(in.Priority), email: email, name: in.RequesterName, channel: "staff",
		categoryID: in.CategoryID, assignee: in.AssigneeID, teamID: in.TeamID, createdBy: &act.ManagerID, tags: tags, custom: in.CustomFields}, nil
}

// staffRequester makes subscriber uid (live, in the caller's subtree:
// else 400 invalid_subscriber) the requester, its email and name filling
// those the form left empty.
func staffRequester(ctx context.Context, tx *sql.Tx, act *app.Actor, uid int64, n *newTicket) error {
	u, err := subs.LookupLive(ctx, tx, act, uid)
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		return app.ErrValidation("invalid_subscriber", "user_id")
	}
	if err != nil {
		return err
	}
	n.requesterUID, n.userID = &uid, &uid
	if n.email == "" {
		n.email = strings.ToLower(u.Email)
	}
	if n.name == "" {
		n.name = strings.TrimSpace(u.FirstName + " " + u.LastName)
	}
	return nil
}
