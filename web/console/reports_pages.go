package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/app/cards"
	"xr/app/reports"
	"xr/app/subs"
	"xr/web"
)

// Report pages: an index of the reports the caller may read, and one
// generic page that renders any of them from its definition below (the
// report's list spec gives the filters, its row type the cells, its
// meta.aggregates the tiles above the table). Each report page is a row
// with the permission and buckets of the report's API row
// (web/reports_routes.go, /admin/reports/*) and calls the same app function.
// The subscribers report can be exported (CSV or XLSX) through the
// subscriber export job of POST /exports.

// reportSource is a report's app function with its row type erased: the
// rows come back as reflect values, read by their JSON field names.
type reportSource struct {
	row reflect.Type
	run func(context.Context, *app.Actor, app.ListQuery) ([]reflect.Value, app.Meta, error)
}

func reportOf[T any](fn func(context.Context, *app.Actor, app.ListQuery) (app.Page[T], error)) reportSource {
	return reportSource{row: reflect.TypeFor[T](), run: func(ctx context.Context, act *app.Actor, q app.ListQuery) ([]reflect.Value, app.Meta, error) {
		p, err := fn(ctx, act, q)
		if err != nil {
			return nil, app.Meta{}, err
		}
		rows := make([]reflect.Value, len(p.Rows))
		for i := range p.Rows {
			rows[i] = reflect.ValueOf(p.Rows[i])
		}
		return rows, p.Meta, nil
	}}
}

// reportDef is one report: its key (URL /reports/<key>, texts
// report.t.<key> and report.d.<key>, API row GET /admin/reports/<key>,
// whose permission and buckets its page takes), its list spec and app
// function, the row fields shown as columns (by
// JSON name; labels report.f.<name>), whether q searches it, the choices
// of its enumerated filters, and whether the subscriber export applies.
type reportDef struct {
	Key     string
	Group   string
	Spec    app.ListSpec
	Src     reportSource
	Cols    []string
	Search  bool
	Choices map[string][]string
	Export  bool
	Chart   string // the chart's measure column when not the first money column
}

// reportDefs is the table of reports, in the order of the index.
var reportDefs = []*reportDef{
	{Key: "activations", Group: "sales", Spec: reports.ActivationsSpec,
		Src: reportOf(reports.Activations), Search: true, Choices: map[string][]string{"payer": {"subscriber", "reseller", "none"}},
		Cols: []string{"created_at", "username", "profile", "price", "payer", "actor", "manager", "new_expiration", "refunded"}},
	{Key: "activation-stats", Group: "sales", Spec: reports.ActivationStatsSpec,
		Src: reportOf(reports.ActivationStats), Choices: map[string][]string{"payer": {"subscriber", "reseller", "none"}},
		Cols: []string{"day", "profile", "activations", "refunded", "users", "revenue", "subscriber_paid", "reseller_paid"}},
	{Key: "profits", Group: "sales", Spec: reports.ProfitsSpec, Src: reportOf(reports.Profits),
		Cols: []string{"day", "manager", "activations", "activation_revenue", "addons", "addon_revenue", "revenue", "reseller_cost", "net"}},
	{Key: "cards-usage", Group: "cards", Spec: reports.CardsUsageSpec, Src: reportOf(reports.CardsUsage),
		Cols: []string{"day", "series", "card_mode", "plan", "redemptions", "reversed", "face_value", "paid_amount", "effect_value"}},
	{Key: "cards-transfer", Group: "cards", Spec: reports.CardsTransferSpec,
		Src: reportOf(reports.CardsTransfer), Search: true, Choices: map[string][]string{"kind": {"cards", "series", "revert"}},
		Cols: []string{"created_at", "kind", "series", "from_manager", "to_manager", "cards", "unit_price", "amount", "actor"}},
	{Key: "debts", Group: "debts", Spec: reports.DebtsSpec, Src: reportOf(reports.Debts),
		Search: true, Choices: map[string][]string{"kind": {"manager", "user"}},
		Cols: []string{"kind", "name", "balance", "owed", "last_movement_at"}},
	{Key: "debtors-users", Group: "debts", Spec: reports.DebtorsUsersSpec,
		Src: reportOf(reports.DebtorsUsers), Search: true,
		Cols: []string{"username", "name", "phone", "manager", "profile", "balance", "debt", "enabled", "expiration", "last_movement_at"}},
	{Key: "debtors-managers", Group: "debts", Spec: reports.DebtorsManagersSpec,
		Src: reportOf(reports.DebtorsManagers), Search: true,
		Cols: []string{"manager", "balance", "debt_limit", "negative_balance", "loan_debt", "total_owed", "last_movement_at"}},
	{Key: "claims-managers", Group: "debts", Spec: reports.ClaimsSpec,
		Src: reportOf(reports.ClaimsManagers), Search: true,
		Cols: []string{"manager", "balance", "outstanding", "loaned", "repaid", "last_loan_at"}},
	{Key: "manager-journal", Group: "managers", Spec: reports.ManagerJournalSpec,
		Src: reportOf(reports.ManagerJournal), Search: true,
		Cols: []string{"created_at", "manager", "kind", "amount", "balance_after", "actor", "document_no", "note"}},
	{Key: "money-transfer", Group: "managers", Spec: reports.MoneyTransferSpec,
		Src:  reportOf(reports.MoneyTransfer),
		Cols: []string{"created_at", "manager", "direction", "counterpart", "amount", "balance_after", "actor", "note"}},
	{Key: "manager-invoices", Group: "managers", Spec: reports.DocumentsSpec,
		Src: reportOf(reports.ManagerInvoices), Search: true, Cols: []string{"created_at", "number", "manager", "amount", "actor"}},
	{Key: "manager-receipts", Group: "managers", Spec: reports.DocumentsSpec,
		Src: reportOf(reports.ManagerReceipts), Search: true, Cols: []string{"created_at", "number", "manager", "amount", "actor"}},
	{Key: "gateway-txns", Group: "managers",
		Spec: reports.GatewayTxnsSpec, Src: reportOf(reports.GatewayTxns),
		Cols: []string{"created_at", "gateway", "reference", "amount", "status"}},
	{Key: "users", Group: "network", Spec: reports.UsersSpec, Src: reportOf(reports.Users),
		Search: true, Choices: map[string][]string{"state": {"active", "expired", "disabled"}}, Export: true,
		Cols: []string{"username", "name", "manager", "profile", "state", "online", "expiration", "balance", "sessions", "total_bytes", "activations", "activation_revenue"}},
	{Key: "sessions", Group: "network", Spec: reports.SessionsSpec, Src: reportOf(reports.Sessions),
		Search: true, Chart: "total_bytes", Cols: []string{"start_time", "stop_time", "username", "nas", "framed_ip", "mac", "duration", "total_bytes", "close_reason"}},
	{Key: "traffic", Group: "network", Spec: reports.TrafficSpec, Src: reportOf(reports.Traffic),
		Search: true, Choices: map[string][]string{"group_by": {"user", "day"}}, Chart: "total_bytes",
		Cols: []string{"day", "username", "manager", "users", "sessions", "seconds", "input_bytes", "output_bytes", "total_bytes", "last_seen"}},
	{Key: "suspicious", Group: "network", Spec: reports.SuspiciousSpec,
		Src: reportOf(reports.Suspicious), Search: true,
		Cols: []string{"username", "manager", "sessions", "distinct_macs", "short_sessions", "stale_closed", "last_seen", "reasons"}},
}

// api is the API row of a report: its page takes the row's permission
// and buckets.
func (d *reportDef) api() string { return "GET /admin/reports/" + d.Key }

// exportAPI is the API row of the subscriber export.
const exportAPI = "POST /exports"

func (s *site) reportPages() []web.Route {
	// The index is for a caller who may read any of the reports.
	var perms []app.Perm
	for _, d := range reportDefs {
		for _, p := range s.Server().APIRoute(d.api()).Perms {
			if !slices.Contains(perms, p) {
				perms = append(perms, p)
			}
		}
	}
	rows := []web.Route{{M: "GET", P: "/reports", Access: web.Staff, Perms: perms, H: s.pageReports, Menu: "reports"}}
	for _, d := range reportDefs {
		rows = append(rows, web.Route{M: "GET", P: "/reports/" + d.Key, Access: web.Staff, API: d.api(), H: s.pageReport(d)})
		if d.Export {
			rows = append(rows, web.Route{M: "POST", P: "/reports/" + d.Key + "/export", Access: web.Staff, API: exportAPI, H: s.pageReportExport(d)})
		}
	}
	return append(rows, web.Route{M: "GET", P: "/reports/exports/{id}/download", Access: web.Staff, File: true, API: "GET /exports/{id}/download"})
}

// reportGroup is a section of the index.
type reportGroup struct {
	Key     string
	Reports []*reportDef
}

func (s *site) pageReports(c *web.Ctx) error {
	v := s.NewView(c, "reports", "menu.reports")
	var groups []reportGroup
	for _, d := range reportDefs {
		if !c.Actor.Can(s.Server().APIRoute(d.api()).Perms...) {
			continue
		}
		if len(groups) == 0 || groups[len(groups)-1].Key != d.Group {
			groups = append(groups, reportGroup{Key: d.Group})
		}
		g := &groups[len(groups)-1]
		g.Reports = append(g.Reports, d)
	}
	v.Data = groups
	return s.Render(c, http.StatusOK, "reports", v)
}

// reportFilter is one filter field of a report page.
type reportFilter struct {
	Name    string // the page's parameter: the API filter's key
	Input   string // date, number, bool, choice, name, text
	Value   string
	Choices []string
	Options []nameOption // a name filter's records
}

type reportTile struct{ Key, Text, Raw string }

type reportCol struct {
	Name string
	Num  bool
}

type reportCell struct {
	Text, Href string
	Num        bool
}

// reportExport is the export form of a report page.
type reportExport struct {
	Hidden    [][2]string // the page's filters, carried to the export
	RequestID string
	Formats   []string
	Blocked   string // text key: why these filters cannot be exported
}

// reportView is the generic report page's data.
type reportView struct {
	Def         *reportDef
	Filters     []reportFilter
	Q           string
	Tiles       []reportTile
	Cols        []reportCol
	Rows        [][]reportCell
	Meta        app.Meta
	Prev, Next  string
	Export      *reportExport
	ProgressURL string
	ChartJSON   string // the chart's data (reportChart); "" draws none
}

// reportParams are the page's query parameters of a report: the period,
// q, the spec's other filters, the page.
func reportParams(d *reportDef) []string {
	out := []string{"from", "to"}
	var rest []string
	for k := range d.Spec.Filters {
		if k != "from" && k != "to" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	if d.Search {
		out = append(out, "q")
	}
	return append(out, rest...)
}

// localDay reads a date of the page (the tenant's timezone) as the UTC
// timestamp of its first (or, end, last) second, as the API's filters take.
func localDay(raw string, loc *time.Location, end bool) (string, bool) {
	t, err := time.ParseInLocation(app.DateLayout, strings.TrimSpace(raw), loc)
	if err != nil {
		return "", false
	}
	if end {
		t = t.AddDate(0, 0, 1).Add(-time.Second)
	}
	return app.FormatTime(t), true
}

// reportQuery maps the page's parameters onto the API's list query; a
// date that does not parse is refused naming the page's field.
func reportQuery(d *reportDef, q url.Values, loc *time.Location, names map[string][]nameOption) (url.Values, error) {
	out := url.Values{"page_size": {"25"}}
	for _, k := range reportParams(d) {
		val := strings.TrimSpace(q.Get(k))
		if val == "" {
			continue
		}
		switch k {
		case "q":
			out.Set("q", val)
		case "from", "to":
			ts, ok := localDay(val, loc, k == "to")
			if !ok {
				return nil, app.ErrValidation("invalid_filter", k)
			}
			out.Set("filter["+k+"]", ts)
		default:
			if opts, named := names[k]; named {
				id, ok := nameToID(opts, val)
				if !ok {
					return nil, app.ErrValidation("invalid_filter", k)
				}
				val = strconv.FormatInt(id, 10)
			}
			out.Set("filter["+k+"]", val)
		}
	}
	if p := q.Get("page"); p != "" {
		out.Set("page", p)
	}
	return out, nil
}

// fieldOfFilter names the page field of an API filter error.
func fieldOfFilter(f string) string {
	return strings.TrimSuffix(strings.TrimPrefix(f, "filter["), "]")
}

func (s *site) pageReport(d *reportDef) web.HandlerFunc {
	return func(c *web.Ctx) error {
		v := s.NewView(c, "reports", "report.t."+d.Key)
		q := c.Query()
		rv := &reportView{Def: d, Q: q.Get("q")}
		v.Data = rv
		names, err := reportNames(c.R.Context(), c.Actor, d)
		if err != nil {
			return err
		}
		keep := url.Values{}
		for _, k := range reportParams(d) {
			val := q.Get(k)
			if val != "" {
				keep.Set(k, val)
			}
			if k == "q" {
				continue
			}
			f := reportFilter{Name: k, Value: val, Choices: d.Choices[k]}
			opts, named := names[k]
			switch kind := d.Spec.Filters[k]; {
			case named:
				f.Input, f.Options, f.Value = "name", opts, idToName(opts, val)
			case nameSources[k] != nil:
				continue // the caller may not list the records it names
			case kind == app.FilterTime:
				f.Input = "date"
			case kind == app.FilterInt:
				f.Input = "number"
			case kind == app.FilterBool:
				f.Input = "bool"
			case len(f.Choices) > 0:
				f.Input = "choice"
			default:
				f.Input = "text"
			}
			rv.Filters = append(rv.Filters, f)
		}
		for _, name := range d.Cols {
			rv.Cols = append(rv.Cols, reportCol{Name: name, Num: numericField(d.Src.row, name)})
		}
		if d.Export && c.Actor.Can(s.Server().APIRoute(exportAPI).Perms...) {
			rv.Export = &reportExport{RequestID: app.NewUUID(), Formats: subs.ExportFormats}
			for _, k := range reportParams(d) {
				val := keep.Get(k)
				if id, ok := nameToID(names[k], val); ok {
					val = strconv.FormatInt(id, 10) // the export takes the id
				}
				if val != "" {
					rv.Export.Hidden = append(rv.Export.Hidden, [2]string{k, val})
				}
			}
			if keep.Get("manager_id") != "" {
				rv.Export.Blocked = "report.export_no_manager"
			}
			if j, err := strconv.ParseInt(q.Get("export"), 10, 64); err == nil && j > 0 {
				rv.ProgressURL = jobProgressURL(j, fmt.Sprintf("/reports/exports/%d/download", j), "report.download")
			}
		}
		api, err := reportQuery(d, q, v.Loc, names)
		var lq app.ListQuery
		if err == nil {
			lq, err = reports.Parse(api, d.Spec)
		}
		var rows []reflect.Value
		if err == nil {
			rows, rv.Meta, err = d.Src.run(c.R.Context(), c.Actor, lq)
		}
		if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
			msg := web.Message(v.Lang, e.Reason, e.Code)
			if f := fieldOfFilter(e.Field); f != "q" && slices.Contains(reportParams(d), f) {
				v.Errors[f] = msg
			} else {
				v.Errors["_"] = msg // shown above the table
			}
			return s.Render(c, refusedStatus(c), "report", v)
		}
		if err != nil {
			return err
		}
		rv.Tiles = reportTiles(v, rv.Meta.Aggregates)
		rv.ChartJSON = reportChart(v, d, rows)
		canUsers := c.Actor.Can(subs.PermUsersIndex)
		for _, r := range rows {
			rv.Rows = append(rv.Rows, reportCells(v, d, r, canUsers))
		}
		rv.Prev, rv.Next = web.Pager("/reports/"+d.Key, keep, rv.Meta)
		return s.Render(c, http.StatusOK, "report", v)
	}
}

// jsonFields maps a row type's JSON names to its fields (promoted fields
// of embedded structs included).
var jsonFieldsCache sync.Map

func jsonFields(t reflect.Type) map[string][]int {
	if m, ok := jsonFieldsCache.Load(t); ok {
		return m.(map[string][]int)
	}
	m := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if _, dup := m[name]; !dup {
			m[name] = f.Index
		}
	}
	jsonFieldsCache.Store(t, m)
	return m
}

var (
	rpMoneyType = reflect.TypeFor[app.Money]()
	rpTimeType  = reflect.TypeFor[app.Time]()
)

// numericField says whether a column is a number (aligned to the end).
func numericField(t reflect.Type, name string) bool {
	idx, ok := jsonFields(t)[name]
	if !ok {
		return false
	}
	ft := t.FieldByIndex(idx).Type
	if ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	switch ft.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64:
		return true
	}
	return false
}

// reportValue renders one value of a report: money in the tenant's
// currency, times in its timezone, byte counts and durations readable.
func reportValue(v *web.View, name string, x reflect.Value) string {
	if x.Kind() == reflect.Pointer {
		if x.IsNil() {
			return "—"
		}
		x = x.Elem()
	}
	switch {
	case x.Type() == rpMoneyType:
		return v.Money(x.Interface().(app.Money))
	case x.Type() == rpTimeType:
		return v.When(x.Interface().(app.Time))
	}
	switch x.Kind() {
	case reflect.Bool:
		if x.Bool() {
			return v.T("report.yes")
		}
		return v.T("report.no")
	case reflect.Int, reflect.Int64:
		n := x.Int()
		switch {
		case strings.HasSuffix(name, "bytes"):
			return web.HumanBytes(n)
		case name == "seconds" || name == "duration":
			return v.Duration(n) // days past a day: a total fits its tile
		}
		return strconv.FormatInt(n, 10)
	case reflect.String:
		if x.String() == "" {
			return "—"
		}
		return x.String()
	case reflect.Slice:
		parts := make([]string, x.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(x.Index(i).Interface())
		}
		if len(parts) == 0 {
			return "—"
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(x.Interface())
}

// reportCells renders a row; a username links to the subscriber's record
// when the caller may see subscribers.
func reportCells(v *web.View, d *reportDef, row reflect.Value, canUsers bool) []reportCell {
	fields := jsonFields(row.Type())
	out := make([]reportCell, 0, len(d.Cols))
	for _, name := range d.Cols {
		idx, ok := fields[name]
		if !ok {
			out = append(out, reportCell{Text: "—"})
			continue
		}
		cell := reportCell{Text: reportValue(v, name, row.FieldByIndex(idx)), Num: numericField(row.Type(), name)}
		if name == "username" && canUsers {
			if ui, ok := fields["user_id"]; ok {
				u := row.FieldByIndex(ui)
				if u.Kind() == reflect.Pointer && !u.IsNil() {
					u = u.Elem()
				}
				if u.Kind() == reflect.Int64 && u.Int() > 0 {
					cell.Href = fmt.Sprintf("/users/%d", u.Int())
				}
			}
		}
		out = append(out, cell)
	}
	return out
}

// reportTiles are meta.aggregates as tiles: counts first, then money, each
// by name; Raw is the value as the API writes it.
func reportTiles(v *web.View, aggs any) []reportTile {
	m, _ := aggs.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		_, mi := m[keys[i]].(app.Money)
		_, mj := m[keys[j]].(app.Money)
		if mi != mj {
			return !mi
		}
		return keys[i] < keys[j]
	})
	out := make([]reportTile, 0, len(keys))
	for _, k := range keys {
		t := reportTile{Key: k}
		switch x := m[k].(type) {
		case app.Money:
			t.Text, t.Raw = v.Money(x), x.String()
		case int64:
			t.Text, t.Raw = reportValue(v, k, reflect.ValueOf(x)), strconv.FormatInt(x, 10)
		default:
			t.Text, t.Raw = fmt.Sprint(x), fmt.Sprint(x)
		}
		out = append(out, t)
	}
	return out
}

// reportExportInput maps the subscribers report's filters onto the
// subscriber export (the filters of GET /users): q, the plan, the state
// (active = enabled and not expired, expired = enabled and expired,
// disabled), and the end of the period (subscribers created by then).
func reportExportInput(f url.Values, loc *time.Location) (subs.ExportInput, error) {
	in := subs.ExportInput{Resource: "users", Q: strings.TrimSpace(f.Get("q")), RequestID: f.Get("request_id"), Filter: map[string]any{}}
	switch fm := f.Get("format"); fm {
	case "", "csv", "xlsx":
		in.Format = subs.ExportFormat(fm)
	default:
		return in, app.ErrValidation("invalid_enum", "format").With("allowed", subs.ExportFormats)
	}
	if p := strings.TrimSpace(f.Get("profile_id")); p != "" {
		in.Filter["profile_id"] = p
	}
	switch f.Get("state") {
	case "":
	case "active":
		in.Filter["enabled"], in.Filter["expired"] = "true", "false"
	case "expired":
		in.Filter["enabled"], in.Filter["expired"] = "true", "true"
	case "disabled":
		in.Filter["enabled"] = "false"
	default:
		return in, app.ErrValidation("invalid_filter", "state")
	}
	if to := strings.TrimSpace(f.Get("to")); to != "" {
		ts, ok := localDay(to, loc, true)
		if !ok {
			return in, app.ErrValidation("invalid_filter", "to")
		}
		in.Filter["created_to"] = ts
	}
	if strings.TrimSpace(f.Get("manager_id")) != "" {
		return in, app.ErrValidation("invalid_filter", "manager_id")
	}
	return in, nil
}

// pageReportExport queues the subscriber export with the report's filters
// and goes back to the report, which shows the job's progress and then
// the download link.
func (s *site) pageReportExport(d *reportDef) web.HandlerFunc {
	return func(c *web.Ctx) error {
		if err := web.ParseForm(c); err != nil {
			return err
		}
		f := c.R.PostForm
		v := s.NewView(c, "reports", "report.t."+d.Key)
		back := url.Values{}
		for _, k := range reportParams(d) {
			if val := f.Get(k); val != "" {
				back.Set(k, val)
			}
		}
		in, err := reportExportInput(f, v.Loc)
		if err == nil {
			var out *subs.ExportJob
			out, err = subs.CreateExport(c.R.Context(), c.Actor, in)
			if err == nil {
				back.Set("export", strconv.FormatInt(out.ExportID, 10))
				s.SetFlash(c, v.T("report.export_queued"), false)
				return web.Redirect(c, "/reports/"+d.Key+"?"+back.Encode())
			}
		}
		if e := app.AsError(err); e != nil && e.Status < 500 && e.Status != http.StatusForbidden && e.Status != http.StatusUnauthorized {
			s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
			return web.Redirect(c, "/reports/"+d.Key+"?"+back.Encode())
		}
		return err
	}
}

// dashView is the dashboard's data: each part only for a caller who may
// see it (nil otherwise).
type dashView struct {
	Users    []figureTile
	Sessions *int
	Today    *dashToday
	Cards    *dashCards
}

// figureTile is a subscriber figure of the dashboard: its count and the
// list it counts (the same filter: subs.Figure).
type figureTile struct {
	Figure subs.Figure
	N      int64
	Link   string
	Label  string // console text key
}

// homeFigures are the subscriber figures the home page shows, in order.
var homeFigures = []subs.Figure{subs.FigureTotal, subs.FigureOnline, subs.FigureActive, subs.FigureExpired,
	subs.FigureNeverActivated, subs.FigureExpiring7d, subs.FigureInDebt, subs.FigureDisabled}

func figureTiles(ctx context.Context, act *app.Actor) ([]figureTile, error) {
	if err := act.Require(subs.PermUsersIndex); err != nil {
		return nil, err
	}
	n, err := subs.CountFigures(ctx, act, homeFigures...)
	if err != nil {
		return nil, err
	}
	out := make([]figureTile, 0, len(homeFigures))
	for _, f := range homeFigures {
		out = append(out, figureTileOf(f, n[f]))
	}
	return out, nil
}

// figureTileOf links a figure to the subscriber list it counts.
func figureTileOf(f subs.Figure, n int64) figureTile {
	if f == subs.FigureTotal {
		return figureTile{Figure: f, N: n, Link: "/users", Label: "dash.total"}
	}
	return figureTile{Figure: f, N: n, Link: "/users?" + url.Values{"status": {string(f)}}.Encode(), Label: "users.status_" + string(f)}
}

type dashToday struct {
	Activations int64
	Revenue     app.Money
	Link        string
}

type dashCards struct {
	Series, Ready     int
	Available, Unused int64
}

// dashboardData gathers the dashboard's tiles through the API's app
// functions: the subscribers summary, the live sessions count, today's
// activations and revenue (the activations report over the tenant's
// day), and the prepaid card stock.
func (s *site) dashboardData(c *web.Ctx, v *web.View) (*dashView, error) {
	ctx, act := c.R.Context(), c.Actor
	d := &dashView{}
	var err error
	if act.Can(subs.PermUsersIndex) {
		if d.Users, err = figureTiles(ctx, act); err != nil {
			return nil, err
		}
	}
	if act.Can(reports.PermReportSessions) {
		lq, err := app.ParseList(url.Values{"page_size": {"1"}}, aaa.SessionListSpec)
		if err != nil {
			return nil, err
		}
		p, err := aaa.ListSessions(ctx, act, lq)
		if err != nil {
			return nil, err
		}
		d.Sessions = &p.Meta.Total
	}
	if act.Can(reports.PermReportActivations) {
		day := time.Now().In(v.Loc).Format(app.DateLayout)
		from, _ := localDay(day, v.Loc, false)
		to, _ := localDay(day, v.Loc, true)
		lq, err := reports.Parse(url.Values{"filter[from]": {from}, "filter[to]": {to}, "page_size": {"1"}}, reports.ActivationsSpec)
		if err != nil {
			return nil, err
		}
		p, err := reports.Activations(ctx, act, lq)
		if err != nil {
			return nil, err
		}
		m, _ := p.Meta.Aggregates.(map[string]any)
		n, _ := m["count"].(int64)
		rev, _ := m["revenue"].(app.Money)
		d.Today = &dashToday{Activations: n, Revenue: rev, Link: "/reports/activations?" + url.Values{"from": {day}, "to": {day}}.Encode()}
	}
	if act.Can(cards.PermCardsList) {
		st := &dashCards{}
		for page := 1; page <= 50; page++ {
			lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}, "page": {strconv.Itoa(page)}}, cards.BatchListSpec())
			if err != nil {
				return nil, err
			}
			p, err := cards.ListBatches(ctx, act, lq)
			if err != nil {
				return nil, err
			}
			for _, b := range p.Rows {
				st.Series++
				if b.Status == "ready" && !b.Suspended {
					st.Ready++
				}
				st.Available += b.InStock
				st.Unused += b.Unused
			}
			if !p.Meta.HasNext {
				break
			}
		}
		d.Cards = st
	}
	return d, nil
}
