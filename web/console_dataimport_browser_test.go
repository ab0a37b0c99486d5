package web

// Browser test of the data import pages. Helpers carry the prefix cdi.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/xrtest"
)

// TestConsoleDataImportInBrowser: a CSV is checked (its refused line is
// listed with its column and reason, nothing stored), then imported with
// partial: the job page shows the counts and the refused line, and the
// valid subscriber is stored.
func TestConsoleDataImportInBrowser(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	runJobsBackground(t, k.App)
	file := filepath.Join(t.TempDir(), "subscribers.csv")
	if err := os.WriteFile(file, []byte("اسم المستخدم,كلمة المرور,البريد الإلكتروني\ncdi-ann,pw-ann,ann@x.example\ncdi-bob,pw-bob,not-an-email\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, k)
	b.ccgSignIn("owner")

	b.run("imports", chromedp.Navigate(b.base+"/imports"), chromedp.WaitVisible("#import-form", chromedp.ByQuery))
	b.axe("imports")
	b.run("check", chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery), chromedp.Click("#validate-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#import-report", chromedp.ByQuery))
	if s := b.text(`#import-errors tr[data-line="3"]`); !strings.Contains(s, "البريد الإلكتروني") || !strings.Contains(s, "cdi-bob") {
		t.Fatalf("refused line shown %q", s)
	}
	if s := b.text("#import-preview"); !strings.Contains(s, "cdi-ann") {
		t.Fatalf("preview %q", s)
	}
	b.axe("import check")
	if n := k.idScalar("acme", `SELECT count(*) FROM users WHERE username LIKE 'cdi-%'`); n != 0 {
		t.Fatalf("the check stored %d", n)
	}

	b.run("import", chromedp.Navigate(b.base+"/imports"), chromedp.WaitVisible("#import-form", chromedp.ByQuery),
		chromedp.Click("#f-partial", chromedp.ByQuery), chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery),
		chromedp.Click("#import-btn", chromedp.ByQuery), chromedp.WaitVisible("#import-job", chromedp.ByQuery))
	// The runner finishes the job; the page then shows its outcome.
	path := b.cdiPath()
	xrtest.Eventually(t, "import done", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE state = 'done'`) == 1
	})
	b.run("done", chromedp.Navigate(b.base+path), chromedp.WaitVisible(`#import-job[data-state="done"]`, chromedp.ByQuery))
	if c, f := b.text("#i-created"), b.text("#i-failed"); c != "1" || f != "1" {
		t.Fatalf("counts %q %q", c, f)
	}
	if s := b.text(`#import-lines tr[data-line="3"]`); !strings.Contains(s, "cdi-bob") {
		t.Fatalf("line result %q", s)
	}
	b.axe("import job")
	b.shot("import-job")
	if n := k.idScalar("acme", `SELECT count(*) FROM users WHERE username = 'cdi-ann'`); n != 1 {
		t.Fatal("cdi-ann not stored")
	}

	// A MikroTik export: analysed, reviewed, started with partial.
	rsc, err := filepath.Abs("../app/dataimport/testdata/ppp_secret_export.rsc")
	if err != nil {
		t.Fatal(err)
	}
	b.run("legacy", chromedp.Navigate(b.base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery))
	b.axe("legacy imports")
	b.run("analyse", chromedp.SetUploadFiles("#f-file", []string{rsc}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	path = b.cdiPath()
	xrtest.Eventually(t, "analysed", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'analysed'`) == 1
	})
	b.run("analysis", chromedp.Navigate(b.base+path), chromedp.WaitVisible("#legacy-start", chromedp.ByQuery))
	if u, p := b.text("#a-users"), b.text(`#legacy-problems tr[data-username="mt-dee"]`); u != "4" || !strings.Contains(p, "12") {
		t.Fatalf("analysis shown %q %q", u, p)
	}
	b.axe("legacy analysis")
	b.run("start", chromedp.Click("#f-partial", chromedp.ByQuery), chromedp.Click("#start-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "legacy done", func() bool {
		return k.idScalar("acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'done'`) == 1
	})
	b.run("outcome", chromedp.Navigate(b.base+path), chromedp.WaitVisible(`#legacy-job[data-state="done"]`, chromedp.ByQuery))
	if c := b.text("#l-created"); c != "3" {
		t.Fatalf("created shown %q", c)
	}
	if n := k.idScalar("acme", `SELECT count(*) FROM users WHERE username LIKE 'mt-%'`); n != 3 {
		t.Fatalf("mt users %d", n)
	}
}

// cdiPath is the current path (the job page, once per poll).
func (b *browser) cdiPath() string {
	b.t.Helper()
	var loc string
	b.run("location", chromedp.Evaluate(`location.pathname`, &loc))
	return loc
}
