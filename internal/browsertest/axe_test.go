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
// and a serious one (contrast, on the class chains asked), and leave out a
// moderate one (content outside any landmark, whose rule is not run) and
// contrast elsewhere; a clean page has none.
func TestAxeReportsSeriousViolationsOnly(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"/bad":   `<img src="/x.png"><p style="color:#bbb;background:#fff">faint text</p>`,
		"/clean": `<main><h1>Fine</h1><p>Readable text.</p></main>`,
		"/two":   `<main><h1>Two</h1><p class="a" style="color:#bbb;background:#fff">faint one</p><p class="b" style="color:#bbb;background:#fff">faint two</p></main>`,
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
		contrast string // the page's class chains to check contrast under: those containing this ("" none)
		want     []string
		notWant  []string
	}{
		{"/bad", "<", []string{`"image-alt"`, `"color-contrast"`}, []string{`"region"`}},
		{"/bad", "", []string{`"image-alt"`}, []string{`"color-contrast"`, `"region"`}},
		{"/clean", "<", nil, []string{`"id"`}},
		{"/two", "P.b", []string{`"color-contrast"`, `faint two`}, []string{`faint one`}},
	} {
		ctx, cancel := context.WithTimeout(tab, 30*time.Second)
		var chains, asked []string
		if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+c.path), chromedp.Evaluate(axeJS, nil), chromedp.Evaluate(textChainsJS, &chains)); err != nil {
			cancel()
			t.Fatal(err)
		}
		for _, ch := range chains {
			if c.contrast != "" && strings.Contains(ch, c.contrast) {
				asked = append(asked, ch)
			}
		}
		out, _, err := axeViolations(ctx, asked)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var off []string
		if err := chromedp.Run(tab, chromedp.Evaluate(`Object.keys(`+axeRulesJS+`())`, &off)); err != nil {
			t.Fatal(err)
		}
		if joined := " " + strings.Join(off, " ") + " "; !strings.Contains(joined, " region ") || strings.Contains(joined, " image-alt ") {
			t.Errorf("rules turned off: %v", off)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s (contrast %q): %s missing from %s", c.path, c.contrast, w, out)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s (contrast %q): %s reported in %s", c.path, c.contrast, w, out)
			}
		}
	}
}
