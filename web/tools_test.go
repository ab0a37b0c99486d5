package web_test

import (
	"fmt"
	"testing"

	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// toolsRows are the announcements and bulk-change rows with a body that
// would fail validation.
var toolsRows = []struct {
	m, p string
	body any
}{
	{"GET", "/admin/tools/announcements", nil},
	{"POST", "/admin/tools/announcements", map[string]any{"body": "{nope}", "channels": []string{"fax"}}},
	{"POST", "/admin/tools/announcements/preview-count", map[string]any{"target": map[string]any{"filter": map[string]any{"colour": "red"}}}},
	{"GET", "/admin/tools/announcements/999", nil},
	{"POST", "/admin/tools/bulk/apply", map[string]any{"operations": []any{map[string]any{"op": "explode"}}}},
	{"GET", "/admin/tools/bulk/jobs", nil},
	{"GET", "/admin/tools/bulk/jobs/999", nil},
	{"POST", "/admin/tools/bulk/preview", map[string]any{"operations": "no"}},
}

// TestToolsForbiddenBeforeValidation: a caller without the tools
// permission gets 403 on every row, whatever the body.
func TestToolsForbiddenBeforeValidation(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	_, tok := s.Manager(s.OwnerID, "clerk", "prm_users_index", "prm_users_extend")
	for _, r := range toolsRows {
		webtest.ExpectErr(t, s.Call(r.m, r.p, tok, r.body), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	// The owner reaches validation on the same bodies.
	webtest.ExpectErr(t, s.Call("POST", "/admin/tools/announcements", s.Tok, toolsRows[1].body), 400, "ERR_VALIDATION", "title_required")
	webtest.ExpectErr(t, s.Call("POST", "/admin/tools/bulk/apply", s.Tok, toolsRows[4].body), 400, "ERR_VALIDATION", "selection_required")
}

// TestToolsOverHTTP: preview-count, an announcement fanned out by the job
// runner and shown on /portal/me, and a bulk change previewed and applied
// with its per-row log.
func TestToolsOverHTTP(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	webtest.RunJobsBackground(t, s.App)

	res, rtok := s.Manager(s.OwnerID, "res", append([]string{"prm_tools_announcements", "prm_tools_bulk_changes"}, webtest.ResellerCodes...)...)
	alice := s.User(rtok, map[string]any{"username": "alice", "email": "alice@example.test", "portal_password": "Portal-pass-1"})
	s.User(rtok, map[string]any{"username": "bob"})
	s.User("", map[string]any{"username": "carol", "email": "carol@example.test"})

	r := s.Call("POST", "/admin/tools/announcements/preview-count", rtok, map[string]any{"channels": []string{"email", "inbox"}})
	if r.Status != 200 || r.Data()["subscribers"] != float64(2) || r.Data()["reachable"].(map[string]any)["email"] != float64(1) {
		t.Fatalf("preview-count: %d %s", r.Status, r.Body)
	}
	r = s.Call("POST", "/admin/tools/announcements", rtok, map[string]any{"title": "Hi", "body": "Hello {username} {speed}", "channels": []string{"inbox"}})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "unknown_variable")
	if r.Field() != "body" || r.JSON["error"].(map[string]any)["details"].(map[string]any)["variable"] != "speed" {
		t.Fatalf("unknown variable: %s", r.Body)
	}
	r = s.Call("POST", "/admin/tools/announcements", rtok, map[string]any{"title": "Hello {username}", "body": "Your plan: {plan}.", "channels": []string{"inbox", "email"}})
	if r.Status != 202 || r.Data()["recipients"] != float64(2) {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := r.Data()["id"]
	xrtest.Eventually(t, "announcement fanned out", func() bool {
		g := s.Call("GET", fmt.Sprintf("/admin/tools/announcements/%v", id), rtok, nil)
		return g.Status == 200 && g.Data()["state"] == "done"
	})
	if n := s.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE cause = ?`, fmt.Sprintf("announcement:%v", id)); n != 3 {
		t.Fatalf("%d messages, want 2 inbox + 1 email", n)
	}
	ptok := webtest.PortalLogin(t, s, "alice", "Portal-pass-1")
	me := s.Call("GET", "/portal/me", ptok, nil)
	if me.Status != 200 {
		t.Fatalf("me: %d %s", me.Status, me.Body)
	}
	ann, _ := me.Data()["announcements"].([]any)
	if len(ann) != 1 || ann[0].(map[string]any)["title"] != "Hello alice" {
		t.Fatalf("portal announcements: %s", me.Body)
	}
	_ = alice

	// Bulk change: preview then apply, within the reseller's subtree (a
	// future expiration, so both count from it).
	s.Exec(`UPDATE users SET expiration = '2099-01-01 00:00:00'`)
	body := map[string]any{"filter": map[string]any{"enabled": "true"}, "operations": []any{map[string]any{"op": "add_days", "days": 5}}}
	p := s.Call("POST", "/admin/tools/bulk/preview", rtok, body)
	if p.Status != 200 || p.Data()["matched"] != float64(2) || len(p.Data()["sample"].([]any)) != 2 {
		t.Fatalf("preview: %d %s", p.Status, p.Body)
	}
	a := s.Call("POST", "/admin/tools/bulk/apply", rtok, body)
	if a.Status != 202 {
		t.Fatalf("apply: %d %s", a.Status, a.Body)
	}
	var job map[string]any
	xrtest.Eventually(t, "bulk change applied", func() bool {
		g := s.Call("GET", fmt.Sprintf("/admin/tools/bulk/jobs/%v", a.Data()["id"]), rtok, nil)
		job = g.Data()
		return g.Status == 200 && job["state"] == "done"
	})
	rows := job["rows"].([]any)
	if job["ok"] != float64(2) || len(rows) != 2 {
		t.Fatalf("job: %v", job)
	}
	for i, row := range rows {
		after := row.(map[string]any)["after"].(map[string]any)
		want := p.Data()["sample"].([]any)[i].(map[string]any)["after"].(map[string]any)
		if after["expiration"] != want["expiration"] {
			t.Fatalf("row %d: applied %v, previewed %v", i, after["expiration"], want["expiration"])
		}
	}
	l := s.Call("GET", "/admin/tools/bulk/jobs", rtok, nil)
	if l.Status != 200 || len(l.List()) != 1 {
		t.Fatalf("jobs: %d %s", l.Status, l.Body)
	}
	_ = res
}
