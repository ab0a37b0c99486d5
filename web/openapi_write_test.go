package web_test

import (
	"encoding/json"
	"os"
	"testing"

	"xr/internal/webtest"
	"xr/web"
)

// TestOpenAPIWrite writes /openapi.json to $XR_OPENAPI_OUT (for .ci/run's
// lint); without it the test only checks the document builds and
// validates (kin-openapi).
func TestOpenAPIWrite(t *testing.T) {
	t.Parallel()
	s := web.New(pfBareApp(t))
	if _, err := webtest.ContractDoc(); err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("XR_OPENAPI_OUT")
	if out == "" {
		return
	}
	b, err := json.MarshalIndent(s.OpenAPI(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
