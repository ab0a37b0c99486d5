package web_test

import (
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"xr/internal/webtest"
)

// The RadSec certificate rows: issue, read, download once, re-issue,
// revoke, the CA; their refusals; the NAS page's RadSec page.

func TestRadSecCertAPI(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	n := k.Do("POST", "acme", "/api/v1/admin/nas", tok, map[string]any{"name": "tower", "ip": "192.0.2.30", "secret": "a-long-shared-secret"})
	if n.Status != 201 {
		t.Fatalf("nas: %d %s", n.Status, n.Body)
	}
	base := fmt.Sprintf("/api/v1/admin/nas/%v/radsec-cert", n.Data()["id"])
	webtest.ExpectErr(t, k.Do("GET", "acme", base, tok, nil), 404, "ERR_NOT_FOUND", "radsec_cert_none")
	webtest.ExpectErr(t, k.Do("POST", "acme", base+"/download", tok, nil), 404, "ERR_NOT_FOUND", "radsec_cert_none")
	webtest.ExpectErr(t, k.Do("POST", "acme", base+"/revoke", tok, nil), 404, "ERR_NOT_FOUND", "radsec_cert_none")

	c := k.Do("POST", "acme", base, tok, nil)
	if c.Status != 201 || c.Data()["state"] != "awaiting_download" || len(c.Data()["fingerprint_sha256"].(string)) != 64 {
		t.Fatalf("issue: %d %s", c.Status, c.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", base, tok, nil), 409, "ERR_CONFLICT", "radsec_cert_exists")
	if g := k.Do("GET", "acme", base, tok, nil); g.Status != 200 || g.Data()["serial"] != c.Data()["serial"] || strings.Contains(string(g.Body), "PRIVATE KEY") {
		t.Fatalf("get: %d %s", g.Status, g.Body)
	}
	d := k.Do("POST", "acme", base+"/download", tok, nil)
	if d.Status != 200 {
		t.Fatalf("download: %d %s", d.Status, d.Body)
	}
	if _, err := tls.X509KeyPair([]byte(d.Data()["client_pem"].(string)), []byte(d.Data()["client_key"].(string))); err != nil || !strings.Contains(d.Data()["ca_pem"].(string), "BEGIN CERTIFICATE") {
		t.Fatalf("bundle: %v", err)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", base+"/download", tok, nil), 409, "ERR_CONFLICT", "radsec_key_downloaded")
	if g := k.Do("GET", "acme", base, tok, nil); g.Data()["state"] != "active" {
		t.Fatalf("after download: %s", g.Body)
	}
	re := k.Do("POST", "acme", base+"/reissue", tok, nil)
	if re.Status != 201 || re.Data()["fingerprint_sha256"] == c.Data()["fingerprint_sha256"] || re.Data()["state"] != "awaiting_download" {
		t.Fatalf("reissue: %d %s", re.Status, re.Body)
	}
	rv := k.Do("POST", "acme", base+"/revoke", tok, nil)
	if rv.Status != 200 || rv.Data()["state"] != "revoked" {
		t.Fatalf("revoke: %d %s", rv.Status, rv.Body)
	}
	ca := k.Do("GET", "acme", "/api/v1/admin/radsec/ca", tok, nil)
	if ca.Status != 200 || !strings.Contains(ca.Data()["ca_pem"].(string), "BEGIN CERTIFICATE") {
		t.Fatalf("ca: %d %s", ca.Status, ca.Body)
	}

	// Another tenant's NAS is a missing one; a reader may not issue.
	k.Tenant("beta")
	other := k.Owner("beta")
	webtest.ExpectErr(t, k.Do("POST", "beta", base, other, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.CreateRole(k, "acme", "nas-reader", "prm_nas_index")
	webtest.CreateManager(k, "acme", 0, "reader", "nas-reader")
	reader := k.Login("acme", "reader", webtest.Password)
	if g := k.Do("GET", "acme", base, reader, nil); g.Status != 200 {
		t.Fatalf("reader get: %d %s", g.Status, g.Body)
	}
	for _, p := range []string{base, base + "/reissue", base + "/download", base + "/revoke"} {
		webtest.ExpectErr(t, k.Do("POST", "acme", p, reader, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	if g := k.Do("GET", "acme", base, tok, nil); g.Data()["state"] != "revoked" || g.Data()["serial"] != re.Data()["serial"] {
		t.Fatalf("refused calls changed the certificate: %s", g.Body)
	}

	// The setup's RadSec variant.
	s := k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/nas/%v/setup?transport=radsec&server=203.0.113.9", n.Data()["id"]), tok, nil)
	if s.Status != 200 || s.Data()["transport"] != "radsec" || !strings.Contains(s.Data()["script"].(string), "protocol=radsec") {
		t.Fatalf("setup: %d %s", s.Status, s.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/nas/%v/setup?transport=carrier-pigeon", n.Data()["id"]), tok, nil), 400, "ERR_VALIDATION", "invalid_enum")
	// The explainer takes the method.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/radius/explain", tok, map[string]any{"username": "x", "nas_id": n.Data()["id"], "method": "eap-leap"}),
		400, "ERR_VALIDATION", "invalid_enum")
}
