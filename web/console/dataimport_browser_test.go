package console_test

// Browser test of the data import pages. Helpers carry the prefix cdi.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestConsoleDataImportInBrowser: a CSV is checked (its refused line is
// listed with its column and reason, nothing stored), then imported with
// partial: the job page shows the counts and the refused line, and the
// valid subscriber is stored.
func TestConsoleDataImportInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.RunJobsBackground(t, k.App)
	file := filepath.Join(t.TempDir(), "subscribers.csv")
	if err := os.WriteFile(file, []byte("اسم المستخدم,كلمة المرور,البريد الإلكتروني\ncdi-ann,pw-ann,ann@x.example\ncdi-bob,pw-bob,not-an-email\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("imports", chromedp.Navigate(b.Base+"/imports"), chromedp.WaitVisible("#import-form", chromedp.ByQuery))
	b.Axe("imports")
	b.Run("check", chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery), chromedp.Click("#validate-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#import-report", chromedp.ByQuery))
	if s := b.Text(`#import-errors tr[data-line="3"]`); !strings.Contains(s, "البريد الإلكتروني") || !strings.Contains(s, "cdi-bob") {
		t.Fatalf("refused line shown %q", s)
	}
	if s := b.Text("#import-preview"); !strings.Contains(s, "cdi-ann") {
		t.Fatalf("preview %q", s)
	}
	b.Axe("import check")
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users WHERE username LIKE 'cdi-%'`); n != 0 {
		t.Fatalf("the check stored %d", n)
	}

	b.Run("import", chromedp.Navigate(b.Base+"/imports"), chromedp.WaitVisible("#import-form", chromedp.ByQuery),
		chromedp.Click("#f-partial", chromedp.ByQuery), chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery),
		chromedp.Click("#import-btn", chromedp.ByQuery), chromedp.WaitVisible("#import-job", chromedp.ByQuery))
	// The runner finishes the job; the page then shows its outcome.
	path := cdiPath(b)
	xrtest.Eventually(t, "import done", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE state = 'done'`) == 1
	})
	b.Run("done", chromedp.Navigate(b.Base+path), chromedp.WaitVisible(`#import-job[data-state="done"]`, chromedp.ByQuery))
	if c, f := b.Text("#i-created"), b.Text("#i-failed"); c != "1" || f != "1" {
		t.Fatalf("counts %q %q", c, f)
	}
	if s := b.Text(`#import-lines tr[data-line="3"]`); !strings.Contains(s, "cdi-bob") {
		t.Fatalf("line result %q", s)
	}
	b.Axe("import job")
	b.Shot("import-job")
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users WHERE username = 'cdi-ann'`); n != 1 {
		t.Fatal("cdi-ann not stored")
	}

	// A MikroTik export: analysed, reviewed, started with partial.
	rsc, err := filepath.Abs("../../app/dataimport/testdata/ppp_secret_export.rsc")
	if err != nil {
		t.Fatal(err)
	}
	b.Run("legacy", chromedp.Navigate(b.Base+"/legacy-imports"), chromedp.WaitVisible("#legacy-form", chromedp.ByQuery))
	b.Axe("legacy imports")
	b.Run("analyse", chromedp.SetUploadFiles("#f-file", []string{rsc}, chromedp.ByQuery), chromedp.Click("#analyse-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	path = cdiPath(b)
	xrtest.Eventually(t, "analysed", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'analysed'`) == 1
	})
	b.Run("analysis", chromedp.Navigate(b.Base+path), chromedp.WaitVisible("#legacy-start", chromedp.ByQuery))
	if u, p := b.Text("#a-users"), b.Text(`#legacy-problems tr[data-username="mt-dee"]`); u != "4" || !strings.Contains(p, "12") {
		t.Fatalf("analysis shown %q %q", u, p)
	}
	b.Axe("legacy analysis")
	b.Run("start", chromedp.Click("#f-partial", chromedp.ByQuery), chromedp.Click("#start-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#legacy-job", chromedp.ByQuery))
	xrtest.Eventually(t, "legacy done", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE family = 'legacy' AND state = 'done'`) == 1
	})
	b.Run("outcome", chromedp.Navigate(b.Base+path), chromedp.WaitVisible(`#legacy-job[data-state="done"]`, chromedp.ByQuery))
	if c := b.Text("#l-created"); c != "3" {
		t.Fatalf("created shown %q", c)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users WHERE username LIKE 'mt-%'`); n != 3 {
		t.Fatalf("mt users %d", n)
	}
}

// cdiPath is the current path (the job page, once per poll).
func cdiPath(b *browsertest.Browser) string {
	b.T.Helper()
	var loc string
	b.Run("location", chromedp.Evaluate(`location.pathname`, &loc))
	return loc
}
