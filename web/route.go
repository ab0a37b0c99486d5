// Package web is xr's HTTP surface: one declarative route table, the
// middleware derived from each row, the envelope and error writer, and the
// OpenAPI document generated from the same table.
package web

import (
	"strings"

	"xr/app"
)

// Access is who may call a route.
type Access int

const (
	Public     Access = iota // no credential; throttled per source IP
	Staff                    // manager session token or API token
	Subscriber               // subscriber-portal session
)

func (a Access) String() string {
	return [...]string{"public", "staff", "subscriber"}[a]
}

// Route is one row of the table. Everything a request goes through before
// its handler (tenant, credential, licence, permission, buckets) is derived
// from these fields.
type Route struct {
	M, P   string // method and path under /api/v1 (or absolute when Root)
	Access Access
	// Perms is any-of; AnyStaff marks an authenticated route that needs no
	// code (a structural test refuses a staff route with neither).
	Perms    []app.Perm
	AnyStaff bool
	// Buckets beyond the implied t_mutate of every authenticated non-GET.
	Buckets         []string
	SessionOnly     bool // API tokens refused with 403 api_token_forbidden
	NoImpersonation bool // refused for a caller acting through login-as
	// LicenseExempt routes stay open while the tenant is locked.
	LicenseExempt bool
	Root          bool // path is absolute, outside /api/v1
	// Page marks a page row (set when its site is mounted, web/pages.go):
	// the path is absolute, the credential is the site's cookie session,
	// errors render as pages.
	Page bool
	// API, on a page row, names the API row whose app function the page
	// calls, by method and path under /api/v1 ("POST /users/{id}/deposit"):
	// the page takes that row's permissions and the buckets that protect
	// its effect, and its handler when it has none (a download is the same
	// answer). A page that calls no single API row states its own.
	API  string
	site *Site
	// Fallback marks a row ServeMux refuses as conflicting with another
	// (see fallback.go): it is matched segment by segment after the mux.
	Fallback bool
	// Menu, on a GET page row, puts the page in the console's menu under
	// this key (label "menu.<key>" in the console catalogue).
	Menu string
	// Stream marks a long-lived response (text/event-stream): no write
	// deadline and no read budget. A path ending in /stream is a stream
	// without saying so.
	Stream bool
	// File marks a row whose body or response is a file (an upload, a
	// download): Server.FileTimeout replaces the body and write deadlines.
	File bool
	H    HandlerFunc
	// For the OpenAPI document: request and response shapes (zero values
	// of Go types), and whether the route is a paginated list.
	Req, Resp any
	List      bool
	// Reasons are the row's own "status reason" pairs ("409 payment_not_open")
	// beside those every row of its kind answers: an area documents its
	// refusals on its rows (older rows keep theirs in opReasons).
	Reasons []string
	// Summary says what the operation does, for /openapi.json and /docs:
	// its first clause (up to "; " or ": " outside parentheses) is the
	// operation's summary, the whole text its description.
	Summary string
	// Status is the status of the success answer when not 200 (201 of a
	// create, 202 of a job: a Resp with a replay field also answers 200 on
	// a replay); Content the media type of a 200 body that is not JSON (a
	// download, text/plain), Resp then being the 202 answer while the file
	// is not ready.
	Status  int
	Content string
}

// Pattern is the ServeMux pattern of the row.
func (r *Route) Pattern() string { return r.M + " " + r.FullPath() }

// FullPath is the path including the /api/v1 prefix.
func (r *Route) FullPath() string {
	if r.Root || r.Page {
		return r.P
	}
	return "/api/v1" + r.P
}

func (r *Route) isMutation() bool {
	switch r.M {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	return true
}

// licenseExempt: the auth surface, /auth/me and the licence page stay open
// on a locked tenant so its owner can see why and act.
func (r *Route) licenseExempt() bool {
	return r.LicenseExempt || strings.HasPrefix(r.P, "/auth/")
}

// streaming tells whether the row answers a long-lived stream.
func (r *Route) streaming() bool { return r.Stream || strings.HasSuffix(r.P, "/stream") }

// twins returns rows with, after each /portal row, the same row under
// /user: the spec serves the portal at both prefixes.
func twins(rows []Route) []Route {
	out := make([]Route, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out, r)
		if rest, ok := strings.CutPrefix(r.P, "/portal/"); ok {
			u := r
			u.P = "/user/" + rest
			out = append(out, u)
		}
	}
	return out
}
