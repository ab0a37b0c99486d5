package web

// Internals the external tests of package web (package web_test) reach.

import (
	"net"
	"net/http"
	"time"
)

const GoErrorHeaders = goErrorHeaders

var (
	RewriteServerError = rewriteServerError
	StructFields       = structFields
	Catalogues         = catalogues
	PathParam          = pathParam
	OpReasons          = opReasons
	ClientIP           = clientIP
)

type (
	ErrorBody    = errorBody
	StatusWriter = statusWriter
)

// WriteTimeout is the write deadline the writer arms when the response starts.
func (w *statusWriter) WriteTimeout() time.Duration { return w.writeTimeout }

func (r *Route) IsMutation() bool      { return r.isMutation() }
func (r *Route) Streaming() bool       { return r.streaming() }
func (r *Route) KindReasons() []string { return r.kindReasons() }

// Table is the API route table as built (a server without an App may call it).
func (s *Server) Table() []*Route { return s.table() }

func (s *Server) SetDeadlines(w http.ResponseWriter, r *http.Request, rt *Route, sw *statusWriter) {
	s.setDeadlines(w, r, rt, sw)
}

// Fallbacks are the rows the fallback matcher serves.
func (s *Server) Fallbacks() []*Route {
	out := make([]*Route, len(s.fallbacks))
	for i, f := range s.fallbacks {
		out[i] = f.route
	}
	return out
}

// FallbackOf is the row the fallback matcher picks for r, nil when none.
func (s *Server) FallbackOf(r *http.Request) *Route {
	if fb, _, _ := s.matchFallback(r); fb != nil {
		return fb.route
	}
	return nil
}

// MuxPattern is the pattern of the mux entry serving r.
func (s *Server) MuxPattern(r *http.Request) string {
	_, p := s.mux.Handler(r)
	return p
}

// Mount adds a test-only row under /api/v1.
func (s *Server) Mount(r *Route) {
	s.routes = append(s.routes, r)
	s.register(r, s.wrap(r))
}

// StaticFile is the asset served at URL u: its bytes, their gzip copy and
// its content type.
func (s *Server) StaticFile(u string) (body, gz []byte, ctype string, ok bool) {
	f, ok := s.static.files[u]
	return f.body, f.gz, f.ctype, ok
}

// Forwarded applies the forwarding headers of r as ServeHTTP does.
func (s *Server) Forwarded(r *http.Request) *http.Request { return s.forwarded(r) }

// JSONErrConn wraps c as JSONErrorListener wraps what it accepts.
func JSONErrConn(c net.Conn) net.Conn { return &jsonErrConn{Conn: c} }

// SetPermsHook installs the authorization sweep's actor rewrite.
func (s *Server) SetPermsHook(h func(c *Ctx)) { s.permsHook = h }
