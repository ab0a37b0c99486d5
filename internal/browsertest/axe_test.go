package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestMain(m *testing.M) { Main(m) }

// TestAxeReportsSeriousViolationsOnly: the rules axe runs (axeRulesJS)
// still find a critical violation (an image without a text alternative)
// and a serious one (contrast, when asked), and leave out a moderate one
// (content outside any landmark, whose rule is not run) and contrast
// when not asked; a clean
// page has none.
func TestAxeReportsSeriousViolationsOnly(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"/bad":   `<img src="/x.png"><p style="color:#bbb;background:#fff">faint text</p>`,
		"/clean": `<main><h1>Fine</h1><p>Readable text.</p></main>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>t</title></head><body>` + body + `</body></html>`))
	}))
	t.Cleanup(srv.Close)
	tab := Start(t, nil)
	for _, c := range []struct {
		path     string
		contrast bool
		want     []string
		notWant  []string
	}{
		{"/bad", true, []string{`"image-alt"`, `"color-contrast"`}, []string{`"region"`}},
		{"/bad", false, []string{`"image-alt"`}, []string{`"color-contrast"`, `"region"`}},
		{"/clean", true, nil, []string{`"id"`}},
	} {
		ctx, cancel := context.WithTimeout(tab, 30*time.Second)
		if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+c.path), chromedp.Evaluate(axeJS, nil)); err != nil {
			cancel()
			t.Fatal(err)
		}
		out, _, err := axeViolations(ctx, c.contrast)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var off []string
		if err := chromedp.Run(tab, chromedp.Evaluate(`Object.keys(`+axeRulesJS+`(true))`, &off)); err != nil {
			t.Fatal(err)
		}
		if joined := " " + strings.Join(off, " ") + " "; !strings.Contains(joined, " region ") || strings.Contains(joined, " image-alt ") {
			t.Errorf("rules turned off: %v", off)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s (contrast %v): %s missing from %s", c.path, c.contrast, w, out)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s (contrast %v): %s reported in %s", c.path, c.contrast, w, out)
			}
		}
	}
}
