package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"strings"

	"xr/app"
	"xr/db"
)

// ---- Variables of canned replies and macros ----

// Variables are the placeholders a canned reply or macro may use.
var Variables = []string{"requester", "ticket_number", "agent", "subject"}

var varRe = regexp.MustCompile(`\{([a-z_]+)\}`)

// CheckVariables refuses a text naming an unknown {variable} (400
// unknown_variable naming it).
func CheckVariables(text, field string) error {
	for _, m := range varRe.FindAllStringSubmatch(text, -1) {
		if !oneOf(m[1], Variables) {
			return app.ErrValidation("unknown_variable", field).With("variable", m[1])
		}
	}
	return nil
}

// Render replaces the variables of text with vals.
func Render(text string, vals map[string]string) string {
	return varRe.ReplaceAllStringFunc(text, func(s string) string {
		if v, ok := vals[s[1:len(s)-1]]; ok {
			return v
		}
		return s
	})
}

// ---- Macros ----

// MacroActions are what a macro does besides its reply.
type MacroActions struct {
	State      string   `json:"state,omitempty"` // an action of StateActions (resolve, pend, ...)
	Priority   string   `json:"priority,omitempty"`
	CategoryID *int64   `json:"category_id,omitempty"`
	AssigneeID *int64   `json:"assignee_id,omitempty"`
	AddTags    []string `json:"add_tags,omitempty"`
	RemoveTags []string `json:"remove_tags,omitempty"`
}

// Macro is a reply text plus actions, applied to a ticket in one step.
type Macro struct {
	ID        int64        `json:"id"`
	Name      string       `json:"name"`
	Body      string       `json:"body"`
	Internal  bool         `json:"internal"`
	Actions   MacroActions `json:"actions"`
	CreatedAt app.Time     `json:"created_at"`
	UpdatedAt app.Time     `json:"updated_at"`
}

// MacroInput creates or replaces a macro.
type MacroInput struct {
	Name     string       `json:"name"`
	Body     string       `json:"body"`
	Internal bool         `json:"internal"`
	Actions  MacroActions `json:"actions"`
}

func (in *MacroInput) validate() error {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || len(in.Name) > 128 {
		return app.ErrValidation("name_required", "name")
	}
	if len(in.Body) > maxBody {
		return app.ErrValidation("too_long", "body")
	}
	if err := CheckVariables(in.Body, "body"); err != nil {
		return err
	}
	a := &in.Actions
	if a.State != "" && !oneOf(a.State, StateActions) {
		return app.ErrValidation("invalid_enum", "actions.state").With("allowed", StateActions)
	}
	if a.State == ActSnooze {
		return app.ErrValidation("invalid_enum", "actions.state").With("allowed", StateActions)
	}
	if a.Priority != "" && !oneOf(a.Priority, Priorities) {
		return app.ErrValidation("invalid_enum", "actions.priority").With("allowed", Priorities)
	}
	var err error
	if a.AddTags, err = normTags(a.AddTags); err != nil {
		return app.ErrValidation("invalid_tag", "actions.add_tags")
	}
	if a.RemoveTags, err = normTags(a.RemoveTags); err != nil {
		return app.ErrValidation("invalid_tag", "actions.remove_tags")
	}
	if in.Body == "" && a.State == "" && a.Priority == "" && a.CategoryID == nil && a.AssigneeID == nil && len(a.AddTags) == 0 && len(a.RemoveTags) == 0 {
		return app.ErrValidation("macro_empty", "actions")
	}
	return nil
}

const macroCols = `id, name, body, internal, actions, created_at, updated_at`

func scanMacro(row interface{ Scan(...any) error }) (*Macro, error) {
	m := &Macro{}
	var actions string
	err := row.Scan(&m.ID, &m.Name, &m.Body, &m.Internal, &actions, &m.CreatedAt, &m.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(actions), &m.Actions); err != nil {
		return nil, err
	}
	return m, nil
}

// ListMacros lists macros by name.
func ListMacros(ctx context.Context, act *app.Actor) ([]Macro, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return app.QueryAll(ctx, act.Tenant.DB.R, scanMacro, `SELECT `+macroCols+` FROM ticket_macros ORDER BY name, id`)
}

// ReplyTools are what an agent applies while answering a ticket: the
// canned replies and the macros (prm_tickets_reply; editing them, and the
// lists of the configuration API, is prm_tickets_config).
type ReplyTools struct {
	Canned []CannedReply
	Macros []Macro
}

// GetReplyTools reads the canned replies by title and the macros by name.
func GetReplyTools(ctx context.Context, act *app.Actor) (*ReplyTools, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	q := act.Tenant.DB.R
	canned, err := app.QueryAll(ctx, q, scanCanned, `SELECT `+cannedCols+` FROM ticket_canned_replies ORDER BY title, id`)
	if err != nil {
		return nil, err
	}
	macros, err := app.QueryAll(ctx, q, scanMacro, `SELECT `+macroCols+` FROM ticket_macros ORDER BY name, id`)
	if err != nil {
		return nil, err
	}
	return &ReplyTools{Canned: canned, Macros: macros}, nil
}

// CreateMacro adds a macro.
func CreateMacro(ctx context.Context, act *app.Actor, in MacroInput) (*Macro, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putMacro(ctx, act, 0, in)
}

// PutMacro replaces a macro.
func PutMacro(ctx context.Context, act *app.Actor, id int64, in MacroInput) (*Macro, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putMacro(ctx, act, id, in)
}

func putMacro(ctx context.Context, act *app.Actor, id int64, in MacroInput) (*Macro, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	var out *Macro
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if c := in.Actions.CategoryID; c != nil {
			if _, err := getCategory(ctx, tx, *c); err != nil {
				return app.ErrValidation("invalid_category", "actions.category_id")
			}
		}
		if a := in.Actions.AssigneeID; a != nil {
			if err := checkAssignee(ctx, tx, act, *a); err != nil {
				return app.ErrValidation("invalid_assignee", "actions.assignee_id")
			}
		}
		now := act.Tenant.NowText()
		var err error
		var r sql.Result
		if id == 0 {
			r, err = tx.ExecContext(ctx, `INSERT INTO ticket_macros(name, body, internal, actions, created_at, updated_at) VALUES (?,?,?,?,?,?)`,
				in.Name, in.Body, in.Internal, jsonText(in.Actions), now, now)
			if err == nil {
				id, _ = r.LastInsertId()
			}
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE ticket_macros SET name = ?, body = ?, internal = ?, actions = ?, updated_at = ? WHERE id = ?`,
				in.Name, in.Body, in.Internal, jsonText(in.Actions), now, id)
			if err == nil {
				if n, _ := r.RowsAffected(); n == 0 {
					return app.ErrNotFound()
				}
			}
		}
		if db.IsUnique(err) {
			return app.ErrConflict("name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		out, err = scanMacro(tx.QueryRowContext(ctx, `SELECT `+macroCols+` FROM ticket_macros WHERE id = ?`, id))
		return err
	})
	return out, err
}

// DeleteMacro removes a macro.
func DeleteMacro(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_macros", id)
}

// ---- SLA calendars and policies ----

const calendarCols = `id, name, timezone, hours, holidays, created_at, updated_at`

func scanCalendar(row interface{ Scan(...any) error }) (*Calendar, error) {
	c := &Calendar{}
	var hours, holidays string
	err := row.Scan(&c.ID, &c.Name, &c.Timezone, &hours, &holidays, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(hours), &c.Hours); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(holidays), &c.Holidays); err != nil {
		return nil, err
	}
	return c, nil
}

// ListCalendars lists SLA calendars.
func ListCalendars(ctx context.Context, act *app.Actor) ([]Calendar, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return app.QueryAll(ctx, act.Tenant.DB.R, scanCalendar, `SELECT `+calendarCols+` FROM ticket_sla_calendars ORDER BY name, id`)
}

// CalendarInput creates or replaces a calendar.
type CalendarInput struct {
	Name     string                `json:"name"`
	Timezone string                `json:"timezone"`
	Hours    map[string][]Interval `json:"hours"`
	Holidays []string              `json:"holidays"`
}

// CreateCalendar adds a calendar.
func CreateCalendar(ctx context.Context, act *app.Actor, in CalendarInput) (*Calendar, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putCalendar(ctx, act, 0, in)
}

// PutCalendar replaces a calendar (due times already computed stay).
func PutCalendar(ctx context.Context, act *app.Actor, id int64, in CalendarInput) (*Calendar, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putCalendar(ctx, act, id, in)
}

func putCalendar(ctx context.Context, act *app.Actor, id int64, in CalendarInput) (*Calendar, error) {
	c := Calendar{Name: strings.TrimSpace(in.Name), Timezone: in.Timezone, Hours: in.Hours, Holidays: in.Holidays}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var out *Calendar
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		now := act.Tenant.NowText()
		var err error
		var r sql.Result
		if id == 0 {
			r, err = tx.ExecContext(ctx, `INSERT INTO ticket_sla_calendars(name, timezone, hours, holidays, created_at, updated_at) VALUES (?,?,?,?,?,?)`,
				c.Name, c.Timezone, jsonText(c.Hours), jsonText(c.Holidays), now, now)
			if err == nil {
				id, _ = r.LastInsertId()
			}
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE ticket_sla_calendars SET name = ?, timezone = ?, hours = ?, holidays = ?, updated_at = ? WHERE id = ?`,
				c.Name, c.Timezone, jsonText(c.Hours), jsonText(c.Holidays), now, id)
			if err == nil {
				if n, _ := r.RowsAffected(); n == 0 {
					return app.ErrNotFound()
				}
			}
		}
		if db.IsUnique(err) {
			return app.ErrConflict("name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		out, err = scanCalendar(tx.QueryRowContext(ctx, `SELECT `+calendarCols+` FROM ticket_sla_calendars WHERE id = ?`, id))
		return err
	})
	return out, err
}

// DeleteCalendar removes a calendar (409 in_use while a policy uses it).
func DeleteCalendar(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_sla_calendars", id)
}

const policyCols = `id, name, priority, category_id, calendar_id, first_response_minutes, resolution_minutes, created_at, updated_at`

func scanPolicy(row interface{ Scan(...any) error }) (*Policy, error) {
	p := &Policy{}
	err := row.Scan(&p.ID, &p.Name, &p.Priority, &p.CategoryID, &p.CalendarID, &p.FirstResponseMinutes, &p.ResolutionMinutes, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return p, err
}

func loadPolicies(ctx context.Context, q app.Querier) ([]Policy, error) {
	return app.QueryAll(ctx, q, scanPolicy, `SELECT `+policyCols+` FROM ticket_sla_policies ORDER BY id`)
}

// ListPolicies lists SLA policies.
func ListPolicies(ctx context.Context, act *app.Actor) ([]Policy, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return loadPolicies(ctx, act.Tenant.DB.R)
}

// PolicyInput creates or replaces a policy.
type PolicyInput struct {
	Name                 string  `json:"name"`
	Priority             *string `json:"priority"`
	CategoryID           *int64  `json:"category_id"`
	CalendarID           *int64  `json:"calendar_id"`
	FirstResponseMinutes int     `json:"first_response_minutes"`
	ResolutionMinutes    int     `json:"resolution_minutes"`
}

// CreatePolicy adds a policy.
func CreatePolicy(ctx context.Context, act *app.Actor, in PolicyInput) (*Policy, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putPolicy(ctx, act, 0, in)
}

// PutPolicy replaces a policy (applies to tickets created or re-prioritised after).
func PutPolicy(ctx context.Context, act *app.Actor, id int64, in PolicyInput) (*Policy, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	return putPolicy(ctx, act, id, in)
}

func putPolicy(ctx context.Context, act *app.Actor, id int64, in PolicyInput) (*Policy, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || len(in.Name) > 128 {
		return nil, app.ErrValidation("name_required", "name")
	}
	if in.Priority != nil && !oneOf(*in.Priority, Priorities) {
		return nil, app.ErrValidation("invalid_enum", "priority").With("allowed", Priorities)
	}
	const maxMinutes = 365 * 24 * 60
	if in.FirstResponseMinutes < 0 || in.FirstResponseMinutes > maxMinutes {
		return nil, app.ErrValidation("out_of_range", "first_response_minutes")
	}
	if in.ResolutionMinutes < 0 || in.ResolutionMinutes > maxMinutes {
		return nil, app.ErrValidation("out_of_range", "resolution_minutes")
	}
	var out *Policy
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if in.CategoryID != nil {
			if _, err := getCategory(ctx, tx, *in.CategoryID); err != nil {
				return app.ErrValidation("invalid_category", "category_id")
			}
		}
		if in.CalendarID != nil {
			if _, err := scanCalendar(tx.QueryRowContext(ctx, `SELECT `+calendarCols+` FROM ticket_sla_calendars WHERE id = ?`, *in.CalendarID)); err != nil {
				return app.ErrValidation("invalid_calendar", "calendar_id")
			}
		}
		now := act.Tenant.NowText()
		var err error
		var r sql.Result
		if id == 0 {
			r, err = tx.ExecContext(ctx, `INSERT INTO ticket_sla_policies(name, priority, category_id, calendar_id, first_response_minutes, resolution_minutes, created_at, updated_at)
				VALUES (?,?,?,?,?,?,?,?)`, in.Name, in.Priority, in.CategoryID, in.CalendarID, in.FirstResponseMinutes, in.ResolutionMinutes, now, now)
			if err == nil {
				id, _ = r.LastInsertId()
			}
		} else {
			r, err = tx.ExecContext(ctx, `UPDATE ticket_sla_policies SET name = ?, priority = ?, category_id = ?, calendar_id = ?, first_response_minutes = ?,
				resolution_minutes = ?, updated_at = ? WHERE id = ?`, in.Name, in.Priority, in.CategoryID, in.CalendarID, in.FirstResponseMinutes, in.ResolutionMinutes, now, id)
			if err == nil {
				if n, _ := r.RowsAffected(); n == 0 {
					return app.ErrNotFound()
				}
			}
		}
		if err != nil {
			return err
		}
		out, err = scanPolicy(tx.QueryRowContext(ctx, `SELECT `+policyCols+` FROM ticket_sla_policies WHERE id = ?`, id))
		return err
	})
	return out, err
}

// DeletePolicy removes a policy.
func DeletePolicy(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermTicketsConfig); err != nil {
		return err
	}
	return deleteRow(ctx, act, "ticket_sla_policies", id)
}

// dueTimes computes a ticket's due times in tx from the policies.
func dueTimes(ctx context.Context, tx *sql.Tx, priority string, categoryID *int64, created app.Time) (first, res app.Time, err error) {
	ps, err := loadPolicies(ctx, tx)
	if err != nil {
		return
	}
	var cat int64
	if categoryID != nil {
		cat = *categoryID
	}
	p := PickPolicy(ps, priority, cat)
	if p == nil {
		return
	}
	var cal *Calendar
	if p.CalendarID != nil {
		cal, err = scanCalendar(tx.QueryRowContext(ctx, `SELECT `+calendarCols+` FROM ticket_sla_calendars WHERE id = ?`, *p.CalendarID))
		if err != nil {
			return
		}
	}
	f, r := DueTimes(p, cal, created.Time)
	return app.T(f), app.T(r), nil
}

// ---- Assignment ----

// Strategies of automatic assignment of new tickets (tenant setting
// tickets_assignment_strategy).
var Strategies = []Strategy{
	{"manual", "New tickets stay unassigned until someone takes them."},
	{"round_robin", "Each new ticket goes to the next agent in turn (the one assigned longest ago)."},
	{"least_open", "Each new ticket goes to the agent with the fewest open tickets."},
	{"category_team", "Each new ticket goes to the member of its category's team with the fewest open tickets."},
}

// Strategy is one assignment strategy.
type Strategy struct {
	Key         string `json:"key"`
	Description string `json:"description"`
}

// StrategiesView is the answer of GET /tickets/assignment-strategies.
type StrategiesView struct {
	Current    string     `json:"current"`
	Strategies []Strategy `json:"strategies"`
}

// GetStrategies lists the strategies and the tenant's current one.
func GetStrategies(ctx context.Context, act *app.Actor) (*StrategiesView, error) {
	if err := act.Require(PermTicketsConfig); err != nil {
		return nil, err
	}
	cur, err := SettingTicketsAssignment.Get(ctx, act.Tenant.DB.R)
	if err != nil {
		return nil, err
	}
	return &StrategiesView{Current: cur, Strategies: Strategies}, nil
}

// Assignee is a manager who may take tickets.
type Assignee struct {
	ID        int64  `json:"id"`
	Username  string `json:"username"`
	Name      string `json:"name"`
	TeamID    *int64 `json:"team_id"`
	OpenCount int    `json:"open_count"`
}

// eligibleSQL selects active managers m who hold prm_tickets_reply (or
// are the owner or an administrator).
const eligibleSQL = `m.status = 'active' AND (m.parent_id IS NULL OR EXISTS (SELECT 1 FROM manager_roles mr JOIN roles r ON r.id = mr.role_id
	WHERE mr.manager_id = m.id AND ((r.immutable = 1 AND r.name = 'administrator') OR EXISTS (SELECT 1 FROM role_permissions rp WHERE rp.role_id = r.id AND rp.code = '` + string(PermTicketsReply) + `'))))`

// ListAssignees lists who may take tickets, within act's scope.
func ListAssignees(ctx context.Context, act *app.Actor) ([]Assignee, error) {
	if err := act.Require(PermTicketsView); err != nil {
		return nil, err
	}
	scope, args := act.ScopeSQL("m.id")
	return queryAssignees(ctx, act.Tenant.DB.R, scope, args)
}

func queryAssignees(ctx context.Context, q app.Querier, where string, args []any) ([]Assignee, error) {
	rows, err := q.QueryContext(ctx, `SELECT m.id, COALESCE(m.username, m.email, ''), TRIM(m.firstname || ' ' || m.lastname), m.group_id,
		(SELECT COUNT(*) FROM tickets t WHERE t.assignee_id = m.id AND t.state NOT IN ('resolved','closed'))
		FROM managers m WHERE `+eligibleSQL+` AND `+where+` ORDER BY m.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Assignee{}
	for rows.Next() {
		var a Assignee
		if err := rows.Scan(&a.ID, &a.Username, &a.Name, &a.TeamID, &a.OpenCount); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// checkAssignee refuses a manager who may not take tickets or is outside
// act's scope.
func checkAssignee(ctx context.Context, q app.Querier, act *app.Actor, id int64) error {
	scope, args := act.ScopeSQL("m.id")
	list, err := queryAssignees(ctx, q, "m.id = ? AND "+scope, append([]any{id}, args...))
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return app.ErrValidation("invalid_assignee", "assignee_id")
	}
	return nil
}

// autoAssignee picks the assignee of a new ticket by the tenant's strategy
// (nil: none). teamID is the category's team.
func autoAssignee(ctx context.Context, tx *sql.Tx, strategy string, teamID *int64) (*int64, error) {
	var order, where string
	var args []any
	switch strategy {
	case "round_robin":
		order = `(SELECT COALESCE(MAX(t.assigned_at), '') FROM tickets t WHERE t.assignee_id = m.id), m.id`
	case "least_open":
		order = `(SELECT COUNT(*) FROM tickets t WHERE t.assignee_id = m.id AND t.state NOT IN ('resolved','closed')), m.id`
	case "category_team":
		if teamID == nil {
			return nil, nil
		}
		where, args = ` AND m.group_id = ?`, []any{*teamID}
		order = `(SELECT COUNT(*) FROM tickets t WHERE t.assignee_id = m.id AND t.state NOT IN ('resolved','closed')), m.id`
	default:
		return nil, nil
	}
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT m.id FROM managers m WHERE `+eligibleSQL+where+` ORDER BY `+order+` LIMIT 1`, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &id, nil
}
