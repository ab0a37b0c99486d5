package console_test

// Browser test of the till pages (prefix cpos).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"xr/app/cards"
	"xr/internal/browsertest"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// TestConsolePOSInBrowser: the owner opens a shift with a float, sells one
// card of a ready series, sees its code on the receipt, closes the shift
// with the counted cash, and the report shows expected against counted.
func TestConsolePOSInBrowser(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	ten := k.Acquire("acme")
	res, err := cards.CreateBatch(t.Context(), k.System("acme"), cards.CreateInput{Type: "refill", Quantity: 3, FaceValue: xrtest.MoneyPtr("10"),
		Expiration: "2099-12-31", RequestID: "cpos-gen", Name: "Tens"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cards.Generate(t.Context(), ten, res.BatchID, nil); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t, k)
	b.SignIn("owner")
	yes := chromedp.Evaluate(`window.confirm = () => true`, nil)

	b.Run("till", chromedp.Navigate(b.Base+"/pos"), chromedp.WaitVisible("#open-btn", chromedp.ByQuery))
	b.Axe("till, no shift")
	b.Run("open shift", chromedp.SetValue("#f-float", "25", chromedp.ByQuery), chromedp.Click("#open-btn", chromedp.ByQuery),
		chromedp.WaitVisible("#sell-btn", chromedp.ByQuery))
	b.Axe("till, open shift")
	b.Run("sell one card", chromedp.SetValue("#f-product", fmt.Sprintf("card:%d", res.BatchID), chromedp.ByQuery),
		chromedp.SetValue("#f-quantity", "1", chromedp.ByQuery), chromedp.Click("#sell-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`#sale-status[data-status="completed"]`, chromedp.ByQuery))
	var code string
	if err := ten.DB.R.QueryRow(`SELECT code FROM cards WHERE batch_id = ? AND disposition = 'sold_counter'`, res.BatchID).Scan(&code); err != nil {
		t.Fatal(err)
	}
	if got := b.Text("#lines"); !strings.Contains(got, code) {
		t.Fatalf("sale page shows %q, want the code %s", got, code)
	}
	if got := b.Text("#receipt"); !strings.Contains(got, code) {
		t.Fatalf("receipt %q lacks the code %s", got, code)
	}
	b.Axe("sale receipt")
	b.NoDialog("sale receipt")
	b.Run("back to the till", chromedp.Navigate(b.Base+"/pos"), chromedp.WaitVisible("#close-btn", chromedp.ByQuery))
	b.Run("close shift", yes, chromedp.SetValue("#f-counted", "34", chromedp.ByQuery), chromedp.Click("#close-btn", chromedp.ByQuery),
		chromedp.WaitVisible(`#shift-status[data-status="closed"]`, chromedp.ByQuery))
	if got := b.Text("#expected-cash"); !strings.HasPrefix(got, "35 ") {
		t.Fatalf("expected cash shown %q, want 35 (25 + 10)", got)
	}
	if got := b.Text("#counted-cash"); !strings.HasPrefix(got, "34 ") {
		t.Fatalf("counted cash shown %q", got)
	}
	if got := b.Text("#difference"); !strings.HasPrefix(got, "-1 ") {
		t.Fatalf("difference shown %q", got)
	}
	b.Axe("shift report")
	if xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM pos_shifts WHERE status = 'closed' AND counted_cash = 34000 AND expected_cash = 35000`) != 1 ||
		xrtest.Scalar(t, ten, `SELECT sold_counter FROM card_batches WHERE id = ?`, res.BatchID) != 1 {
		t.Fatal("stored shift or series counters")
	}
}
