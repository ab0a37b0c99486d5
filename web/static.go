package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"xr/assets"
)

// The pages' static files: embedded, served at immutable hashed URLs
// (/static/<hash>/<name>), gzipped once at start for a browser that
// accepts it. Templates name them by logical name (.URLs "app.css").
type staticAssets struct {
	files map[string]staticFile // by URL path
	urls  map[string]string     // logical name → hashed URL
}

type staticFile struct {
	body  []byte
	gz    []byte // gzip of body, made once at start; nil when not smaller
	ctype string
}

// pageAssets are the files the pages load, by logical name.
var pageAssets = []struct{ name, file, ctype string }{
	{"app.css", "console/app.css", "text/css; charset=utf-8"},
	{"console.js", "console/console.js", "text/javascript; charset=utf-8"},
	{"htmx.js", "vendor/htmx/htmx.min.js", "text/javascript; charset=utf-8"},
	{"uplot.js", "vendor/uplot/uPlot.iife.min.js", "text/javascript; charset=utf-8"},
	{"uplot.css", "vendor/uplot/uPlot.min.css", "text/css; charset=utf-8"},
	// The network map page (web/console): Leaflet and the page's script.
	{"leaflet.js", "vendor/leaflet/leaflet.js", "text/javascript; charset=utf-8"},
	{"leaflet.css", "vendor/leaflet/leaflet.css", "text/css; charset=utf-8"},
	{"monmap.js", "console/monmap.js", "text/javascript; charset=utf-8"},
	// The remote console page (web/console): xterm.js and its fit addon (ES modules devgw.js imports), the page's own script and style.
	{"xterm.mjs", "vendor/xterm/xterm.mjs", "text/javascript; charset=utf-8"},
	{"xterm-fit.mjs", "vendor/xterm/addon-fit.mjs", "text/javascript; charset=utf-8"},
	{"xterm.css", "vendor/xterm/xterm.css", "text/css; charset=utf-8"},
	{"devgw.js", "console/devgw.js", "text/javascript; charset=utf-8"},
	{"devgw.css", "console/devgw.css", "text/css; charset=utf-8"},
	// The icon every page links; also answered at /favicon.ico for a
	// client that asks there without reading the page.
	{"favicon.ico", "console/favicon.ico", "image/x-icon"},
}

// AssetURLs are the hashed URLs of the pages' files, by logical name.
func (s *Server) AssetURLs() map[string]string { return s.static.urls }

// sharedStatic is loadStatic made once per process: the files are
// embedded and never change, and compressing them is most of the cost of
// a server's start (a test builds a server per test). Read-only once made.
var sharedStatic = sync.OnceValue(loadStatic)

func loadStatic() *staticAssets {
	st := &staticAssets{files: map[string]staticFile{}, urls: map[string]string{}}
	for _, f := range pageAssets {
		b, err := fs.ReadFile(assets.Static, f.file)
		if err != nil {
			panic("page asset " + f.file + ": " + err.Error())
		}
		sum := sha256.Sum256(b)
		u := "/static/" + hex.EncodeToString(sum[:6]) + "/" + f.name
		st.urls[f.name] = u
		sf := staticFile{body: b, ctype: f.ctype}
		if gz := gzipped(b); len(gz) < len(b) { // a tiny icon grows when gzipped
			sf.gz = gz
		}
		st.files[u] = sf
	}
	return st
}

// gzipped compresses an embedded asset once, at start.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		panic(err)
	}
	if _, err := zw.Write(b); err != nil {
		panic(err)
	}
	if err := zw.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// acceptsGzip reports whether Accept-Encoding allows gzip (a q=0 refuses it).
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		q, _ := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		return q == "" || strings.Trim(q, "0.") != ""
	}
	return false
}

// serveFavicon answers /favicon.ico with the pages' icon: cached a day,
// since its URL carries no hash.
func (s *Server) serveFavicon(w http.ResponseWriter, r *http.Request) {
	u, ok := s.static.urls["favicon.ico"]
	if !ok {
		s.noRoute(w, r)
		return
	}
	f := s.static.files[u]
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// serveStatic answers the pages' embedded files: immutable, hashed URLs,
// gzipped for a browser that accepts it.
func (s *Server) serveStatic(w http.ResponseWriter, r *http.Request) {
	f, ok := s.static.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Vary", "Accept-Encoding")
	body := f.body
	if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}
