package subs

import (
	"context"
	"database/sql"
	"net/url"

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
	FigureInDebt         Figure = "in_debt"
	FigureDeleted        Figure = "deleted"
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
