package subs

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"xr/app"
)

// Selection picks subscribers for the operator tools (announcements, bulk
// changes): explicit ids and/or the filters of GET /users by name
// (enabled, expired, online, profile_id, group_id, parent_id,
// expiring_within_days, created_from, created_to, username_exact) plus
// nas_id (online on that NAS) and q, always within the caller's subtree and
// over live subscribers. An id outside the subtree matches nothing, as if
// it did not exist.
type Selection struct {
	IDs    []int64           `json:"ids,omitempty"`
	Filter map[string]string `json:"filter,omitempty"`
	Q      string            `json:"q,omitempty"`
}

// MaxSelectionIDs bounds the explicit ids of a selection.
const MaxSelectionIDs = 10000

// Empty reports whether the selection names nothing (everyone in scope).
func (s Selection) Empty() bool {
	return len(s.IDs) == 0 && len(s.Filter) == 0 && strings.TrimSpace(s.Q) == ""
}

// Recipient is a selected subscriber with what a message to it needs.
type Recipient struct {
	ID         int64
	Username   string
	Email      string
	Phone      string
	Expiration app.Time
	Balance    app.Money
	Plan       string
}

// selectionSQL turns a selection into a condition over alias u.
func selectionSQL(ctx context.Context, q app.Querier, act *app.Actor, sel Selection, now time.Time) (string, []any, error) {
	if len(sel.IDs) > MaxSelectionIDs {
		return "", nil, app.ErrValidation("too_many_ids", "ids")
	}
	v := url.Values{}
	keys := make([]string, 0, len(sel.Filter))
	for k := range sel.Filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var nas int64
	for _, k := range keys {
		if k == "nas_id" {
			n, err := strconv.ParseInt(sel.Filter[k], 10, 64)
			if err != nil || n <= 0 {
				return "", nil, app.ErrValidation("invalid_filter", "filter[nas_id]")
			}
			nas = n
			continue
		}
		if _, ok := userListSpec.Filters[k]; !ok || k == "deleted" {
			return "", nil, app.ErrValidation("invalid_filter", "filter["+k+"]")
		}
		v.Set("filter["+k+"]", sel.Filter[k])
	}
	v.Set("q", sel.Q)
	lq, err := app.ParseList(v, userListSpec)
	if err != nil {
		return "", nil, err
	}
	f, err := buildUserFilter(ctx, q, act, lq, now)
	if err != nil {
		return "", nil, err
	}
	cond, args := f.cond, f.args
	if nas > 0 {
		cond += ` AND EXISTS (SELECT 1 FROM radius_sessions s WHERE s.user_id = u.id AND s.stop_time IS NULL AND s.nas_id = ?)`
		args = append(args, nas)
	}
	if len(sel.IDs) > 0 {
		cond += ` AND u.id IN (SELECT value FROM json_each(?))`
		b := make([]string, len(sel.IDs))
		for i, id := range sel.IDs {
			b[i] = strconv.FormatInt(id, 10)
		}
		args = append(args, "["+strings.Join(b, ",")+"]")
	}
	return cond, args, nil
}

// SelectUserIDs answers the ids of the subscribers a selection picks, in
// id order (400 invalid_filter naming an unknown or unparseable filter).
func SelectUserIDs(ctx context.Context, q app.Querier, act *app.Actor, sel Selection, now time.Time) ([]int64, error) {
	cond, args, err := selectionSQL(ctx, q, act, sel, now)
	if err != nil {
		return nil, err
	}
	return app.QueryIDs(ctx, q, `SELECT u.id FROM users u WHERE `+cond+` ORDER BY u.id`, args...)
}

// SelectionReach counts what a selection picks: subscribers, and those
// with an email address and a phone number.
func SelectionReach(ctx context.Context, q app.Querier, act *app.Actor, sel Selection, now time.Time) (total, email, phone int64, err error) {
	cond, args, err := selectionSQL(ctx, q, act, sel, now)
	if err != nil {
		return 0, 0, 0, err
	}
	err = q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(u.email <> ''), 0), COALESCE(SUM(u.phone <> ''), 0) FROM users u WHERE `+cond, args...).
		Scan(&total, &email, &phone)
	return total, email, phone, err
}

// RecipientsByID reads the recipients of ids (deleted subscribers are
// skipped), in id order.
func RecipientsByID(ctx context.Context, q app.Querier, ids []int64) ([]Recipient, error) {
	out := []Recipient{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := q.QueryContext(ctx, `SELECT u.id, u.username, u.email, u.phone, u.expiration, u.balance, COALESCE(p.name, '')
		FROM users u LEFT JOIN profiles p ON p.id = u.profile_id WHERE u.deleted_at IS NULL AND u.id IN (?`+strings.Repeat(",?", len(ids)-1)+`) ORDER BY u.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r Recipient
		var bal int64
		if err := rows.Scan(&r.ID, &r.Username, &r.Email, &r.Phone, &r.Expiration, &bal, &r.Plan); err != nil {
			return nil, err
		}
		r.Balance = app.Money(bal)
		out = append(out, r)
	}
	return out, rows.Err()
}
