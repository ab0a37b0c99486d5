package console_test

// Every report page draws a chart over time: each report has a time
// column to chart by, and each report page with rows draws its chart
// (one page load per report).

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"xr/app"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/web/console"
)

func TestReportsHaveTimeAxis(t *testing.T) {
	t.Parallel()
	for _, d := range console.ReportDefs {
		_, measure, unit, ok := console.ChartAxis(d)
		if !ok {
			t.Errorf("%s: no time column to chart by", d.Key)
		}
		if measure == "" && unit != "count" {
			t.Errorf("%s: rows counted in %q", d.Key, unit)
		}
	}
}

func TestConsoleReportChartsInBrowser(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	k := s.Kit
	plan := webtest.CreatePlan(t, k, "Basic")
	for _, name := range []string{"ada", "bob"} {
		id := s.User("", map[string]any{"username": name, "profile_id": plan})
		s.Call("POST", fmt.Sprintf("/users/%d/deposit", id), s.Tok, map[string]any{"amount": 10, "request_id": "dep-" + name})
		if r := s.Call("POST", fmt.Sprintf("/users/%d/activation", id), s.Tok, map[string]any{"request_id": "act-" + name}); r.Status != 200 {
			t.Fatalf("activation: %d %s", r.Status, r.Body)
		}
		now := time.Now().UTC()
		if _, err := s.Ten.DB.W.ExecContext(context.Background(), `INSERT INTO radius_sessions(user_id, nas_id, acct_session_id, username, start_time, stop_time, session_time, input_octets, output_octets)
			VALUES (?, 1, ?, ?, ?, ?, 60, 1000, 9000)`, id, "s-"+name, name, app.FormatTime(now.Add(-time.Minute)), app.FormatTime(now)); err != nil {
			t.Fatal(err)
		}
	}
	// The reports this seed fills must chart; any other report that has
	// rows must chart too.
	mustChart := map[string]bool{"activations": true, "activation-stats": true, "profits": true, "users": true, "sessions": true, "traffic": true}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	charted := 0
	for _, d := range console.ReportDefs {
		var rows, canvases int
		b.Run(d.Key, chromedp.Navigate(b.Base+"/reports/"+d.Key), chromedp.WaitVisible("#report-table", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelectorAll("#report-table tbody tr td:not([colspan])").length`, &rows),
			chromedp.Evaluate(`document.querySelectorAll("#report-chart canvas").length`, &canvases))
		switch {
		case (rows > 0 || mustChart[d.Key]) && canvases != 1:
			t.Errorf("%s: %d cells, %d chart canvases", d.Key, rows, canvases)
		case canvases == 1:
			charted++
		}
	}
	if charted < len(mustChart) {
		t.Fatalf("%d reports charted", charted)
	}
}
