package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"

	"xr/app"
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
	action, err := blocked(ctx, tx, n.email, n.requesterUID)
	if err != nil {
		return Ticket{}, err
	}
	if action == "refuse" {
		return Ticket{}, app.ErrForbidden("requester_blocked")
	}
	spam := action == "spam"
	var teamID *int64
	if n.categoryID != nil {
		c, err := getCategory(ctx, tx, *n.categoryID)
		if err != nil || !c.Enabled || n.portal && !c.Portal {
			return Ticket{}, app.ErrValidation("invalid_category", "category_id")
		}
		teamID = c.TeamID
	}
	if n.teamID != nil {
		teamID = n.teamID
		if err := checkTeam(ctx, tx, app.Opt[int64]{Set: true, V: *n.teamID}, "team_id"); err != nil {
			return Ticket{}, err
		}
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
		strategy, err := SettingTicketsAssignment.Get(ctx, tx)
		if err != nil {
			return Ticket{}, err
		}
		if assignee, err = autoAssignee(ctx, tx, strategy, teamID); err != nil {
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
	var authorMgr any
	if n.requesterUID == nil || !n.portal {
		authorMgr = n.createdBy
	}
	var authorUser any
	if n.portal {
		authorUser = n.requesterUID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ticket_messages(ticket_id, internal, author_manager_id, author_user_id, body, created_at) VALUES (?,0,?,?,?,?)`,
		id, authorMgr, authorUser, n.body, now); err != nil {
		return Ticket{}, err
	}
	k, err := scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ?`, id), t.Now())
	if err != nil {
		return k, err
	}
	if err := emit(ctx, tx, "ticket.created", k, eventData{}); err != nil {
		return k, err
	}
	if assignee != nil {
		if err := emit(ctx, tx, "ticket.assigned", k, eventData{}); err != nil {
			return k, err
		}
		if err := notifyAssigned(ctx, tx, t, k); err != nil {
			return k, err
		}
	}
	return k, nil
}

// Create opens a ticket as staff.
func Create(ctx context.Context, act *app.Actor, in CreateInput) (*Detail, error) {
	subject, err := checkText(in.Subject, in.Body)
	if err != nil {
		return nil, err
	}
	if in.Priority == "" {
		in.Priority = "normal"
	}
	tags, err := normTags(in.Tags)
	if err != nil {
		return nil, err
	}
	email := strings.ToLower(strings.TrimSpace(in.RequesterEmail))
	if email != "" {
		if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
			return nil, app.ErrValidation("invalid_email", "requester_email")
		}
	}
	if in.UserID == nil && email == "" {
		return nil, app.ErrValidation("requester_required", "user_id")
	}
	if len(in.RequesterName) > 128 {
		return nil, app.ErrValidation("too_long", "requester_name")
	}
	if in.AssigneeID != nil && !act.Can(PermTicketsAssign) {
		return nil, app.ErrForbidden("insufficient_permissions")
	}
	t := act.Tenant
	var k Ticket
	err = t.Write(ctx, func(tx *sql.Tx) error {
		n := newTicket{subject: subject, body: in.Body, priority: string(in.Priority), email: email, name: in.RequesterName, channel: "staff",
			categoryID: in.CategoryID, assignee: in.AssigneeID, teamID: in.TeamID, createdBy: &act.ManagerID, tags: tags, custom: in.CustomFields}
		if in.UserID != nil {
			var parent int64
			var uemail, first, last string
			err := tx.QueryRowContext(ctx, `SELECT parent_id, email, firstname, lastname FROM users WHERE id = ? AND deleted_at IS NULL`, *in.UserID).
				Scan(&parent, &uemail, &first, &last)
			if errors.Is(err, sql.ErrNoRows) {
				return app.ErrValidation("invalid_subscriber", "user_id")
			}
			if err != nil {
				return err
			}
			if ok, err := act.InScope(ctx, tx, parent); err != nil {
				return err
			} else if !ok {
				return app.ErrValidation("invalid_subscriber", "user_id")
			}
			n.requesterUID, n.userID = in.UserID, in.UserID
			if n.email == "" {
				n.email = strings.ToLower(uemail)
			}
			if n.name == "" {
				n.name = strings.TrimSpace(first + " " + last)
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
	return Get(ctx, act, k.ID)
}

// ---- Read ----

// Get reads a ticket with its whole conversation (internal notes included).
func Get(ctx context.Context, act *app.Actor, id int64) (*Detail, error) {
	var d Detail
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		k, err := loadTicket(ctx, tx, act, id)
		if err != nil {
			return err
		}
		d.Ticket = k
		d.Messages, d.Attachments, err = loadMessages(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

var listSpec = app.ListSpec{
	Sorts: map[string]string{
		"updated_at": "t.updated_at", "created_at": "t.created_at", "id": "t.id", "number": "t.id",
		"priority": "CASE t.priority WHEN 'urgent' THEN 4 WHEN 'high' THEN 3 WHEN 'normal' THEN 2 ELSE 1 END",
		"state":    "t.state", "subject": "t.subject", "resolution_due": "t.resolution_due", "first_response_due": "t.first_response_due",
		"last_message_at": "t.last_message_at",
	},
	DefaultSort: "updated_at",
	Filters: map[string]app.FilterKind{
		"state": app.FilterString, "priority": app.FilterString, "category": app.FilterInt, "assignee": app.FilterString,
		"team": app.FilterInt, "unassigned": app.FilterBool, "breached": app.FilterBool, "requester": app.FilterString,
		"subscriber": app.FilterInt, "tag": app.FilterString, "spam": app.FilterBool, "channel": app.FilterString,
	},
	Aliases: []string{"state", "priority", "category", "assignee", "team", "unassigned", "breached", "requester", "subscriber", "tag", "spam"},
}

// ListSpec is the staff list's sorts and filters.
func ListSpec() app.ListSpec { return listSpec }

var numberRe = regexp.MustCompile(`^(?i)t?-?0*([0-9]{1,12})$`)

func inList(col, csv string, allowed []string, field string) (string, []any, error) {
	var ph []string
	var args []any
	for _, v := range strings.Split(csv, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !oneOf(v, allowed) {
			return "", nil, app.ErrValidation("invalid_filter", field)
		}
		ph = append(ph, "?")
		args = append(args, v)
	}
	if len(ph) == 0 {
		return "", nil, app.ErrValidation("invalid_filter", field)
	}
	return col + " IN (" + strings.Join(ph, ",") + ")", args, nil
}

// List lists the tickets act sees: q matches the number, subject,
// requester and message text; filters state and priority take
// comma-separated lists, assignee an id or "me".
func List(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Ticket], error) {
	scope, args := staffScope(act)
	where := []string{scope}
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if s, ok := lq.Str("state"); ok {
		c, a, err := inList("t.state", s, States, "filter[state]")
		if err != nil {
			return app.Page[Ticket]{}, err
		}
		add(c, a...)
	}
	if s, ok := lq.Str("priority"); ok {
		c, a, err := inList("t.priority", s, Priorities, "filter[priority]")
		if err != nil {
			return app.Page[Ticket]{}, err
		}
		add(c, a...)
	}
	if v, ok := lq.Int("category"); ok {
		add("t.category_id = ?", v)
	}
	if s, ok := lq.Str("assignee"); ok {
		if s == "me" {
			add("t.assignee_id = ?", act.ManagerID)
		} else if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			add("t.assignee_id = ?", id)
		} else {
			return app.Page[Ticket]{}, app.ErrValidation("invalid_filter", "filter[assignee]")
		}
	}
	if v, ok := lq.Int("team"); ok {
		add("t.team_id = ?", v)
	}
	if v, ok := lq.Bool("unassigned"); ok {
		if v {
			add("t.assignee_id IS NULL")
		} else {
			add("t.assignee_id IS NOT NULL")
		}
	}
	now := act.Tenant.NowText()
	if v, ok := lq.Bool("breached"); ok {
		cond := `(t.state NOT IN ('resolved','closed') AND ((t.first_responded_at IS NULL AND t.first_response_due <= ?) OR t.resolution_due <= ?))`
		if !v {
			cond = "NOT " + cond
		}
		add(cond, now, now)
	}
	if s, ok := lq.Str("requester"); ok {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			add("t.requester_user_id = ?", id)
		} else {
			add("t.requester_email = ?", strings.ToLower(s))
		}
	}
	if v, ok := lq.Int("subscriber"); ok {
		add("t.user_id = ?", v)
	}
	if s, ok := lq.Str("tag"); ok {
		add("EXISTS (SELECT 1 FROM json_each(t.tags) WHERE value = ?)", strings.ToLower(s))
	}
	if v, ok := lq.Bool("spam"); ok {
		add("t.spam = ?", v)
	}
	if s, ok := lq.Str("channel"); ok {
		add("t.channel = ?", s)
	}
	if lq.Q != "" {
		like := "%" + app.LikeEscape(lq.Q) + "%"
		cond := `(t.subject LIKE ? ESCAPE '\' OR t.requester_email LIKE ? ESCAPE '\' OR t.requester_name LIKE ? ESCAPE '\'
			OR t.requester_user_id IN (SELECT id FROM users WHERE username LIKE ? ESCAPE '\') OR EXISTS (SELECT 1 FROM ticket_messages mm WHERE mm.ticket_id = t.id AND mm.body LIKE ? ESCAPE '\')`
		a := []any{like, like, like, like, like}
		if m := numberRe.FindStringSubmatch(lq.Q); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			cond += ` OR t.id = ?`
			a = append(a, n)
		}
		add(cond+")", a...)
	}
	return app.QueryPage(ctx, act.Tenant, lq, ticketCols, ticketFrom+whereSQL(where), args, "t.id",
		func(rows *sql.Rows) (Ticket, error) { return scanTicket(rows, act.Tenant.Now()) })
}

// whereSQL joins conditions into a WHERE clause, none for a tenant-wide
// unfiltered list (whose count SQLite then answers from the b-tree alone).
func whereSQL(conds []string) string {
	var keep []string
	for _, c := range conds {
		if c != "1=1" {
			keep = append(keep, c)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(keep, " AND ")
}

// Counts are the numbers a helpdesk polls: per state, and the queues.
type Counts struct {
	States     map[string]int `json:"states"`
	Mine       int            `json:"mine"`
	Unassigned int            `json:"unassigned"`
	Breached   int            `json:"breached"`
	Total      int            `json:"total"`
}

// GetCounts counts the tickets act sees (active ones for the queues).
func GetCounts(ctx context.Context, act *app.Actor) (*Counts, error) {
	scope, args := staffScope(act)
	c := &Counts{States: map[string]int{}}
	for _, s := range States {
		c.States[s] = 0
	}
	now := act.Tenant.NowText()
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT t.state, COUNT(*) FROM tickets t WHERE `+scope+` GROUP BY t.state`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var s string
			var n int
			if err := rows.Scan(&s, &n); err != nil {
				rows.Close()
				return err
			}
			c.States[s] = n
			c.Total += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		active := ` AND t.state IN ('new','open','pending','snoozed')`
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets t WHERE t.assignee_id = ?`+active, act.ManagerID).Scan(&c.Mine); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets t WHERE t.assignee_id IS NULL`+active+` AND `+scope, args...).Scan(&c.Unassigned); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tickets t WHERE t.id IN (
			SELECT id FROM tickets WHERE first_responded_at IS NULL AND state NOT IN ('resolved','closed') AND first_response_due <= ?
			UNION SELECT id FROM tickets WHERE state NOT IN ('resolved','closed') AND resolution_due <= ?) AND `+scope,
			append([]any{now, now}, args...)...).Scan(&c.Breached)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

var breachSpec = app.ListSpec{
	Sorts:       map[string]string{"resolution_due": "t.resolution_due", "first_response_due": "t.first_response_due", "id": "t.id"},
	DefaultSort: "resolution_due",
	DefaultAsc:  true,
	Filters:     map[string]app.FilterKind{"within": app.FilterInt, "priority": app.FilterString, "assignee": app.FilterInt},
	Aliases:     []string{"within", "priority", "assignee"},
}

// BreachSpec is the breaches list's sorts and filters.
func BreachSpec() app.ListSpec { return breachSpec }

// Breaches lists active tickets past a due time, or due within `within`
// minutes (filter[within] or ?within=, 0..10080).
func Breaches(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Ticket], error) {
	within, _ := lq.Int("within")
	if within < 0 || within > 7*24*60 {
		return app.Page[Ticket]{}, app.ErrValidation("invalid_filter", "filter[within]")
	}
	limit := app.FormatTime(act.Tenant.Now().Add(time.Duration(within) * time.Minute))
	scope, args := staffScope(act)
	where := `t.state NOT IN ('resolved','closed') AND ((t.first_responded_at IS NULL AND t.first_response_due <= ?) OR t.resolution_due <= ?) AND ` + scope
	args = append([]any{limit, limit}, args...)
	if s, ok := lq.Str("priority"); ok {
		c, a, err := inList("t.priority", s, Priorities, "filter[priority]")
		if err != nil {
			return app.Page[Ticket]{}, err
		}
		where += " AND " + c
		args = append(args, a...)
	}
	if v, ok := lq.Int("assignee"); ok {
		where += " AND t.assignee_id = ?"
		args = append(args, v)
	}
	return app.QueryPage(ctx, act.Tenant, lq, ticketCols, ticketFrom+" WHERE "+where, args, "t.id",
		func(rows *sql.Rows) (Ticket, error) { return scanTicket(rows, act.Tenant.Now()) })
}

// ---- Changes ----

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
	if in.Subject.Set {
		s, err := checkText(in.Subject.V, "x")
		if err != nil {
			return nil, err
		}
		in.Subject.V = s
	}
	if in.Priority.Set && in.Priority.Null {
		return nil, app.ErrValidation("invalid_enum", "priority").With("allowed", Priorities)
	}
	var tags []string
	if in.Tags.Set {
		var err error
		if tags, err = normTags(in.Tags.V); err != nil {
			return nil, err
		}
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
		if len(set) == 0 {
			return nil
		}
		return update(ctx, tx, "tickets", k.ID, set)
	})
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

// ---- Replies ----

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
	for _, aid := range attIDs {
		var res sql.Result
		if uid != nil {
			res, err = tx.ExecContext(ctx, `UPDATE ticket_attachments SET message_id = ? WHERE id = ? AND ticket_id = ? AND message_id IS NULL AND uploaded_by_user_id = ? AND internal = 0`,
				mid, aid, k.ID, *uid)
		} else {
			res, err = tx.ExecContext(ctx, `UPDATE ticket_attachments SET message_id = ?, internal = ? WHERE id = ? AND ticket_id = ? AND message_id IS NULL AND uploaded_by_manager_id IS NOT NULL`,
				mid, internal, aid, k.ID)
		}
		if err != nil {
			return 0, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return 0, app.ErrValidation("invalid_attachment", "attachment_ids").With("id", aid)
		}
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
	if !internal {
		who := "staff"
		if uid != nil {
			who = "subscriber"
		}
		if err := emit(ctx, tx, "ticket.replied", *k, eventData{MessageID: mid, Author: who}); err != nil {
			return 0, err
		}
	}
	if to != from {
		if err := emit(ctx, tx, "ticket.state_changed", *k, eventData{From: from}); err != nil {
			return 0, err
		}
	}
	if mgr != nil && !internal {
		if err := notifyReply(ctx, tx, t, *k, mid, body); err != nil {
			return 0, err
		}
	}
	return mid, nil
}

// Reply adds a staff reply or note to a ticket.
func Reply(ctx context.Context, act *app.Actor, id int64, in ReplyInput) (*Detail, error) {
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
	return Get(ctx, act, id)
}

// ApplyMacro applies a macro to a ticket in one transaction: its reply
// (variables rendered), then its actions.
func ApplyMacro(ctx context.Context, act *app.Actor, id, macroID int64) (*Detail, error) {
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
			if tags, err = normTags(tags); err != nil {
				return err
			}
			set["tags"] = jsonText(tags)
		}
		if len(set) > 0 {
			if k.State == StateClosed {
				return app.ErrConflict("ticket_closed")
			}
			if err := update(ctx, tx, "tickets", k.ID, set); err != nil {
				return err
			}
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
	return Get(ctx, act, id)
}

// ---- Bulk ----

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
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, ActClose, time.Time{}, act.Tenant.Now())
	})
}

// BulkResolve resolves tickets.
func BulkResolve(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	return bulk(ctx, act, in.IDs, func(tx *sql.Tx, k *Ticket) error {
		return setState(ctx, tx, k, ActResolve, time.Time{}, act.Tenant.Now())
	})
}

// BulkReopen reopens resolved tickets and closed ones within the reopen window.
func BulkReopen(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
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

// ---- The snooze wake-up job ----

const jobWake = "tickets.wake"

type wakePayload struct {
	TicketID int64 `json:"ticket_id"`
}

// wake reopens a snoozed ticket whose time has come (a ticket snoozed
// again later, or moved since, is left alone).
func wake(ctx context.Context, jc *app.JobContext) (any, error) {
	var p wakePayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	woke := false
	err := t.Write(ctx, func(tx *sql.Tx) error {
		k, err := scanTicket(tx.QueryRowContext(ctx, `SELECT `+ticketCols+ticketFrom+` WHERE t.id = ?`, p.TicketID), t.Now())
		if err != nil {
			var ae *app.Error
			if errors.As(err, &ae) && ae.Code == app.CodeNotFound {
				return nil
			}
			return err
		}
		if !WakeDue(k.State, k.SnoozedUntil.Time, t.Now()) {
			return nil
		}
		woke = true
		return setState(ctx, tx, &k, ActWake, time.Time{}, t.Now())
	})
	return map[string]bool{"woke": woke}, err
}

// WakeDue reports whether a snoozed ticket is due to wake at now.
func WakeDue(state string, until, now time.Time) bool {
	return state == StateSnoozed && !until.IsZero() && !now.Before(until)
}
