package web_test

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// waitJob polls GET /jobs/{id} until the job is done.
func waitJob(s *webtest.Acme, id any, token string) map[string]any {
	s.T.Helper()
	var j map[string]any
	xrtest.Eventually(s.T, fmt.Sprintf("job %v to finish", id), func() bool {
		j = s.Call("GET", fmt.Sprintf("/jobs/%v", id), token, nil).Data()
		if j["state"] == "failed" || j["state"] == "cancelled" {
			s.T.Fatalf("job %v: %v", id, j)
		}
		return j["state"] == "done"
	})
	return j
}

func TestExportsMatchTheList(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	d := seed(s)
	for i := 0; i < 30; i++ {
		s.User("", map[string]any{"username": fmt.Sprintf("bulk%02d", i), "email": fmt.Sprintf("=cmd%d@yak.example", i)})
	}
	_, otok := s.Manager(s.OwnerID, "exother", webtest.ResellerCodes...)
	body := map[string]any{"format": "csv", "q": "yak", "filter": map[string]any{"enabled": true}, "sort": "username", "order": "asc", "request_id": "exp-1"}
	r := s.Call("POST", "/exports", s.Tok, body)
	if r.Status != 202 || r.Data()["state"] != "queued" || r.Data()["replay"] != false {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.Data()["export_id"]
	// Not ready before the runner has run it; replay answers the same export.
	webtest.ExpectErr(t, s.Call("GET", fmt.Sprintf("/exports/%v/download", id), s.Tok, nil), 409, "ERR_CONFLICT", "export_not_ready")
	if rp := s.Call("POST", "/exports", s.Tok, body); rp.Status != 200 || rp.Data()["replay"] != true || rp.Data()["export_id"] != id {
		t.Fatalf("replay %d %s", rp.Status, rp.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", "/exports", s.Tok, map[string]any{"filter": map[string]string{"created_from": "nope"}}), 400, "ERR_VALIDATION", "invalid_filter")
	webtest.ExpectErr(t, s.Call("POST", "/exports", s.Tok, map[string]any{"format": "pdf"}), 400, "ERR_VALIDATION", "invalid_enum")

	webtest.RunJobsBackground(t, s.App)
	waitJob(s, id, s.Tok)

	dl := s.Call("GET", fmt.Sprintf("/exports/%v/download", id), s.Tok, nil)
	if dl.Status != 200 || !strings.HasPrefix(dl.Header.Get("Content-Type"), "text/csv") || !strings.Contains(dl.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("%d %v %s", dl.Status, dl.Header, dl.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(dl.Body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	list := s.Call("GET", "/users?q=yak&filter[enabled]=true&sort=username&order=asc&page_size=200", s.Tok, nil)
	rows := list.List()
	if len(recs)-1 != len(rows) || len(rows) != 31 {
		t.Fatalf("export has %d rows, list %d", len(recs)-1, len(rows))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, row := range rows {
		m := row.(map[string]any)
		rec := recs[i+1]
		email := strings.TrimPrefix(rec[col["email"]], "'") // formula-looking text is defused
		if rec[col["id"]] != strconv.FormatFloat(m["id"].(float64), 'f', -1, 64) || rec[col["username"]] != m["username"] || email != m["email"] ||
			rec[col["balance"]] != strconv.FormatFloat(m["balance"].(float64), 'f', -1, 64) ||
			rec[col["can_connect"]] != strconv.FormatBool(m["status"].(map[string]any)["can_connect"].(bool)) {
			t.Fatalf("row %d: export %v, list %v", i, rec, m)
		}
	}
	if !strings.Contains(string(dl.Body), "'=cmd") {
		t.Fatal("formula cell not defused")
	}
	// Someone else's export answers like a missing one.
	suSame(t, s.Call("GET", fmt.Sprintf("/exports/%v/download", id), otok, nil), s.Call("GET", "/exports/999/download", otok, nil))

	// XLSX of a scoped reseller: exactly its rows.
	x := s.Call("POST", "/exports", d.resTok, map[string]any{"format": "xlsx"})
	if x.Status != 202 {
		t.Fatalf("%d %s", x.Status, x.Body)
	}
	waitJob(s, x.Data()["export_id"], d.resTok)
	xl := s.Call("GET", fmt.Sprintf("/exports/%v/download", x.Data()["export_id"]), d.resTok, nil)
	zr, err := zip.NewReader(bytes.NewReader(xl.Body), int64(len(xl.Body)))
	if err != nil || xl.Header.Get("Content-Type") != "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" {
		t.Fatalf("%v %v", err, xl.Header)
	}
	var sheet string
	for _, f := range zr.File {
		if f.Name == "xl/worksheets/sheet1.xml" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			sheet = string(b)
		}
	}
	if strings.Count(sheet, "<row ") != 2 || !strings.Contains(sheet, ">bravo<") || strings.Contains(sheet, ">alpha<") {
		t.Fatalf("sheet: %s", sheet)
	}
}
