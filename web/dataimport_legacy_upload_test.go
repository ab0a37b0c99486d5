package web_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"mime/multipart"
	"os"
	"path/filepath"
	"testing"

	"xr/internal/webtest"
)

// diUploadFiles posts a multipart upload of several files (name, content
// pairs) after the form fields.
func diUploadFiles(k *webtest.Kit, path, token string, fields []string, files ...string) webtest.Resp {
	k.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		mw.WriteField(fields[i], fields[i+1])
	}
	for i := 0; i+1 < len(files); i += 2 {
		fw, _ := mw.CreateFormFile("file", files[i])
		fw.Write([]byte(files[i+1]))
	}
	mw.Close()
	return k.Do("POST", "acme", "/api/v1"+path, token, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

// Several CSV files in one upload are stored as one zip of them: the
// reseller panel's set as it was exported (five files) analyses exactly as
// the same set zipped by hand, and FreeRADIUS's tables as CSV files import
// their subscribers and plans. A non-CSV file among several, or two files
// of one name, are refused with nothing stored.
func TestLegacyUploadOfSeveralCSVFiles(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	analysis := func(id float64) map[string]any {
		t.Helper()
		diRunJobs(t, k)
		r := k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+webtest.Itoa(int64(id)), tok, nil)
		if r.Status != 200 || r.Data()["state"] != "analysed" {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		return r.Data()["analysis"].(map[string]any)
	}

	var set []string
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for _, name := range []string{"cards.csv", "managers.csv", "profiles.csv", "series.csv", "users.csv"} {
		b, err := os.ReadFile(filepath.Join("../app/dataimport/testdata/panel", name))
		if err != nil {
			t.Fatal(err)
		}
		set = append(set, name, string(b))
		w, _ := zw.Create(name)
		w.Write(b)
	}
	zw.Close()
	r := diUploadFiles(k, "/admin/legacy/import/jobs", tok, nil, set...)
	if r.Status != 202 || r.Data()["kind"] != "panel_csv" || r.Data()["file_name"] != "tables.zip" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	several := analysis(r.Data()["id"].(float64))
	r = diUpload(k, "/admin/legacy/import/jobs", tok, "panel.zip", zipped.String())
	if r.Status != 202 || r.Data()["kind"] != "panel_csv" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	one := analysis(r.Data()["id"].(float64))
	a, _ := json.Marshal(several["counts"])
	b, _ := json.Marshal(one["counts"])
	if string(a) != string(b) || several["counts"].(map[string]any)["users"] == float64(0) {
		t.Fatalf("several files %s, one zip %s", a, b)
	}

	r = diUploadFiles(k, "/admin/legacy/import/jobs", tok, []string{"source", "freeradius"},
		"radcheck.csv", "username,attribute,op,value\nf-ann,Cleartext-Password,:=,pw-ann\nf-ben,Cleartext-Password,:=,pw-ben\n",
		"radusergroup.csv", "username,groupname,priority\nf-ann,tin,1\nf-ben,tin,1\n",
		"radgroupreply.csv", "groupname,attribute,op,value\ntin,Mikrotik-Rate-Limit,:=,3M/6M\n")
	if r.Status != 202 || r.Data()["kind"] != "freeradius" || r.Data()["format"] != "csv" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := r.Data()["id"].(float64)
	if c := analysis(id)["counts"].(map[string]any); c["users"] != float64(2) {
		t.Fatalf("counts %v", c)
	}
	if r = k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+webtest.Itoa(int64(id))+"/start", tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	diRunJobs(t, k)
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username IN ('f-ann', 'f-ben') AND p.name = 'tin'`); n != 2 {
		t.Fatalf("imported with their plan: %d", n)
	}

	runs := webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs`)
	stored := webtest.Scalar(k, "acme", `SELECT count(*) FROM files`)
	entries := func() int {
		es, _ := os.ReadDir(filepath.Join(k.App.FilesDir("acme"), "store"))
		return len(es)
	}
	onDisk := entries()
	var many []string
	for i := range 33 {
		many = append(many, "t"+webtest.Itoa(int64(i))+".csv", "a\n")
	}
	for _, c := range []struct {
		files  []string
		reason string
	}{
		{[]string{"radcheck.csv", "username,attribute,op,value\n", "radius.sql", "INSERT INTO radcheck VALUES (1);\n"}, "upload_not_csv"},
		{[]string{"users.csv", "a\n", "users.csv", "b\n"}, "duplicate_file_name"},
		{many, "too_many_files"},
	} {
		webtest.ExpectErr(t, diUploadFiles(k, "/admin/legacy/import/jobs", tok, nil, c.files...), 400, "ERR_VALIDATION", c.reason)
	}
	if webtest.Scalar(k, "acme", `SELECT count(*) FROM import_runs`) != runs || webtest.Scalar(k, "acme", `SELECT count(*) FROM files`) != stored || entries() != onDisk {
		t.Fatal("a refused upload left a run or a file")
	}
}
