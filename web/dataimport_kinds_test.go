package web_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"xr/internal/webtest"
)

// The new import kinds and the reseller-panel CSV set over HTTP: a cards
// file into a series that is still generating is 409, a managers file is
// checked with its line errors, and the CSV export is a zip of the set
// that the legacy import analyses back.
func TestDataImportKindsHTTP(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")

	r := k.Do("GET", "acme", "/api/v1/admin/import/fields", tok, nil)
	for _, kind := range []string{"managers", "cards", "coordinates"} {
		if r.Status != 200 || !strings.Contains(string(r.Body), `"kind":"`+kind+`"`) {
			t.Fatalf("%s: %d %s", kind, r.Status, r.Body)
		}
	}
	r = diUpload(k, "/admin/import/validate", tok, "m.csv", "username,parent,balance,password\nhk-north,,10,Hk-North-2026\nhk-x,hk-ghost,0,Hk-X-2026-pw\n",
		"kind", "managers")
	d := r.Data()
	if r.Status != 200 || d["created"] != float64(1) || d["failed"] != float64(1) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if e := d["errors"].([]any)[0].(map[string]any); e["line"] != float64(3) || e["column"] != "parent" || e["reason"] != "invalid_parent_id" {
		t.Fatalf("%v", e)
	}
	idExec(k, "acme", `INSERT INTO card_batches(name, card_mode, quantity, face_value, code_length, code_charset, expiration, status, owner_manager_id,
		created_by, created_at, updated_at) VALUES ('hk-busy', 'refill_balance', 1, 0, 8, 'numeric', '2030-01-01 00:00:00', 'generating', ?, ?, '2026-01-01 00:00:00', '2026-01-01 00:00:00')`, webtest.OwnerID(k, "acme"), webtest.OwnerID(k, "acme"))
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "c.csv", "code\n12345678\n", "kind", "cards", "series", "hk-busy"), 409, "ERR_CONFLICT", "card_batch_not_ready")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/jobs", tok, "c.csv", "code\n12345678\n", "kind", "cards", "series", "hk-none"), 400, "ERR_VALIDATION", "invalid_series")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "c.csv", "code\n12345678\n", "kind", "cards", "on_duplicate", "merge"), 400, "ERR_VALIDATION", "invalid_enum")

	// Import the managers, export the set, upload it as a legacy import.
	if r := diUpload(k, "/admin/import/jobs", tok, "m.csv", "username,balance,password\nhk-north,10,Hk-North-2026\n", "kind", "managers"); r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	diRunJobs(t, k)
	r = k.Do("GET", "acme", "/api/v1/admin/legacy/export?format=csv", tok, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/zip" || !strings.Contains(r.Header.Get("Content-Disposition"), "acme-legacy-csv.zip") {
		t.Fatalf("%d %v", r.Status, r.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(r.Body), int64(len(r.Body)))
	if err != nil || len(zr.File) != 5 || zr.File[0].Name != "managers.csv" {
		t.Fatalf("%v %d", err, len(zr.File))
	}
	r = diUpload(k, "/admin/legacy/import/jobs", tok, "acme-legacy-csv.zip", string(r.Body))
	if r.Status != 202 || r.Data()["kind"] != "panel_csv" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.Data()["id"].(float64)
	diRunJobs(t, k)
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/legacy/import/jobs/%d", int64(id)), tok, nil)
	a, _ := r.Data()["analysis"].(map[string]any)
	if r.Status != 200 || r.Data()["state"] != "analysed" || a["counts"].(map[string]any)["managers"] != float64(1) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
