package console_test

// Browser test of the legacy import's session history and PostgreSQL COPY
// dumps. Helpers carry the prefix cl2.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestConsoleLegacyHistoryInBrowser: a pg_dump in COPY format is analysed
// (its radacct rows counted), started with the session history offered
// and checked: the job page shows the sessions and traffic imported, and
// they are stored as closed sessions of the subscriber.
func TestConsoleLegacyHistoryInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.RunJobsBackground(t, k.App)
	dump, err := filepath.Abs("../../app/dataimport/testdata/freeradius_pg_copy.sql")
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("legacy", chromedp.Navigate(b.Base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery))
	b.Run("analyse", chromedp.SetUploadFiles("#f-file", []string{dump}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	path := cdiPath(b)
	xrtest.Eventually(t, "analysed", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'analysed'`) == 1
	})
	b.Run("analysis", chromedp.Navigate(b.Base+path), chromedp.WaitVisible("#f-sessions", chromedp.ByQuery))
	var checked bool
	b.Run("offered", chromedp.Evaluate(`document.querySelector('#f-sessions').checked`, &checked))
	if !checked || b.Text("#a-users") != "4" {
		t.Fatalf("history offered %v, users %q", checked, b.Text("#a-users"))
	}
	b.Axe("legacy analysis with history")
	b.Run("start", chromedp.Click("#start-btn", chromedp.ByQuery), chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "legacy done", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'done'`) == 1
	})
	b.Run("outcome", chromedp.Navigate(b.Base+path), chromedp.WaitVisible(`#legacy-history[data-state="done"]`, chromedp.ByQuery))
	if i, s, tr := b.Text("#h-imported"), b.Text("#h-skipped"), b.Text("#h-traffic"); i != "2" || s != "1" || tr != "1010 / 5020" {
		t.Fatalf("history shown %q %q %q", i, s, tr)
	}
	b.Axe("legacy history")
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM radius_sessions s JOIN users u ON u.id = s.user_id
		WHERE u.username = 'pg-ann' AND s.close_reason = 'imported' AND s.stop_time IS NOT NULL`); n != 2 {
		t.Fatalf("stored sessions %d", n)
	}
}

// TestConsoleLegacySeveralFilesInBrowser: the reseller panel's five CSV
// files chosen together are uploaded as one set and analysed; a .sql
// among CSV files is refused on the form with its reason, nothing stored.
func TestConsoleLegacySeveralFilesInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.RunJobsBackground(t, k.App)
	var set []string
	for _, name := range []string{"cards.csv", "managers.csv", "profiles.csv", "series.csv", "users.csv"} {
		p, err := filepath.Abs(filepath.Join("../../app/dataimport/testdata/panel", name))
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, p)
	}
	dump, err := filepath.Abs("../../app/dataimport/testdata/freeradius_mysql.sql")
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	b.Run("refused", chromedp.Navigate(b.Base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery),
		chromedp.SetUploadFiles("#f-file", []string{set[0], dump}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-file", chromedp.ByQuery))
	if got := b.Text("#e-file"); !strings.Contains(got, "only as CSV") {
		t.Fatalf("error shown %q", got)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs`) + webtest.Scalar(k, "acme", `SELECT count(*) FROM files`); n != 0 {
		t.Fatalf("stored after the refusal: %d", n)
	}
	b.Axe("legacy upload refused")
	b.Run("analyse", chromedp.SetUploadFiles("#f-file", set, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "analysed", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND kind = 'panel_csv' AND state = 'analysed'
			AND file_name = 'tables.zip'`) == 1
	})
	b.Run("analysis", chromedp.Navigate(b.Base+cdiPath(b)), chromedp.WaitVisible("#a-users", chromedp.ByQuery))
	if b.Text("#a-users") == "0" {
		t.Fatalf("users %q", b.Text("#a-users"))
	}
}
