package web

import (
	"net/http"
	"strings"
)

// ServeMux refuses some pairs of this spec's own paths as conflicting (for
// example /admin/tools/backup/{id}/download beside
// /admin/tools/backup/jobs/{id}: each matches a path the other does not, so
// neither is more specific). Such a row is kept out of the mux and matched
// here, segment by segment, from the catch-all route. Literal segments win
// over wildcards because rows are tried in table order after the mux.
type fallbackRoute struct {
	route   *Route
	handler http.Handler
	segs    []string
}

// register adds a row to the mux, or to the fallback list when the row
// says it conflicts (Route.Fallback). An undeclared conflict makes the mux
// panic at start, which every test that builds a server catches.
func (s *Server) register(rt *Route, h http.Handler) {
	h = s.compress(rt, h)
	if rt.Fallback {
		s.fallbacks = append(s.fallbacks, fallbackRoute{route: rt, handler: h, segs: strings.Split(rt.FullPath(), "/")})
		return
	}
	s.mux.Handle(rt.Pattern(), h)
}

// matchFallback finds a fallback row for r; allowed collects the methods
// of rows whose path matches under another method.
func (s *Server) matchFallback(r *http.Request) (fb *fallbackRoute, vals map[string]string, allowed []string) {
	segs := strings.Split(r.URL.Path, "/")
	for i := range s.fallbacks {
		f := &s.fallbacks[i]
		v, ok := matchSegs(f.segs, segs)
		if !ok {
			continue
		}
		m := f.route.M
		if m == r.Method || (m == "GET" && r.Method == "HEAD") {
			if fb == nil {
				fb, vals = f, v
			}
			continue
		}
		allowed = append(allowed, m)
	}
	return fb, vals, allowed
}

// RouteOf is the API row that serves r: nil for a page, a static file or
// a request no row matches.
func (s *Server) RouteOf(r *http.Request) *Route {
	if fb, _, _ := s.matchFallback(r); fb != nil {
		return fb.route
	}
	_, pattern := s.mux.Handler(r)
	for _, rt := range s.routes {
		if rt.Pattern() == pattern {
			return rt
		}
	}
	return nil
}

func matchSegs(pattern, path []string) (map[string]string, bool) {
	if len(pattern) != len(path) {
		return nil, false
	}
	vals := map[string]string{}
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if path[i] == "" {
				return nil, false
			}
			vals[p[1:len(p)-1]] = path[i]
			continue
		}
		if p != path[i] {
			return nil, false
		}
	}
	return vals, true
}
