package console_test

// Browser test of the card template pages (helpers of the catalogue
// browser test, prefix ccg).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/internal/browsertest"
	"xr/internal/webtest"
)

// TestConsoleCardTemplatesInBrowser: a template is created from the form
// (choosing a studio design and a plan, a relative expiry), refused first
// without a face value (the batch rule's message beside the field); the
// template generates a series from its page, which shows the generation
// job and names its template; the template's series list has it.
func TestConsoleCardTemplatesInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	b := browsertest.New(t, k)
	plan := webtest.CreatePlan(t, k, "Weekly")
	design := webtest.CreateCardDesign(t, k, "Blue sheet")
	b.SignIn("owner")

	b.Run("series list", chromedp.Navigate(b.Base+"/cards"), chromedp.WaitVisible("#templates-link", chromedp.ByQuery))
	ccgEnter(b, "#templates-link", chromedp.WaitVisible("#templates", chromedp.ByQuery))
	b.Axe("card templates list")
	ccgEnter(b, "#new-template", chromedp.WaitVisible("#template-form", chromedp.ByQuery))
	b.Axe("card template form")
	b.Run("fill", chromedp.SendKeys("#f-name", "Weekly shop", chromedp.ByQuery),
		chromedp.SetValue("#f-design_id", fmt.Sprint(design), chromedp.ByQuery), chromedp.SetValue("#f-type", "prepaid", chromedp.ByQuery),
		chromedp.SetValue("#f-plan_profile_id", fmt.Sprint(plan), chromedp.ByQuery), ccgType("#f-quantity", "4"),
		ccgType("#f-expiration_days", "30"))
	// No face value: the batch rule's refusal beside the field, nothing stored.
	ccgEnter(b, "#save-template", chromedp.WaitVisible("#e-face_value", chromedp.ByQuery))
	if st := ccgStatus(b); st != 400 {
		t.Fatalf("refused form: status %d", st)
	}
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM card_templates`); n != 0 {
		t.Fatalf("%d templates stored by a refused form", n)
	}
	b.Run("face value", ccgType("#f-face_value", "5"))
	ccgEnter(b, "#save-template", chromedp.WaitVisible("#template-generate", chromedp.ByQuery))
	id := ccgScalar(t, k, `SELECT id FROM card_templates WHERE name = 'Weekly shop'`)
	if d := ccgScalar(t, k, `SELECT design_id FROM card_templates WHERE id = ?`, id); d != design {
		t.Fatalf("stored design %d, want %d", d, design)
	}
	b.Axe("card template")
	b.Shot("card-template")

	// Generate: the series page shows the job and names the template.
	b.Run("confirm", ccgAccept)
	ccgEnter(b, "#generate", chromedp.WaitVisible(`#job-progress[data-job-state="done"]`, chromedp.ByQuery))
	bid := ccgScalar(t, k, `SELECT id FROM card_batches WHERE template_id = ?`, id)
	if n := ccgScalar(t, k, `SELECT COUNT(*) FROM cards WHERE batch_id = ?`, bid); n != 4 {
		t.Fatalf("%d cards in the series", n)
	}
	if d := ccgScalar(t, k, `SELECT design_id FROM card_batches WHERE id = ?`, bid); d != design {
		t.Fatalf("series design %d", d)
	}
	if got := b.Text("#series-template"); !strings.Contains(got, "Weekly shop") {
		t.Fatalf("series template: %q", got)
	}
	// The template's series list has it.
	b.Run("template series", chromedp.Navigate(fmt.Sprintf("%s/cards?template_id=%d", b.Base, id)), chromedp.WaitVisible("#template-filter", chromedp.ByQuery))
	if got := b.Text("#series tbody"); !strings.Contains(got, fmt.Sprintf("#%d Weekly shop", bid)) || strings.Count(got, "#") != 1 {
		t.Fatalf("series of the template: %q", got)
	}
	b.NoDialog("card templates")
}
