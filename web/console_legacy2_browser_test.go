package web

// Browser test of the legacy import's session history and PostgreSQL COPY
// dumps. Helpers carry the prefix cl2.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/xrtest"
)

// TestConsoleLegacyHistoryInBrowser: a pg_dump in COPY format is analysed
// (its radacct rows counted), started with the session history offered
// and checked: the job page shows the sessions and traffic imported, and
// they are stored as closed sessions of the subscriber.
func TestConsoleLegacyHistoryInBrowser(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	runJobsBackground(t, k.App)
	dump, err := filepath.Abs("../app/dataimport/testdata/freeradius_pg_copy.sql")
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, k)
	b.ccgSignIn("owner")
	b.run("legacy", chromedp.Navigate(b.base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery))
	b.run("analyse", chromedp.SetUploadFiles("#f-file", []string{dump}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	path := b.cdiPath()
	xrtest.Eventually(t, "analysed", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'analysed'`) == 1
	})
	b.run("analysis", chromedp.Navigate(b.base+path), chromedp.WaitVisible("#f-sessions", chromedp.ByQuery))
	var checked bool
	b.run("offered", chromedp.Evaluate(`document.querySelector('#f-sessions').checked`, &checked))
	if !checked || b.text("#a-users") != "4" {
		t.Fatalf("history offered %v, users %q", checked, b.text("#a-users"))
	}
	b.axe("legacy analysis with history")
	b.run("start", chromedp.Click("#start-btn", chromedp.ByQuery), chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "legacy done", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'done'`) == 1
	})
	b.run("outcome", chromedp.Navigate(b.base+path), chromedp.WaitVisible(`#legacy-history[data-state="done"]`, chromedp.ByQuery))
	if i, s, tr := b.text("#h-imported"), b.text("#h-skipped"), b.text("#h-traffic"); i != "2" || s != "1" || tr != "1010 / 5020" {
		t.Fatalf("history shown %q %q %q", i, s, tr)
	}
	b.axe("legacy history")
	if n := k.idScalar("acme", `SELECT count(*) FROM radius_sessions s JOIN users u ON u.id = s.user_id
		WHERE u.username = 'pg-ann' AND s.close_reason = 'imported' AND s.stop_time IS NOT NULL`); n != 2 {
		t.Fatalf("stored sessions %d", n)
	}
}

// TestConsoleLegacySeveralFilesInBrowser: the reseller panel's five CSV
// files chosen together are uploaded as one set and analysed; a .sql
// among CSV files is refused on the form with its reason, nothing stored.
func TestConsoleLegacySeveralFilesInBrowser(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	runJobsBackground(t, k.App)
	var set []string
	for _, name := range []string{"cards.csv", "managers.csv", "profiles.csv", "series.csv", "users.csv"} {
		p, err := filepath.Abs(filepath.Join("../app/dataimport/testdata/panel", name))
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, p)
	}
	dump, err := filepath.Abs("../app/dataimport/testdata/freeradius_mysql.sql")
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, k)
	b.ccgSignIn("owner")
	b.run("refused", chromedp.Navigate(b.base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery),
		chromedp.SetUploadFiles("#f-file", []string{set[0], dump}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#e-file", chromedp.ByQuery))
	if got := b.text("#e-file"); !strings.Contains(got, "only as CSV") {
		t.Fatalf("error shown %q", got)
	}
	if n := k.idScalar("acme", `SELECT count(*) FROM import_runs`) + k.idScalar("acme", `SELECT count(*) FROM files`); n != 0 {
		t.Fatalf("stored after the refusal: %d", n)
	}
	b.axe("legacy upload refused")
	b.run("analyse", chromedp.SetUploadFiles("#f-file", set, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "analysed", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND kind = 'panel_csv' AND state = 'analysed'
			AND file_name = 'tables.zip'`) == 1
	})
	b.run("analysis", chromedp.Navigate(b.base+b.cdiPath()), chromedp.WaitVisible("#a-users", chromedp.ByQuery))
	if b.text("#a-users") == "0" {
		t.Fatalf("users %q", b.text("#a-users"))
	}
}
