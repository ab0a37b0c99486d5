package console

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/identity"
	"xr/app/subs"
)

// Report filters that name a record (a manager, a plan, a NAS) are typed
// by name: the page offers the names of the records the caller may list
// (a datalist, so the browser searches them as one types) and maps the
// chosen name back to the id the report's filter takes. A caller who may
// not list those records gets no such filter.

// nameOption is one record a name filter offers.
type nameOption struct {
	ID   int64
	Name string
}

// nameSources lists, per id filter, the records it may name; nil when the
// caller may not list them.
var nameSources = map[string]func(context.Context, *app.Actor) ([]nameOption, error){
	"manager_id": managerOptions,
	"profile_id": planOptions,
	"nas_id":     nasOptions,
}

func managerOptions(ctx context.Context, act *app.Actor) ([]nameOption, error) {
	if !act.Can(identity.PermManagersIndex) {
		return nil, nil
	}
	lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}, "sort": {"username"}}, identity.ManagerListSpec())
	if err != nil {
		return nil, err
	}
	p, err := identity.ListManagers(ctx, act, lq)
	if err != nil {
		return nil, err
	}
	out := make([]nameOption, 0, len(p.Rows))
	for _, m := range p.Rows {
		out = append(out, nameOption{ID: m.ID, Name: managerName(&m.Manager)})
	}
	return out, nil
}

func planOptions(ctx context.Context, act *app.Actor) ([]nameOption, error) {
	if !act.Can(subs.PermProfilesIndex) {
		return nil, nil
	}
	lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}}, subs.ProfileListSpec())
	if err != nil {
		return nil, err
	}
	p, err := subs.ListProfiles(ctx, act, lq)
	if err != nil {
		return nil, err
	}
	out := make([]nameOption, 0, len(p.Rows))
	for _, r := range p.Rows {
		out = append(out, nameOption{ID: r.ID, Name: r.Name})
	}
	return out, nil
}

func nasOptions(ctx context.Context, act *app.Actor) ([]nameOption, error) {
	if !act.Can(aaa.PermNasIndex) {
		return nil, nil
	}
	rows, err := aaa.ListNAS(ctx, act)
	if err != nil {
		return nil, err
	}
	out := make([]nameOption, 0, len(rows))
	for _, r := range rows {
		out = append(out, nameOption{ID: r.ID, Name: r.Name})
	}
	return out, nil
}

// nameToID reads a name filter's value: the name of one of the options
// (case-insensitive), or, for links made before names, a number that is
// one of the options' ids.
func nameToID(opts []nameOption, val string) (int64, bool) {
	val = strings.TrimSpace(val)
	for _, o := range opts {
		if strings.EqualFold(o.Name, val) {
			return o.ID, true
		}
	}
	if id, err := strconv.ParseInt(val, 10, 64); err == nil {
		for _, o := range opts {
			if o.ID == id {
				return id, true
			}
		}
	}
	return 0, false
}

// idToName is the name an option's id shows in its field (the value
// itself when it names no option).
func idToName(opts []nameOption, val string) string {
	if id, ok := nameToID(opts, val); ok {
		for _, o := range opts {
			if o.ID == id {
				return o.Name
			}
		}
	}
	return val
}

// reportNames gathers the options of a report's name filters the caller
// may list (a filter whose records it may not list is absent).
func reportNames(ctx context.Context, act *app.Actor, d *reportDef) (map[string][]nameOption, error) {
	out := map[string][]nameOption{}
	for k := range d.Spec.Filters {
		src := nameSources[k]
		if src == nil {
			continue
		}
		opts, err := src(ctx, act)
		if err != nil {
			return nil, err
		}
		if opts != nil {
			out[k] = opts
		}
	}
	return out, nil
}
