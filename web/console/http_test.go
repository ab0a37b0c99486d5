package console_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"regexp"
	"strings"
	"testing"

	"xr/internal/webtest"
)

// gunzip decompresses one gzip stream, failing the test on a bad one.
func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v (%.40q)", err, b)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestHTTPCompression: HTML pages and JSON answers are gzipped for a
// client that accepts gzip and plain for one that does not, with Vary
// naming Accept-Encoding beside the pages' own; a static file, already
// gzipped at start, is not gzipped twice.
func TestHTTPCompression(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	for _, c := range []struct{ name, path, ctype, want string }{
		{"page", "/login", "text/html", `id="f-email"`},
		{"json", "/openapi.json", "application/json", `"openapi"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			gz := k.Do("GET", "acme", c.path, "", nil, "Accept-Encoding", "gzip")
			if gz.Status != 200 || gz.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(gz.Header.Get("Content-Type"), c.ctype) {
				t.Fatalf("%s with gzip: %d %q %q", c.path, gz.Status, gz.Header.Get("Content-Encoding"), gz.Header.Get("Content-Type"))
			}
			body := gunzip(t, gz.Body)
			if !strings.Contains(body, c.want) || len(gz.Body) >= len(body)*3/4 {
				t.Fatalf("%s: %d gzipped bytes for %d, body has %q: %v", c.path, len(gz.Body), len(body), c.want, strings.Contains(body, c.want))
			}
			if v := strings.Join(gz.Header.Values("Vary"), ","); !strings.Contains(v, "Accept-Encoding") {
				t.Fatalf("%s: Vary %q", c.path, v)
			}
			plain := k.Do("GET", "acme", c.path, "", nil, "Accept-Encoding", "identity")
			if plain.Status != 200 || plain.Header.Get("Content-Encoding") != "" || !strings.Contains(string(plain.Body), c.want) {
				t.Fatalf("%s without gzip: %d %q", c.path, plain.Status, plain.Header.Get("Content-Encoding"))
			}
		})
	}
	// A page keeps its own Vary (htmx blocks) beside Accept-Encoding.
	if v := strings.Join(k.Do("GET", "acme", "/login", "", nil, "Accept-Encoding", "gzip").Header.Values("Vary"), ","); !strings.Contains(v, "HX-Request") {
		t.Fatalf("page Vary %q", v)
	}
	t.Run("static once", func(t *testing.T) {
		css := regexp.MustCompile(`/static/[0-9a-f]+/app\.css`).FindString(string(k.Do("GET", "acme", "/login", "", nil).Body))
		r := k.Do("GET", "acme", css, "", nil, "Accept-Encoding", "gzip")
		if r.Status != 200 || r.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d %q", css, r.Status, r.Header.Get("Content-Encoding"))
		}
		if body := gunzip(t, r.Body); !strings.Contains(body, "nav.side") {
			t.Fatalf("%s gzipped twice or wrong: %.60q", css, body)
		}
	})
}

// TestPublicPagesHead: /favicon.ico answers with the icon the pages link,
// and every page anyone may open carries a meta description, in English
// and Arabic.
func TestPublicPagesHead(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	ico := k.Do("GET", "acme", "/favicon.ico", "", nil)
	if ico.Status != 200 || ico.Header.Get("Content-Type") != "image/x-icon" || !bytes.HasPrefix(ico.Body, []byte{0, 0, 1, 0}) {
		t.Fatalf("/favicon.ico: %d %q %.8q", ico.Status, ico.Header.Get("Content-Type"), ico.Body)
	}
	desc := regexp.MustCompile(`<meta name="description" content="([^"]+)">`)
	icon := regexp.MustCompile(`<link rel="icon" href="(/static/[0-9a-f]+/favicon\.ico)">`)
	for _, lang := range []string{"en", "ar"} {
		for _, p := range []string{"/login", "/shop", "/my/login"} {
			t.Run(lang+p, func(t *testing.T) {
				r := k.Do("GET", "acme", p, "", nil, "Accept-Language", lang)
				m := desc.FindStringSubmatch(string(r.Body))
				if r.Status != 200 || m == nil || strings.HasPrefix(m[1], "description.") {
					t.Fatalf("%s: %d, description %q", p, r.Status, m)
				}
				if lang == "ar" && !regexp.MustCompile(`\p{Arabic}`).MatchString(m[1]) {
					t.Fatalf("%s: Arabic description %q", p, m[1])
				}
				l := icon.FindStringSubmatch(string(r.Body))
				if l == nil {
					t.Fatalf("%s links no icon", p)
				}
				if got := k.Do("GET", "acme", l[1], "", nil); got.Status != 200 || !bytes.Equal(got.Body, ico.Body) {
					t.Fatalf("%s: icon %s answers %d", p, l[1], got.Status)
				}
			})
		}
	}
}
