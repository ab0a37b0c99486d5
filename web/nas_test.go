package web_test

import (
	"fmt"
	"strings"
	"testing"

	"xr/app/aaa"
	"xr/internal/webtest"
)

func TestNASRegistry(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	s.Tenant("beta")
	btok := s.Owner("beta")
	const secret = "a-very-long-shared-secret-42"
	r := s.Call("POST", "/admin/nas", s.Tok, map[string]any{"name": "core", "ip": "192.0.2.10", "secret": secret, "type": "mikrotik"})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	if r.Data()["coa_port"].(float64) != 3799 || r.Data()["require_message_authenticator"] != true {
		t.Fatalf("defaults %s", r.Body)
	}
	noSecret := func(r webtest.Resp) {
		t.Helper()
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"secret"`) {
			t.Fatalf("secret returned: %s", r.Body)
		}
	}
	noSecret(r)
	// Short secrets are accepted with a warning.
	w := s.Call("POST", "/admin/nas", s.Tok, map[string]any{"name": "edge", "ip": "192.0.2.11", "secret": "short"})
	if w.Status != 201 || fmt.Sprint(w.Data()["warnings"]) != "[short_secret]" {
		t.Fatalf("%s", w.Body)
	}
	// The IP is unique across the instance, in this tenant and in another.
	webtest.ExpectErr(t, s.Call("POST", "/admin/nas", s.Tok, map[string]any{"name": "dup", "ip": "192.0.2.10", "secret": secret}), 409, "ERR_CONFLICT", "ip_taken")
	webtest.ExpectErr(t, s.Do("POST", "beta", "/api/v1/admin/nas", btok, map[string]any{"name": "dup", "ip": "192.0.2.10", "secret": secret}), 409, "ERR_CONFLICT", "ip_taken")
	webtest.ExpectErr(t, s.Do("POST", "beta", "/api/v1/admin/nas", btok, map[string]any{"name": "dup", "ip": "::ffff:192.0.2.10", "secret": secret}), 409, "ERR_CONFLICT", "ip_taken")
	for body, reason := range map[string]string{
		`{"ip":"192.0.2.12","secret":"s"}`:                         "name_required",
		`{"name":"n","secret":"s"}`:                                "ip_required",
		`{"name":"n","ip":"192.0.2.12"}`:                           "secret_required",
		`{"name":"n","ip":"300.1.1.1","secret":"s"}`:               "invalid_ip",
		`{"name":"n","ip":"192.0.2.12","secret":"s","coa_port":0}`: "invalid_port",
		`{"name":"n","ip":"192.0.2.12","secret":"s","type":"x"}`:   "invalid_enum",
	} {
		if r := s.Call("POST", "/admin/nas", s.Tok, body); r.Status != 400 || r.Reason() != reason {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
	// One page: every NAS, page_size = total, has_next false.
	l := s.Call("GET", "/admin/nas", s.Tok, nil)
	noSecret(l)
	if len(l.List()) != 2 || l.Meta()["total"].(float64) != 2 || l.Meta()["page_size"].(float64) != 2 || l.Meta()["has_next"] != false {
		t.Fatalf("%s", l.Body)
	}
	// Patch: new IP moves the index; the secret stays write-only.
	p := s.Call("PATCH", fmt.Sprintf("/admin/nas/%d", id), s.Tok, map[string]any{"ip": "192.0.2.20", "secret": "another-long-secret-123", "coa_port": 1700})
	if p.Status != 200 || p.Data()["ip"] != "192.0.2.20" || p.Data()["coa_port"].(float64) != 1700 {
		t.Fatalf("%d %s", p.Status, p.Body)
	}
	noSecret(p)
	if sec, err := aaa.NASSecret(webtest.Background, s.App, s.Ten, id); err != nil || string(sec) != "another-long-secret-123" {
		t.Fatalf("secret %q %v", sec, err)
	}
	// The old IP is free again, across the instance.
	if r := s.Do("POST", "beta", "/api/v1/admin/nas", btok, map[string]any{"name": "b", "ip": "192.0.2.10", "secret": secret}); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if g := s.Call("GET", fmt.Sprintf("/admin/nas/%d", id), s.Tok, nil); g.Status != 200 || g.Data()["name"] != "core" {
		t.Fatalf("%s", g.Body)
	}
	noSecret(s.Call("GET", fmt.Sprintf("/admin/nas/%d", id), s.Tok, nil))
	// Another tenant's NAS is not found here.
	webtest.ExpectErr(t, s.Call("GET", "/admin/nas/99", s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := s.Call("DELETE", fmt.Sprintf("/admin/nas/%d", id), s.Tok, nil); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, s.Call("DELETE", fmt.Sprintf("/admin/nas/%d", id), s.Tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	if r := s.Call("POST", "/admin/nas", s.Tok, map[string]any{"name": "again", "ip": "192.0.2.20", "secret": secret}); r.Status != 201 {
		t.Fatalf("deleted NAS kept its IP: %d %s", r.Status, r.Body)
	}
	// Permissions: a manager without prm_nas_* is refused.
	_, rtok := s.Manager(s.OwnerID, "nasres", webtest.ResellerCodes...)
	webtest.ExpectErr(t, s.Call("GET", "/admin/nas", rtok, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}
