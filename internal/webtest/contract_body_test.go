package webtest

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestContractBodyChecks: the body check (compiled once per schema) passes
// real answers of the API, and refuses a body that breaks its schema (a
// list answered as a string, an error without its reason, a reason not
// listed for the status) and a media type the operation does not document.
func TestContractBodyChecks(t *testing.T) {
	t.Parallel()
	k := New(t)
	owner := k.Owner("acme")
	doc, err := ContractDoc()
	if err != nil {
		t.Fatal(err)
	}
	list := k.Do("GET", "acme", "/api/v1/admin/profiles", owner, nil)
	missing := k.Do("GET", "acme", "/api/v1/admin/profiles/999999", owner, nil)
	if list.Status != 200 || missing.Status != 404 {
		t.Fatalf("setup: %d %d", list.Status, missing.Status)
	}
	for _, c := range []struct {
		name, path string
		status     int
		header     http.Header
		body       []byte
		refused    string // "" when the body must pass
	}{
		{"list as returned", "/api/v1/admin/profiles", 200, list.Header, list.Body, ""},
		{"error as returned", "/api/v1/admin/profiles/{id}", 404, missing.Header, missing.Body, ""},
		{"list as a string", "/api/v1/admin/profiles", 200, list.Header, bytes.Replace(list.Body, []byte(`"data":[`), []byte(`"data":"no","x":[`), 1), "doesn't match"},
		{"error without reason", "/api/v1/admin/profiles/{id}", 404, missing.Header, []byte(`{"error":{"code":"ERR_NOT_FOUND","message":"gone"}}`), "doesn't match"},
		{"reason not listed", "/api/v1/admin/profiles/{id}", 404, missing.Header, bytes.Replace(missing.Body, []byte(`"reason":"`), []byte(`"reason":"made_up_`), 1), "doesn't match"},
		{"undocumented media type", "/api/v1/admin/profiles", 200, http.Header{"Content-Type": {"text/plain"}}, []byte("plans"), "not documented"},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := doc.Paths.Value(c.path).Get
			err := validateBody(c.path, "GET", op, c.status, c.header, c.body)
			switch {
			case c.refused == "" && err != nil:
				t.Fatalf("refused: %v\n%s", err, c.body)
			case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
				t.Fatalf("want an error with %q, got %v", c.refused, err)
			}
		})
	}
}
