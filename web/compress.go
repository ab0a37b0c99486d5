package web

import (
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// compressors wrap a row's handler in gzhttp: gzip for a client that
// accepts it, on text answers (HTML, JSON, CSV) above gzhttp's minimum
// size; an answer that already names a Content-Encoding, or whose type is
// already compressed (images, archives), goes out as written.
//
// BREACH: pages are cookie-authenticated, and a cross-site top-level GET
// carries the SameSite=Lax cookie, so a page reflecting a query (?q=)
// beside a secret (a card PIN, a token shown once) could leak the secret
// through its compressed length. The pages carry no CSRF token (writes are
// refused cross-origin by Fetch metadata, pages.go), but they do show
// secrets, so page answers get gzhttp's content-based length jitter. API
// answers need none: they authenticate with a bearer token a cross-site
// page cannot make the browser send.
type compressors struct {
	api, page func(http.Handler) http.HandlerFunc
}

func newCompressors() compressors {
	// zstd is left off: gzip is what every client and proxy takes, and the
	// saving on a page of a few KB is the same.
	api, err := gzhttp.NewWrapper(gzhttp.EnableZstd(false))
	if err != nil {
		panic(err)
	}
	page, err := gzhttp.NewWrapper(gzhttp.EnableZstd(false), gzhttp.RandomJitter(32, 0, false))
	if err != nil {
		panic(err)
	}
	return compressors{api: api, page: page}
}

// compress wraps a row's handler. Streams (SSE, the WebSocket console)
// and file rows (downloads and uploads, often already compressed, and
// served with ranges) are left alone: compression would buffer a stream
// and drop a download's Content-Length and ranges.
func (s *Server) compress(rt *Route, h http.Handler) http.Handler {
	switch {
	case rt.streaming() || rt.File:
		return h
	case rt.Page:
		return s.gz.page(h)
	default:
		return s.gz.api(h)
	}
}
