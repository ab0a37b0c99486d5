package console_test

// Browser test of the report pages and the dashboard. Helpers carry the
// prefix crp.

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/app/identity"
	"xr/app/reports"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/web"
	"xr/web/console"
)

// crpTiles reads the aggregate tiles of a report page: key → raw value.
func crpTiles(b *browsertest.Browser) map[string]string {
	b.T.Helper()
	var m map[string]string
	b.Run("tiles", chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("#aggregates [data-agg]")].map(e => [e.dataset.agg, e.dataset.value]))`, &m))
	return m
}

// crpSame fails unless the page's tiles are the API's meta.aggregates.
func crpSame(t *testing.T, what string, tiles map[string]string, api map[string]any) {
	t.Helper()
	if len(api) == 0 || len(tiles) != len(api) {
		t.Fatalf("%s: tiles %v, API aggregates %v", what, tiles, api)
	}
	for k, v := range api {
		got, err := strconv.ParseFloat(tiles[k], 64)
		if f, _ := v.(float64); err != nil || got != f {
			t.Fatalf("%s: tile %s = %q, API %v", what, k, tiles[k], v)
		}
	}
}

// TestConsoleReportsInBrowser: the dashboard's tiles count what the API
// counts and link to their pages; the reports index; a report page with
// a date range shows the API's meta.aggregates for the same filters as
// tiles and the rows; a bad date is refused beside its field; the
// subscribers report exports its subscribers as CSV through the export
// job, with the progress bar and a download link.
func TestConsoleReportsInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	webtest.StartJobs(t, k)
	plan := webtest.CreatePlan(t, k, "Basic")
	var ids []int64
	for i, name := range []string{"ada", "bob", "cyd"} {
		id := s.User("", map[string]any{"username": name, "profile_id": plan})
		ids = append(ids, id)
		if i < 2 {
			s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 10, "request_id": "dep-" + name})
			if r := s.Call("POST", fmt.Sprintf("/users/%d/activation", id), s.Tok, map[string]any{"request_id": "act-" + name}); r.Status != 200 {
				t.Fatalf("activation: %d %s", r.Status, r.Body)
			}
		}
	}
	webtest.CreateSeries(t, k, s.Tok, map[string]any{"type": "refill", "quantity": 4, "face_value": 5, "expiration": webtest.NextYear, "request_id": app.NewUUID()})
	if _, err := s.Ten.DB.W.ExecContext(context.Background(), `INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES ('live-1', ?, 'ada', ?)`,
		ids[0], app.StampNow()); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(app.DateLayout)
	b := browsertest.New(t, k)
	b.SignIn("owner")

	// The dashboard, against the API.
	b.Run("dashboard", chromedp.Navigate(b.Base+"/"), chromedp.WaitVisible("#dash-tiles", chromedp.ByQuery))
	tile := func(name string) string { return b.Text(fmt.Sprintf(`[data-tile=%q] .n`, name)) }
	live := s.Call("GET", "/admin/sessions", s.Tok, nil)
	acts := s.Call("GET", "/admin/reports/activations?filter[from]="+today+"&filter[to]="+today, s.Tok, nil)
	agg, _ := acts.Meta()["aggregates"].(map[string]any)
	if live.Status != 200 || acts.Status != 200 {
		t.Fatalf("API: %d %d", live.Status, acts.Status)
	}
	for name, want := range map[string]string{
		"sessions": fmt.Sprint(live.Meta()["total"]), "activations": fmt.Sprint(agg["count"]), "total": "3",
		"cards_available": "4", "cards_series": "1 / 1", "expired": "0", "never_activated": "1", // cyd was never activated
	} {
		if got := tile(name); got != want {
			t.Fatalf("dashboard tile %s = %q, want %q", name, got, want)
		}
	}
	if tile("sessions") != "1" || tile("activations") != "2" || !strings.HasPrefix(tile("revenue"), "6") || fmt.Sprint(agg["revenue"]) != "6" {
		t.Fatalf("dashboard: sessions %q activations %q revenue %q (API %v)", tile("sessions"), tile("activations"), tile("revenue"), agg)
	}
	b.Axe("dashboard")
	b.Shot("dashboard")
	// A tile opens its page: today's activations.
	ccgEnter(b, `[data-tile="activations"]`, chromedp.WaitVisible("#report-table", chromedp.ByQuery))
	var from string
	b.Run("from", chromedp.Value("#f-from", &from, chromedp.ByQuery))
	if from != today || cwhCount(b, "#report-table tbody tr") != 2 {
		t.Fatalf("activations tile opened from=%q with %d rows", from, cwhCount(b, "#report-table tbody tr"))
	}

	// The index lists the reports the owner may read.
	b.Run("index", chromedp.Navigate(b.Base+"/reports"), chromedp.WaitVisible(".report-list", chromedp.ByQuery))
	if n := cwhCount(b, "[data-report]"); n != len(console.ReportDefs) {
		t.Fatalf("index lists %d reports, want %d", n, len(console.ReportDefs))
	}
	b.Axe("reports index")

	// A report with a date range typed into the form: the tiles are the
	// API's aggregates for the same filters.
	ccgEnter(b, `a[data-report="activation-stats"]`, chromedp.WaitVisible("#f-from", chromedp.ByQuery))
	b.Run("period", chromedp.SetValue("#f-from", today, chromedp.ByQuery), chromedp.SetValue("#f-to", today, chromedp.ByQuery))
	ccgEnter(b, "#apply", chromedp.WaitVisible(`#aggregates [data-agg="activations"][data-value="2"]`, chromedp.ByQuery))
	api := s.Call("GET", "/admin/reports/activation-stats?filter[from]="+today+"&filter[to]="+today, s.Tok, nil)
	crpSame(t, "activation-stats", crpTiles(b), api.Meta()["aggregates"].(map[string]any))
	if got := b.Text("#report-table tbody"); !strings.Contains(got, "Basic") || !strings.Contains(got, today) {
		t.Fatalf("activation-stats rows %q", got)
	}
	b.Axe("report")
	b.Shot("report")
	// A period in the past: nothing, and the tiles say so.
	b.Run("past", chromedp.Navigate(b.Base+"/reports/activation-stats?from=2001-01-01&to=2001-01-31"), chromedp.WaitVisible("#report-table", chromedp.ByQuery))
	past := s.Call("GET", "/admin/reports/activation-stats?filter[from]=2001-01-01&filter[to]=2001-01-31", s.Tok, nil)
	crpSame(t, "activation-stats in 2001", crpTiles(b), past.Meta()["aggregates"].(map[string]any))
	// A date that does not parse is refused beside its field.
	b.Run("bad date", chromedp.Navigate(b.Base+"/reports/activations?from=yesterday"), chromedp.WaitVisible("#e-from", chromedp.ByQuery))
	if st := ccgStatus(b); st != 400 {
		t.Fatalf("bad date answered %d", st)
	}

	// The subscribers report, active only, then its export.
	b.Run("users report", chromedp.Navigate(b.Base+"/reports/users?"+url.Values{"state": {"active"}, "to": {today}}.Encode()),
		chromedp.WaitVisible("#export-btn", chromedp.ByQuery))
	ua := s.Call("GET", "/admin/reports/users?filter[state]=active&filter[to]="+today, s.Tok, nil)
	crpSame(t, "users", crpTiles(b), ua.Meta()["aggregates"].(map[string]any))
	if got := b.Text("#report-table tbody"); !strings.Contains(got, "ada") || !strings.Contains(got, "bob") || strings.Contains(got, "cyd") {
		t.Fatalf("users report rows %q", got)
	}
	b.Axe("subscribers report")
	ccgEnter(b, "#export-btn", chromedp.WaitVisible(`#job-progress[data-job-state="done"]`, chromedp.ByQuery))
	var val, max, href string
	var ok bool
	b.Run("bar", chromedp.AttributeValue("#job-bar", "value", &val, nil, chromedp.ByQuery), chromedp.AttributeValue("#job-bar", "max", &max, nil, chromedp.ByQuery),
		chromedp.AttributeValue("#job-next", "href", &href, &ok, chromedp.ByQuery))
	job := ccgScalar(t, k, `SELECT MAX(id) FROM jobs WHERE kind = 'export.users'`)
	if val != "2" || max != "2" || !ok || href != fmt.Sprintf("/reports/exports/%d/download", job) {
		t.Fatalf("progress value %q max %q, link %q", val, max, href)
	}
	b.Axe("export progress")
	var csv string
	b.Run("download", chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(r => r.headers.get("content-type") + "\n" + r.status + "\n").then(h => fetch(%q).then(r => r.text()).then(t => h + t))`, href, href),
		&csv, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "text/csv") || lines[1] != "200" || !strings.HasPrefix(lines[2], "id,username") {
		t.Fatalf("export:\n%s", csv)
	}
	if body := strings.Join(lines[3:], "\n"); !strings.Contains(body, ",ada,") || !strings.Contains(body, ",bob,") || strings.Contains(body, ",cyd,") {
		t.Fatalf("exported rows:\n%s", body)
	}
	b.NoDialog("reports")
}

// TestConsoleReportDefinitions: every report's columns are fields of its
// row, and every column, filter, choice and aggregate has a label in the
// English and Arabic catalogues (the aggregates as the owner's call of the
// report returns them).
func TestConsoleReportDefinitions(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	text := web.PageCatalogue()
	label := func(key string) {
		t.Helper()
		for _, lang := range []string{"en", "ar"} {
			if text[lang][key] == "" {
				t.Errorf("no %s text for %s", lang, key)
			}
		}
	}
	act := k.System("acme")
	for _, d := range console.ReportDefs {
		label("report.t." + d.Key)
		label("report.d." + d.Key)
		label("report.g." + d.Group)
		fields := console.JSONFields(console.ReportRow(d))
		for _, c := range d.Cols {
			if _, ok := fields[c]; !ok {
				t.Errorf("%s: no field %s in %s", d.Key, c, console.ReportRow(d))
			}
			label("report.f." + c)
		}
		for _, f := range console.ReportParams(d) {
			label("report.f." + f)
			for _, v := range d.Choices[f] {
				label("report.v." + v)
			}
		}
		q, err := reports.Parse(url.Values{}, d.Spec)
		if err != nil {
			t.Fatal(err)
		}
		_, meta, err := console.ReportRun(d, context.Background(), act, q)
		if err != nil {
			t.Fatalf("%s: %v", d.Key, err)
		}
		m, _ := meta.Aggregates.(map[string]any)
		if len(m) == 0 {
			t.Errorf("%s: no aggregates", d.Key)
		}
		for a := range m {
			label("report.f." + a)
		}
	}
	for _, l := range []string{"en", "ar"} {
		for key := range text["en"] {
			if (strings.HasPrefix(key, "report.") || strings.HasPrefix(key, "webhook.")) && text[l][key] == "" {
				t.Errorf("%s: no text for %s", l, key)
			}
		}
	}
}

// TestConsoleReportsPermissions: a manager who may read one report sees
// only that report in the index and the menu; the other reports, the
// export and the webhook pages answer 403, as their API rows do.
func TestConsoleReportsPermissions(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	sys := k.System("acme")
	role, err := identity.CreateRole(context.Background(), sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "sales"},
		Permissions: app.Opt[[]string]{Set: true, V: []string{"prm_report_activations"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.CreateManager(context.Background(), sys, identity.ManagerInput{Username: app.Opt[string]{Set: true, V: "clerk"},
		Password: app.Opt[string]{Set: true, V: webtest.Password}, RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}}); err != nil {
		t.Fatal(err)
	}
	cookie := k.ConsoleCookie("acme", "clerk", webtest.Password)
	get := func(p string) webtest.Resp { return k.Do("GET", "acme", p, "", nil, "Cookie", cookie) }
	idx := get("/reports")
	if idx.Status != 200 || !strings.Contains(string(idx.Body), `data-report="activations"`) || strings.Count(string(idx.Body), "data-report=") != 1 {
		t.Fatalf("index: %d %s", idx.Status, idx.Body)
	}
	if body := string(get("/").Body); !strings.Contains(body, `href="/reports"`) || strings.Contains(body, `href="/webhooks"`) {
		t.Fatalf("menu: %s", body)
	}
	if r := get("/reports/activations?from=2020-01-01"); r.Status != 200 || !strings.Contains(string(r.Body), `id="aggregates"`) {
		t.Fatalf("activations: %d", r.Status)
	}
	for _, p := range []string{"/reports/users", "/reports/profits", "/webhooks", "/webhooks/1", "/reports/exports/1/download"} {
		if r := get(p); r.Status != 403 {
			t.Fatalf("%s: %d, want 403", p, r.Status)
		}
	}
	r := k.Do("POST", "acme", "/reports/users/export", "", "format=csv", "Cookie", cookie, "Content-Type", "application/x-www-form-urlencoded")
	if r.Status != 403 {
		t.Fatalf("export: %d, want 403", r.Status)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM jobs WHERE kind = 'export.users'`); n != 0 {
		t.Fatalf("an export was queued: %d", n)
	}
}
