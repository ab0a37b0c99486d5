package tickets

// Reading tickets: one with its thread, the queue list, the counts and the SLA breaches.

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"
	"time"

	"xr/app"
)

// Get reads a ticket with its whole conversation (internal notes included).
func Get(ctx context.Context, act *app.Actor, id int64) (*Detail, error) {
	if err := act.Require(PermTicketsView); err != nil {
		return nil, err
	}
	return detail(ctx, act, id)
}

// detail reads a ticket the caller sees with its thread: the answer of Get
// and of the actions that change a ticket (their permission was checked).
func detail(ctx context.Context, act *app.Actor, id int64) (*Detail, error) {
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
	if err := act.Require(PermTicketsView); err != nil {
		return app.Page[Ticket]{}, err
	}
	scope, args := staffScope(act)
	w := &listWhere{conds: []string{scope}, args: args}
	if err := w.checkedFilters(act, lq); err != nil {
		return app.Page[Ticket]{}, err
	}
	w.filters(act.Tenant.NowText(), lq)
	w.search(lq.Q)
	return app.QueryPage(ctx, act.Tenant, lq, ticketCols, ticketFrom+whereSQL(w.conds), w.args, "t.id",
		func(rows *sql.Rows) (Ticket, error) { return scanTicket(rows, act.Tenant.Now()) })
}

// listWhere gathers List's conditions and their arguments.
type listWhere struct {
	conds []string
	args  []any
}

func (w *listWhere) add(cond string, a ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, a...)
}

// checkedFilters adds the filters a value can make invalid (400
// invalid_filter): state, priority, assignee.
func (w *listWhere) checkedFilters(act *app.Actor, lq app.ListQuery) error {
	for _, f := range []struct {
		key, col string
		allowed  []string
	}{{"state", "t.state", States}, {"priority", "t.priority", Priorities}} {
		if s, ok := lq.Str(f.key); ok {
			c, a, err := inList(f.col, s, f.allowed, "filter["+f.key+"]")
			if err != nil {
				return err
			}
			w.add(c, a...)
		}
	}
	if s, ok := lq.Str("assignee"); ok {
		if s == "me" {
			w.add("t.assignee_id = ?", act.ManagerID)
		} else if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			w.add("t.assignee_id = ?", id)
		} else {
			return app.ErrValidation("invalid_filter", "filter[assignee]")
		}
	}
	return nil
}

// filters adds the other filters (now: the time SLA breaches are judged at).
func (w *listWhere) filters(now string, lq app.ListQuery) {
	if v, ok := lq.Int("category"); ok {
		w.add("t.category_id = ?", v)
	}
	if v, ok := lq.Int("team"); ok {
		w.add("t.team_id = ?", v)
	}
	if v, ok := lq.Bool("unassigned"); ok {
		w.add(map[bool]string{true: "t.assignee_id IS NULL", false: "t.assignee_id IS NOT NULL"}[v])
	}
	if v, ok := lq.Bool("breached"); ok {
		cond := `(t.state NOT IN ('resolved','closed') AND ((t.first_responded_at IS NULL AND t.first_response_due <= ?) OR t.resolution_due <= ?))`
		if !v {
			cond = "NOT " + cond
		}
		w.add(cond, now, now)
	}
	if s, ok := lq.Str("requester"); ok {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			w.add("t.requester_user_id = ?", id)
		} else {
			w.add("t.requester_email = ?", strings.ToLower(s))
		}
	}
	if v, ok := lq.Int("subscriber"); ok {
		w.add("t.user_id = ?", v)
	}
	if s, ok := lq.Str("tag"); ok {
		w.add("EXISTS (SELECT 1 FROM json_each(t.tags) WHERE value = ?)", strings.ToLower(s))
	}
	if v, ok := lq.Bool("spam"); ok {
		w.add("t.spam = ?", v)
	}
	if s, ok := lq.Str("channel"); ok {
		w.add("t.channel = ?", s)
	}
}

// search adds q: the subject, requester, subscriber's username, message
// text, or (a ticket number) the id.
func (w *listWhere) search(q string) {
	if q == "" {
		return
	}
	like := "%" + app.LikeEscape(q) + "%"
	cond := `(t.subject LIKE ? ESCAPE '\' OR t.requester_email LIKE ? ESCAPE '\' OR t.requester_name LIKE ? ESCAPE '\'
		OR t.requester_user_id IN (SELECT id FROM users WHERE username LIKE ? ESCAPE '\') OR EXISTS (SELECT 1 FROM ticket_messages mm WHERE mm.ticket_id = t.id AND mm.body LIKE ? ESCAPE '\')`
	a := []any{like, like, like, like, like}
	if m := numberRe.FindStringSubmatch(q); m != nil {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		cond += ` OR t.id = ?`
		a = append(a, n)
	}
	w.add(cond+")", a...)
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
	if err := act.Require(PermTicketsView); err != nil {
		return nil, err
	}
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
	if err := act.Require(PermTicketsView); err != nil {
		return app.Page[Ticket]{}, err
	}
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
