package web_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"xr/internal/webtest"
	"xr/web"

	"xr/app"
)

// The authorization sweep: every API row with Perms calls an area function
// that checks the caller itself, with the same permissions as the row, so
// the rule holds for the console and the CLI, which call the same functions
// without the route's middleware. The server's permsHook replaces the
// middleware's check for these requests with an actor the test chooses
// (header sweepGrant), and for each row:
//
//   - a staff actor holding every permission except the row's gets 403
//     ERR_FORBIDDEN insufficient_permissions from the function itself, and
//     nothing is stored (neither the tenant's file nor the instance's
//     changes);
//   - an actor holding exactly one of the row's permissions gets anything
//     but that refusal.
//
// Requests carry an id no record has and an empty JSON body (a bulk row's
// names that id), so a function that validates or loads before it checks
// answers 400/404 in the first case and fails the sweep.

// sweepGrant is the request header naming the actor the hook builds:
// "except:<codes>" (every permission but these) or "only:<code>".
const sweepGrant = "X-Sweep-Grant"

// sweepMissingID is the value of every path variable (an id no record
// has) but those whose handler accepts only a fixed set (sweepPathValues).
const sweepMissingID = "987654"

// sweepPathValues are path variables the handler parses from a fixed set
// before it calls the function (else 404): a valid one is sent.
var sweepPathValues = map[string]string{"kind": "nas"}

// sweepOneOfExempt are rows whose function needs a particular one of the
// row's permissions, chosen by the request: they skip the second case
// only (the first, refusal without any of them, still holds).
var sweepOneOfExempt = map[string]string{
	"GET /admin/devgw/credentials/{kind}/{id}":                  devgwKindPerm,
	"PUT /admin/devgw/credentials/{kind}/{id}":                  devgwKindPerm,
	"POST /admin/devgw/credentials/{kind}/{id}/accept-host-key": devgwKindPerm,
}

const devgwKindPerm = "{kind} nas needs prm_nas_remote, device prm_nas_devices_remote; the row names both"

func TestAreaFunctionsCheckTheirRowsPermissions(t *testing.T) {
	t.Parallel()
	k := webtest.NewWith(t, app.Config{}, webtest.AllowAll{}, func(s *web.Server) { s.SetPermsHook(sweepActor) })
	token := k.Owner("acme")
	tenant := k.Acquire("acme")
	versions := sweepVersions(t, tenant.DB.R, k.App.Inst.R)
	swept := 0
	defer func() { t.Logf("%d rows swept", swept) }()
	for _, rt := range k.Srv.Routes() {
		if !sweepCovers(rt) {
			continue
		}
		swept++
		name := rt.M + " " + rt.P
		t.Run(name, func(t *testing.T) {
			before := versions()
			r := sweepDo(t, k, rt, token, "except:"+joinPerms(rt.Perms))
			if !sweepRefused(rt, r) {
				t.Errorf("without the row's permissions: want 403 %s/insufficient_permissions from the function, got %d %.300s",
					app.CodeForbidden, r.Status, r.Body)
			}
			if after := versions(); after != before {
				t.Errorf("without the row's permissions something was stored (data versions %v → %v)", before, after)
			}
			if _, ok := sweepOneOfExempt[name]; ok {
				return
			}
			for _, p := range rt.Perms {
				r := sweepDo(t, k, rt, token, "only:"+string(p))
				if sweepRefused(rt, r) {
					t.Errorf("holding only %s (one of the row's): refused by the function: %.300s", p, r.Body)
				}
			}
		})
	}
	if swept == 0 {
		t.Fatal("no row with Perms in the route table")
	}
}

// sweepRefused tells whether the function refused the caller for want of
// a permission: 403 insufficient_permissions, or, on a bulk row (which
// applies its function to each id on its own), the one id failed as
// not_authorized for that reason.
func sweepRefused(rt *web.Route, r webtest.Resp) bool {
	if r.Status == 403 && r.Code() == app.CodeForbidden && r.Reason() == "insufficient_permissions" {
		return true
	}
	if _, bulk := rt.Req.(app.BulkIDs); !bulk || r.Status != 200 {
		return false
	}
	var out struct {
		Data app.BulkResult `json:"data"`
	}
	if json.Unmarshal(r.Body, &out) != nil || len(out.Data.Updated) != 0 || len(out.Data.Failed) != 1 {
		return false
	}
	f := out.Data.Failed[0]
	return f.Reason == "not_authorized" && f.Message == "insufficient_permissions"
}

// sweepCovers tells whether a row is in the sweep: an implemented API row
// that names permissions (public, subscriber and AnyStaff rows have none
// to agree with; console pages are swept with their own rows).
func sweepCovers(rt *web.Route) bool {
	return rt.Access == web.Staff && !rt.Page && !rt.Root && rt.H != nil && len(rt.Perms) > 0
}

// sweepActor is the server's permsHook: the owner's authenticated actor
// with the permissions the request's sweepGrant header names. The actor
// is not the administrator, so nothing may pass on IsAdmin.
func sweepActor(c *web.Ctx) {
	mode, codes, _ := strings.Cut(c.R.Header.Get(sweepGrant), ":")
	named := map[app.Perm]bool{}
	for _, code := range strings.Split(codes, ",") {
		named[app.Perm(code)] = true
	}
	act := *c.Actor
	act.IsAdmin, act.Roles, act.Perms = false, []string{}, map[app.Perm]bool{}
	for _, p := range c.Tenant.App.AllPerms() {
		if named[p] == (mode == "only") {
			act.Perms[p] = true
		}
	}
	c.Actor = &act
}

func joinPerms(ps []app.Perm) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

// sweepPath fills every path variable with sweepMissingID.
func sweepPath(rt *web.Route) string {
	var b strings.Builder
	p := rt.FullPath()
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		j := i + strings.IndexByte(p[i:], '}')
		b.WriteString(p[:i])
		if v, ok := sweepPathValues[p[i+1:j]]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(sweepMissingID)
		}
		p = p[j+1:]
	}
}

// sweepDo sends the row's request as the owner with the grant header: an
// empty JSON object as the body of a mutation. A stream's body is not
// read (it would not end).
func sweepDo(t *testing.T, k *webtest.Kit, rt *web.Route, token, grant string) webtest.Resp {
	t.Helper()
	var body io.Reader
	ctype := "application/json"
	if _, bulk := rt.Req.(app.BulkIDs); bulk {
		body = strings.NewReader(`{"ids":[` + sweepMissingID + `]}`)
	} else if rt.File && rt.IsMutation() {
		// An upload: its handler reads the form up to the file before it
		// calls the function, which must refuse before reading the file.
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		f, err := w.CreateFormFile("file", "sweep.csv")
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(f, "username\nsweep\n")
		w.Close()
		body, ctype = &b, w.FormDataContentType()
	} else if rt.IsMutation() {
		body = strings.NewReader("{}")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, rt.M, k.TS.URL+sweepPath(rt), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "acme.xr.test"
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(sweepGrant, grant)
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := webtest.Resp{Status: res.StatusCode, Header: res.Header}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return out
	}
	out.Body, _ = io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if bytes.HasPrefix(out.Body, []byte("{")) {
		json.Unmarshal(out.Body, &out.JSON)
	}
	return out
}

// sweepVersions returns a reader of the data versions of the given files,
// each through one connection held for the test: a commit by any other
// connection changes it.
func sweepVersions(t *testing.T, tenant, instance *sql.DB) func() [2]int64 {
	t.Helper()
	var conns []*sql.Conn
	for _, d := range []*sql.DB{tenant, instance} {
		c, err := d.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	return func() (v [2]int64) {
		for i, c := range conns {
			if err := c.QueryRowContext(context.Background(), `PRAGMA data_version`).Scan(&v[i]); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
}
