package console_test

// Browser test of the import page's kind chooser. Helpers carry the prefix
// cdk.

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

// TestConsoleDataImportKindsInBrowser: the chooser offers every kind; a
// managers file is checked as managers (its refused line named, the
// preview with the parent from an earlier line), then imported with
// partial: the tree and the opening balance are stored. The fields table
// follows the kind chosen by its links.
func TestConsoleDataImportKindsInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.RunJobsBackground(t, k.App)
	file := filepath.Join(t.TempDir(), "managers.csv")
	if err := os.WriteFile(file, []byte("username,parent,balance,password\ncdk-north,,40,Cdk-North-2026\ncdk-north-a,cdk-north,5,Cdk-NorthA-2026\ncdk-lost,cdk-ghost,0,Cdk-Lost-2026\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")

	b.Run("imports", chromedp.Navigate(b.Base+"/imports"), chromedp.WaitVisible("#import-form", chromedp.ByQuery))
	var kinds []string
	b.Run("kinds", chromedp.Evaluate(`[...document.querySelectorAll('#f-kind option')].map(o => o.value)`, &kinds))
	if strings.Join(kinds, ",") != "subscribers,nas,managers,cards,coordinates" {
		t.Fatalf("kinds %v", kinds)
	}
	b.Run("check", chromedp.SetValue("#f-kind", "managers", chromedp.ByQuery), chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery),
		chromedp.Click("#validate-btn", chromedp.ByQuery), chromedp.WaitVisible("#import-report", chromedp.ByQuery))
	if s := b.Text(`#import-errors tr[data-line="4"]`); !strings.Contains(s, "cdk-lost") || !strings.Contains(s, "parent") {
		t.Fatalf("refused line %q", s)
	}
	if s := b.Text(`#import-preview tr[data-username="cdk-north-a"]`); !strings.Contains(s, "parent: cdk-north") {
		t.Fatalf("preview %q", s)
	}
	var kind string
	var ok bool
	b.Run("fields kind", chromedp.AttributeValue("#import-fields", "data-kind", &kind, &ok, chromedp.ByQuery))
	if kind != "managers" {
		t.Fatalf("fields of %q", kind)
	}
	b.Axe("import check managers")
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM managers WHERE username LIKE 'cdk-%'`); n != 0 {
		t.Fatalf("the check stored %d", n)
	}

	b.Run("import", chromedp.Navigate(b.Base+"/imports?kind=managers"), chromedp.WaitVisible("#import-form", chromedp.ByQuery),
		chromedp.Click("#f-partial", chromedp.ByQuery), chromedp.SetUploadFiles("#f-file", []string{file}, chromedp.ByQuery),
		chromedp.Click("#import-btn", chromedp.ByQuery), chromedp.WaitVisible("#import-job", chromedp.ByQuery))
	xrtest.Eventually(t, "managers imported", func() bool {
		return webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs WHERE kind = 'managers' AND state = 'done'`) == 1
	})
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM managers c JOIN managers p ON p.id = c.parent_id
		WHERE c.username = 'cdk-north-a' AND p.username = 'cdk-north' AND p.balance = 40000 AND c.balance = 5000`); n != 1 {
		t.Fatal("tree and balances not stored")
	}

	// The fields table of another kind, by its link.
	b.Run("fields", chromedp.Navigate(b.Base+"/imports?kind=coordinates"), chromedp.WaitVisible(`#import-fields[data-kind="coordinates"]`, chromedp.ByQuery))
	if s := b.Text("#import-fields"); !strings.Contains(s, "lat") || !strings.Contains(s, "device") {
		t.Fatalf("coordinates fields %q", s)
	}
	b.Axe("import fields coordinates")
}
