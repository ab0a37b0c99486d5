package web_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"mime/multipart"
	"os"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"

	"xr/app/subs"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

func diUpload(k *webtest.Kit, path, token, name, content string, fields ...string) webtest.Resp {
	k.T.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(content))
	mw.Close()
	return k.Do("POST", "acme", "/api/v1"+path, token, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

// diRunJobs runs the tenant's due jobs until none is left.
func diRunJobs(t *testing.T, k *webtest.Kit) {
	t.Helper()
	for range 10 {
		n, err := k.App.Jobs.RunDue(context.Background(), "acme", time.Now().Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func TestDataImportHTTP(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	csv := "Username,Password,Email\nann,pw-ann,ann@x.example\nbob,pw-bob,nope\n"

	r := k.Do("GET", "acme", "/api/v1/admin/import/fields", tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"kind":"subscribers"`) || !strings.Contains(string(r.Body), "اسم المستخدم") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// The dry run reports every error with line and column; nothing written.
	r = diUpload(k, "/admin/import/validate", tok, "subs.csv", csv)
	d := r.Data()
	if r.Status != 200 || d["rows"] != float64(2) || d["created"] != float64(1) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	e := d["errors"].([]any)[0].(map[string]any)
	if e["line"] != float64(3) || e["column"] != "Email" || e["reason"] != "invalid_email" {
		t.Fatalf("%v", e)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users`); n != 0 {
		t.Fatal("validate wrote")
	}
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "subs.csv", csv, "mapping", `{"username":"login"}`), 400, "ERR_VALIDATION", "unknown_column")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "subs.csv", csv, "mapping", `[1]`), 400, "ERR_VALIDATION", "invalid_mapping")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "subs.csv", csv, "on_duplicate", "merge"), 400, "ERR_VALIDATION", "invalid_enum")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", tok, "subs.png", csv), 400, "ERR_VALIDATION", "file_extension_mismatch")

	// A job, partial: ann created, bob refused at line 3.
	r = diUpload(k, "/admin/import/jobs", tok, "subs.csv", csv, "partial", "true")
	if r.Status != 202 || r.Data()["state"] != "queued" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := int64(r.Data()["id"].(float64))
	diRunJobs(t, k)
	r = k.Do("GET", "acme", "/api/v1/admin/import/jobs/"+webtest.Itoa(id), tok, nil)
	d = r.Data()
	if r.Status != 200 || d["state"] != "done" || d["created"] != float64(1) || d["failed"] != float64(1) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if l := d["lines"].([]any)[0].(map[string]any); l["line"] != float64(3) || l["reason"] != "invalid_email" {
		t.Fatalf("%v", l)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users WHERE username = 'ann'`); n != 1 {
		t.Fatal("ann not imported")
	}
	r = k.Do("GET", "acme", "/api/v1/admin/import/jobs/"+webtest.Itoa(id)+"/errors.csv", tok, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), "3,failed,email,Email,invalid_email,bob") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", "/api/v1/admin/import/jobs", tok, nil)
	if r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/import/jobs/"+webtest.Itoa(id)+"/cancel", tok, nil), 409, "ERR_CONFLICT", "job_not_cancellable")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/import/jobs/999", tok, nil), 404, "ERR_NOT_FOUND", "not_found")

	// Without the permission: 403 before the upload is looked at.
	webtest.CreateRole(k, "acme", "viewer", string(subs.PermUsersIndex))
	webtest.CreateManager(k, "acme", 0, "viewer1", "viewer")
	vt := idSession(k, "acme", "viewer1")
	webtest.ExpectErr(t, diUpload(k, "/admin/import/validate", vt, "subs.csv", csv), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/legacy/export", vt, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestLegacyImportAndExportHTTP(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	dump, err := os.ReadFile("../app/dataimport/testdata/freeradius_mysql.sql")
	if err != nil {
		t.Fatal(err)
	}
	r := diUpload(k, "/admin/legacy/import/jobs", tok, "radius.sql", string(dump))
	if r.Status != 202 || r.Data()["state"] != "analysing" || r.Data()["kind"] != "freeradius" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := webtest.Itoa(int64(r.Data()["id"].(float64)))
	// Start before the analysis: refused.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+id+"/start", tok, map[string]any{}), 409, "ERR_CONFLICT", "job_not_analysed")
	diRunJobs(t, k)
	r = k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+id, tok, nil)
	a, _ := r.Data()["analysis"].(map[string]any)
	if r.Status != 200 || r.Data()["state"] != "analysed" || a["counts"].(map[string]any)["users"] != float64(8) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+id+"/start", tok, map[string]any{"on_duplicate": "merge"}), 400, "ERR_VALIDATION", "invalid_enum")
	r = k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+id+"/start", tok, map[string]any{"partial": true})
	if r.Status != 200 || r.Data()["state"] != "queued" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", "/api/v1/admin/legacy/import/jobs/"+id, tok, nil), 409, "ERR_CONFLICT", "job_running")
	diRunJobs(t, k)
	r = k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+id, tok, nil)
	if r.Data()["state"] != "done" || r.Data()["created"] != float64(6) || r.Data()["failed"] != float64(2) {
		t.Fatalf("%s", r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'alice' AND p.name = 'gold'`); n != 1 {
		t.Fatal("alice")
	}
	// Export in both dialects, streamed as a download.
	for _, f := range []string{"mysql", "postgresql"} {
		r = k.Do("GET", "acme", "/api/v1/admin/legacy/export?format="+f, tok, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), "INSERT INTO radcheck (username, attribute, op, value) VALUES") ||
			!strings.Contains(r.Header.Get("Content-Disposition"), "acme-freeradius-"+f+".sql") {
			t.Fatalf("%s: %d %s", f, r.Status, r.Body)
		}
	}
	if !strings.Contains(string(r.Body), `'al;ice''s pw'`) {
		t.Fatalf("postgresql quoting: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/legacy/export?format=oracle", tok, nil), 400, "ERR_VALIDATION", "invalid_enum")
	// Bulk delete of the finished run; its file goes with it.
	r = k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/bulk-delete", tok, map[string]any{"ids": []int64{xrtest.Scalar(t, k.Acquire("acme"), `SELECT id FROM import_runs`), 999}})
	if r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 || len(r.Data()["failed"].([]any)) != 1 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT count(*) FROM files WHERE area = 'imports'`); n != 0 {
		t.Fatalf("files left: %d", n)
	}
}

// A password imported hashed (MD5-Password) verifies by PAP through the
// real RADIUS server; CHAP for it is refused with a clear reason.
func TestLegacyHashedPasswordOverRadius(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	dump := "INSERT INTO `radcheck` VALUES (1,'lh-md5','MD5-Password',':=','5f4dcc3b5aa765d61d8327deb882cf99'),(2,'lh-md5','Expiration',':=','January 02 2030')," +
		"(3,'lh-clear','Cleartext-Password',':=','password'),(4,'lh-clear','Expiration',':=','January 02 2030');\n" +
		"INSERT INTO `radusergroup` VALUES (1,'lh-md5','Home',1),(2,'lh-clear','Home',1);\n" +
		"INSERT INTO `radpostauth` VALUES (1,'lh-clear','','Access-Accept','2026-01-01 10:00:00.000000',NULL),(2,'lh-md5','','Access-Accept','2031-01-01 10:00:00.000000',NULL)," +
		"(3,'ghost','','Access-Reject','2026-01-02 10:00:00.000000',NULL),(4,'lh-clear','','Access-Reject','2026-01-03 10:00:00.000000',NULL);\n"
	r := diUpload(k.Kit, "/admin/legacy/import/jobs", k.Tok, "radius.sql", dump)
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := webtest.Itoa(int64(r.Data()["id"].(float64)))
	diRunJobs(t, k.Kit)
	if r = k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+id+"/start", k.Tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	diRunJobs(t, k.Kit)
	if r = k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+id, k.Tok, nil); r.Data()["created"] != float64(2) {
		t.Fatalf("%s", r.Body)
	}
	// The cut-over proof: radpostauth replayed through the explainer.
	cut, _ := r.Data()["analysis"].(map[string]any)["cutover"].(map[string]any)
	kinds, _ := cut["by_kind"].(map[string]any)
	if cut["replayed"] != float64(4) || cut["agreements"] != float64(2) || cut["differences"] != float64(2) ||
		kinds["legacy accepted, xr would reject: expired"] != float64(1) || kinds["legacy rejected, xr would accept"] != float64(1) {
		t.Fatalf("cutover %v", cut)
	}
	// PAP: the hashed password answers like a clear one.
	if got, want := k.Auth("lh-md5", "password"), k.Auth("lh-clear", "password"); got != want || got != radius.CodeAccessAccept {
		t.Fatalf("PAP of the hashed password %v, of the clear one %v", got, want)
	}
	if got := k.Auth("lh-md5", "wrong"); got != radius.CodeAccessReject {
		t.Fatalf("wrong password %v", got)
	}
	// CHAP: refused with its reason.
	chap := func(user, pw string) *radius.Packet {
		p := radius.New(radius.CodeAccessRequest, []byte(webtest.RadiusSecret))
		rfc2865.UserName_SetString(p, user)
		h := md5.New()
		h.Write([]byte{7})
		h.Write([]byte(pw))
		h.Write(p.Authenticator[:])
		rfc2865.CHAPPassword_Set(p, append([]byte{7}, h.Sum(nil)...))
		rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
		b, _ := p.Encode()
		mac := hmac.New(md5.New, []byte(webtest.RadiusSecret))
		mac.Write(b)
		rfc2869.MessageAuthenticator_Set(p, mac.Sum(nil))
		return k.Exchange(p, k.AuthAddr)
	}
	res := chap("lh-md5", "password")
	if msg := rfc2865.ReplyMessage_GetString(res); res.Code != radius.CodeAccessReject || !strings.Contains(msg, "password reset required") {
		t.Fatalf("CHAP of a hashed password: %v %q", res.Code, msg)
	}
	if res := chap("lh-clear", "password"); res.Code != radius.CodeAccessAccept {
		t.Fatalf("CHAP of a clear password: %v", res.Code)
	}
}
