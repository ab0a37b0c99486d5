package subs

import (
	"context"
	"database/sql"
	"net/url"
	"strings"

	"xr/app"
)

// A Figure is a count of subscribers shown on a dashboard or a summary.
// Each is defined once, as the filter of the subscriber list it
// summarises: its number is that list's total, so a tile and the list
// behind its link cannot disagree.
type Figure string

const (
	FigureTotal          Figure = "total"
	FigureEnabled        Figure = "enabled"
	FigureDisabled       Figure = "disabled"
	FigureActive         Figure = "active"          // enabled, expiration in the future
	FigureExpired        Figure = "expired"         // enabled, its time ran out
	FigureNeverActivated Figure = "never_activated" // enabled, never given an expiration
	FigureExpiring7d     Figure = "expiring_7d"     // enabled, expiring within 7 days
	FigureOnline         Figure = "online"
	// The API summary's counts keep the list filters' own meanings: an
	// expired subscriber there is one that cannot connect for lack of
	// time (never activated included), enabled or not.
	FigureNoTime       Figure = "no_time"       // filter[expired]=true
	FigureExpiringSoon Figure = "expiring_soon" // filter[expiring_within_days]=7
	FigureInDebt       Figure = "in_debt"
	FigureDeleted      Figure = "deleted"
)

// figureFilters are the list filters (GET /users query parameters) of
// each figure. Enabled, active, expired and never activated partition the
// enabled subscribers.
var figureFilters = map[Figure]url.Values{
	FigureTotal:          {},
	FigureEnabled:        {"filter[enabled]": {"true"}},
	FigureDisabled:       {"filter[enabled]": {"false"}},
	FigureActive:         {"filter[enabled]": {"true"}, "filter[expired]": {"false"}},
	FigureExpired:        {"filter[enabled]": {"true"}, "filter[expired]": {"true"}, "filter[activated]": {"true"}},
	FigureNeverActivated: {"filter[enabled]": {"true"}, "filter[activated]": {"false"}},
	FigureExpiring7d:     {"filter[enabled]": {"true"}, "filter[expiring_within_days]": {"7"}},
	FigureOnline:         {"filter[online]": {"true"}},
	FigureNoTime:         {"filter[expired]": {"true"}},
	FigureExpiringSoon:   {"filter[expiring_within_days]": {"7"}},
	FigureInDebt:         {"filter[in_debt]": {"true"}},
	FigureDeleted:        {"filter[deleted]": {"true"}},
}

// Filters answers the list query of a figure (a copy; nil for an unknown
// one): a page links to the list a figure counts with it.
func (f Figure) Filters() url.Values {
	v, ok := figureFilters[f]
	if !ok {
		return nil
	}
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// CountFigures counts each figure over the actor's scope in one snapshot,
// through the list's own filter and count (buildUserFilter, countSQL). It
// checks no permission: its callers (the subscribers summary, the
// dashboards) check their own.
func CountFigures(ctx context.Context, act *app.Actor, figures ...Figure) (map[Figure]int64, error) {
	t := act.Tenant
	now := t.Now()
	out := make(map[Figure]int64, len(figures))
	err := t.Read(ctx, func(tx *sql.Tx) error {
		for _, fg := range figures {
			q, ok := figureFilters[fg]
			if !ok {
				return app.ErrInternal(errUnknownFigure(fg))
			}
			lq, err := app.ParseList(q, userListSpec)
			if err != nil {
				return err
			}
			f, err := buildUserFilter(ctx, tx, act, lq, now)
			if err != nil {
				return err
			}
			var n int64
			if err := tx.QueryRowContext(ctx, countSQL(f), f.args...).Scan(&n); err != nil {
				return err
			}
			out[fg] = n
		}
		return nil
	})
	return out, err
}

type errUnknownFigure Figure

func (e errUnknownFigure) Error() string { return "unknown subscriber figure " + string(e) }

// ListContact is what a person recognises a subscriber by besides its
// username: the name and the phone.
type ListContact struct {
	Name  string
	Phone string
}

// ContactsOf answers the name and phone of the listed subscribers the
// caller may see (the console's list shows them beside the usernames; the
// API's list row is the spec's and has neither). Others are left out.
func ContactsOf(ctx context.Context, act *app.Actor, ids []int64) (map[int64]ListContact, error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return nil, err
	}
	out := make(map[int64]ListContact, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if len(ids) > app.MaxPageSize {
		return nil, app.ErrValidation("out_of_range", "ids")
	}
	scope, args := act.ScopeSQL("u.parent_id")
	marks := strings.Repeat(",?", len(ids))[1:]
	for _, id := range ids {
		args = append(args, id)
	}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT u.id, TRIM(COALESCE(u.firstname, '') || ' ' || COALESCE(u.lastname, '')), COALESCE(u.phone, '')
			FROM users u WHERE `+scope+` AND u.id IN (`+marks+`)`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var c ListContact
			if err := rows.Scan(&id, &c.Name, &c.Phone); err != nil {
				return err
			}
			out[id] = c
		}
		return rows.Err()
	})
	return out, err
}
