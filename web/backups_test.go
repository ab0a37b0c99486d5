package web_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"layeh.com/radius"

	"xr/app/backups"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// bkKit is the web kit with the job runner running.
func bkKit(t *testing.T) (*webtest.Kit, string) {
	k := webtest.New(t)
	webtest.RunJobsBackground(t, k.App)
	return k, k.Owner("acme")
}

// bkTake queues a backup through HTTP and waits for its record.
func bkTake(t *testing.T, k *webtest.Kit, slug, tok string, body map[string]any) map[string]any {
	t.Helper()
	r := k.Do("POST", slug, "/api/v1/admin/tools/backup", tok, body)
	if r.Status != 202 {
		t.Fatalf("backup: %d %s", r.Status, r.Body)
	}
	job := r.Data()["job_id"]
	var res webtest.Resp
	xrtest.Eventually(t, "backup job done", func() bool {
		res = k.Do("GET", slug, fmt.Sprintf("/api/v1/admin/tools/backup/jobs/%v", job), tok, nil)
		st := res.Data()["state"]
		if st == "failed" {
			t.Fatalf("backup job failed: %s", res.Body)
		}
		return st == "done"
	})
	if p := res.Data()["progress"]; p != res.Data()["progress_total"] || p != float64(4) {
		t.Fatalf("progress %s", res.Body)
	}
	id := res.Data()["result"].(map[string]any)["backup_id"]
	for _, b := range k.Do("GET", slug, "/api/v1/admin/tools/backup", tok, nil).List() {
		if m := b.(map[string]any); m["id"] == id {
			return m
		}
	}
	t.Fatalf("backup %v not listed", id)
	return nil
}

func bkFiles(t *testing.T, k *webtest.Kit, slug string) int {
	t.Helper()
	ents, err := os.ReadDir(backups.Dir(k.App, slug))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(ents)
}

func TestBackupsHTTP(t *testing.T) {
	t.Parallel()
	k, tok := bkKit(t)
	base := "/api/v1/admin/tools/backup"

	// request_id: the same key answers the same job.
	r1 := k.Do("POST", "acme", base, tok, map[string]any{"request_id": "bk-1"})
	r2 := k.Do("POST", "acme", base, tok, map[string]any{"request_id": "bk-1"})
	if r1.Status != 202 || r2.Status != 200 || r2.Data()["replay"] != true || r1.Data()["job_id"] != r2.Data()["job_id"] {
		t.Fatalf("%d %s / %d %s", r1.Status, r1.Body, r2.Status, r2.Body)
	}
	b := bkTake(t, k, "acme", tok, map[string]any{"exclude_closed_sessions": true})
	ver := b["verification"].(map[string]any)
	man := b["manifest"].(map[string]any)
	if b["kind"] != "manual" || ver["state"] != "ok" || b["size"].(float64) <= 0 || man["tenant_slug"] != "acme" ||
		man["sha256"] != b["sha256"] || man["row_counts"].(map[string]any)["managers"] != float64(1) || man["exclude_closed_sessions"] != true {
		t.Fatalf("backup record %v", b)
	}
	id := b["id"]

	// Download with the bearer header, then with a single-use ticket.
	dl := k.Do("GET", "acme", fmt.Sprintf("%s/%v/download", base, id), tok, nil)
	if dl.Status != 200 || int64(len(dl.Body)) != int64(b["size"].(float64)) || !bytes.HasPrefix(dl.Body, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
		t.Fatalf("download %d %v", dl.Status, dl.Header)
	}
	tk := k.Do("POST", "acme", fmt.Sprintf("%s/%v/download-ticket", base, id), tok, nil)
	if tk.Status != 200 {
		t.Fatalf("ticket %d %s", tk.Status, tk.Body)
	}
	url := tk.Data()["url"].(string)
	if got := k.Do("GET", "acme", url, "", nil); got.Status != 200 || !bytes.Equal(got.Body, dl.Body) {
		t.Fatalf("ticket download %d", got.Status)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", url, "", nil), 404, "ERR_NOT_FOUND", "download_ticket_invalid")
	var stored int64
	if err := k.App.Inst.R.QueryRow(`SELECT COUNT(*) FROM backup_tickets WHERE token_hash = ?`, []byte(tk.Data()["token"].(string))).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("the token is stored in clear: %d %v", stored, err)
	}
	// An expired ticket, and a ticket used on another tenant's host.
	tk2 := k.Do("POST", "acme", fmt.Sprintf("%s/%v/download-ticket", base, id), tok, nil).Data()["url"].(string)
	k.Tenant("beta")
	webtest.ExpectErr(t, k.Do("GET", "beta", tk2, "", nil), 404, "ERR_NOT_FOUND", "download_ticket_invalid")
	if _, err := k.App.Inst.W.Exec(`UPDATE backup_tickets SET expires_at = '2000-01-01 00:00:00' WHERE used_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", tk2, "", nil), 404, "ERR_NOT_FOUND", "download_ticket_invalid")

	// Uploads: a corrupted file is refused and leaves nothing behind.
	files := bkFiles(t, k, "acme")
	count := len(k.Do("GET", "acme", base, tok, nil).List())
	bad := append([]byte{}, dl.Body...)
	bad[len(bad)/2] ^= 0xff
	for _, body := range [][]byte{bad, []byte("SQLite format 3\x00 but not really"), []byte("hello")} {
		r := k.Do("POST", "acme", base+"/upload", tok, body, "Content-Type", "application/octet-stream")
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_backup_file")
	}
	if n := len(k.Do("GET", "acme", base, tok, nil).List()); n != count || bkFiles(t, k, "acme") != files {
		t.Fatalf("a refused upload left %d records, %d files (had %d, %d)", n, bkFiles(t, k, "acme"), count, files)
	}
	// A good one, as multipart.
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("file", "acme.xrbak.zst")
	fw.Write(dl.Body)
	mw.Close()
	up := k.Do("POST", "acme", base+"/upload", tok, mp.Bytes(), "Content-Type", mw.FormDataContentType())
	if up.Status != 201 || up.Data()["kind"] != "uploaded" || up.Data()["verification"].(map[string]any)["state"] != "ok" {
		t.Fatalf("upload %d %s", up.Status, up.Body)
	}

	// Restore: state after the backup goes; request_id replays; a safety
	// backup is taken first.
	idExec(k, "acme", `UPDATE managers SET firstname = 'after' WHERE parent_id IS NULL`)
	before := len(k.Do("GET", "acme", base, tok, nil).List())
	rs := k.Do("POST", "acme", fmt.Sprintf("%s/%v/restore", base, id), tok, map[string]any{"request_id": "rs-1"})
	if rs.Status != 200 || rs.Data()["safety_backup_id"] == nil || rs.Data()["replay"] != false {
		t.Fatalf("restore %d %s", rs.Status, rs.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers WHERE firstname = 'after'`); n != 0 {
		t.Fatal("restore kept the later change")
	}
	again := k.Do("POST", "acme", fmt.Sprintf("%s/%v/restore", base, id), tok, map[string]any{"request_id": "rs-1"})
	if again.Status != 200 || again.Data()["replay"] != true || again.Data()["safety_backup_id"] != rs.Data()["safety_backup_id"] {
		t.Fatalf("replay %d %s", again.Status, again.Body)
	}
	if n := len(k.Do("GET", "acme", base, tok, nil).List()); n != before+1 {
		t.Fatalf("%d backups after restore and replay, want %d (one safety backup)", n, before+1)
	}
	// The records outlive the restore (instance database).
	if _, err := k.App.Inst.R.Exec(`SELECT 1`); err != nil {
		t.Fatal(err)
	}

	// Another tenant's backup: not found from acme, refused as an upload.
	btok := k.Owner("beta")
	bb := bkTake(t, k, "beta", btok, nil)
	webtest.ExpectErr(t, k.Do("POST", "acme", fmt.Sprintf("%s/%v/restore", base, bb["id"]), tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, k.Do("GET", "acme", fmt.Sprintf("%s/%v/download", base, bb["id"]), tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	betaFile := k.Do("GET", "beta", fmt.Sprintf("%s/%v/download", base, bb["id"]), btok, nil).Body
	files = bkFiles(t, k, "acme")
	webtest.ExpectErr(t, k.Do("POST", "acme", base+"/upload", tok, betaFile, "Content-Type", "application/zstd"), 400, "ERR_VALIDATION", "backup_of_other_tenant")
	if bkFiles(t, k, "acme") != files {
		t.Fatal("a refused upload left a file")
	}

	// Delete and bulk delete remove the record and the file.
	del := k.Do("DELETE", "acme", fmt.Sprintf("%s/%v", base, up.Data()["id"]), tok, nil)
	if del.Status != 200 && del.Status != 204 {
		t.Fatalf("delete %d %s", del.Status, del.Body)
	}
	if _, err := os.Stat(filepath.Join(backups.Dir(k.App, "acme"), up.Data()["file"].(string))); !os.IsNotExist(err) {
		t.Fatalf("file kept: %v", err)
	}
	bulk := k.Do("POST", "acme", base+"/bulk-delete", tok, map[string]any{"ids": []any{id, bb["id"]}})
	if bulk.Status != 200 || len(bulk.Data()["updated"].([]any)) != 1 {
		t.Fatalf("bulk %d %s", bulk.Status, bulk.Body)
	}
	if n := xrtest.Scalar(t, k.Acquire("beta"), `SELECT 1`); n != 1 {
		t.Fatal()
	}
	var betaLeft int64
	k.App.Inst.R.QueryRow(`SELECT COUNT(*) FROM backups WHERE id = ?`, bb["id"]).Scan(&betaLeft)
	if betaLeft != 1 {
		t.Fatal("bulk delete from acme removed beta's backup")
	}
}

func TestBackupsPermissionsBeforeValidation(t *testing.T) {
	t.Parallel()
	k, _ := bkKit(t)
	webtest.CreateManager(k, "acme", 0, "clerk", "cashier")
	ctok := idSession(k, "acme", "clerk")
	for _, c := range []struct{ m, p string }{
		{"POST", "/admin/tools/backup"}, {"GET", "/admin/tools/backup"}, {"POST", "/admin/tools/backup/upload"},
		{"PUT", "/admin/tools/backup/schedule"}, {"POST", "/admin/tools/backup/1/restore"}, {"GET", "/admin/tools/backup/1/download"},
		{"POST", "/admin/tools/factory-reset"}, {"GET", "/admin/tools/factory-reset/preview"},
	} {
		r := k.Do(c.m, "acme", "/api/v1"+c.p, ctok, "{not json")
		webtest.ExpectErr(t, r, 403, "ERR_FORBIDDEN", "insufficient_permissions")
	}
	// A reseller holding the code but not tenant-wide is refused too.
	rid := webtest.CreateRole(k, "acme", "bk", "prm_tools_backup", "prm_managers_index")
	_ = rid
	webtest.CreateManager(k, "acme", 0, "sub", "bk")
	stok := idSession(k, "acme", "sub")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/backup/upload", stok, "garbage"), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}

func TestBackupScheduleHTTP(t *testing.T) {
	t.Parallel()
	k, tok := bkKit(t)
	p := "/api/v1/admin/tools/backup/schedule"
	g := k.Do("GET", "acme", p, tok, nil)
	if g.Status != 200 || g.Data()["enabled"] != false {
		t.Fatalf("%d %s", g.Status, g.Body)
	}
	webtest.ExpectErr(t, k.Do("PUT", "acme", p, tok, map[string]any{"enabled": true, "frequency": "weekly", "time": "03:00", "keep_daily": 7}), 400, "ERR_VALIDATION", "weekdays_required")
	webtest.ExpectErr(t, k.Do("PUT", "acme", p, tok, map[string]any{"enabled": true, "frequency": "daily", "time": "25:00", "keep_daily": 7}), 400, "ERR_VALIDATION", "invalid_time_of_day")
	webtest.ExpectErr(t, k.Do("PUT", "acme", p, tok, map[string]any{"enabled": true, "frequency": "daily", "time": "03:00", "keep_daily": 7, "destination_ids": []int{99}}), 400, "ERR_VALIDATION", "backup_destination_unknown")
	r := k.Do("PUT", "acme", p, tok, map[string]any{"enabled": true, "frequency": "weekly", "weekdays": []string{"mon", "thu"}, "time": "02:30", "keep_daily": 3, "keep_weekly": 2})
	if r.Status != 200 || r.Data()["next_run_at"] == nil || r.Data()["time"] != "02:30" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM jobs WHERE kind = 'backup.scheduled' AND state = 'queued'`); n != 1 {
		t.Fatalf("%d queued scheduled runs", n)
	}
	// Changing it replaces the queued run.
	k.Do("PUT", "acme", p, tok, map[string]any{"enabled": true, "frequency": "daily", "time": "04:00", "keep_daily": 3})
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM jobs WHERE kind = 'backup.scheduled' AND state = 'queued'`); n != 1 {
		t.Fatalf("%d queued scheduled runs", n)
	}
}

func TestFactoryResetHTTP(t *testing.T) {
	t.Parallel()
	k, tok := bkKit(t)
	webtest.CreateManager(k, "acme", 0, "clerk", "cashier")
	webtest.CreateRole(k, "acme", "custom", "prm_users_index")
	managers := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers`)
	pv := k.Do("GET", "acme", "/api/v1/admin/tools/factory-reset/preview", tok, nil)
	kept := pv.Data()["kept"].(map[string]any)
	if pv.Status != 200 || kept["owner"].(map[string]any)["username"] != "owner" || kept["license"] == nil || pv.Data()["total"].(float64) < 2 {
		t.Fatalf("%d %s", pv.Status, pv.Body)
	}
	// Wrong password: nothing deleted, no safety backup.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/factory-reset", tok, map[string]any{"password": "wrong-password"}), 400, "ERR_VALIDATION", "invalid_password")
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers`); n != managers {
		t.Fatalf("%d managers after a refused reset", n)
	}
	// An API token is refused (session only).
	api, _ := idAPIToken(k, "acme", tok, map[string]any{"scopes": []string{"prm_tools_factory_reset"}})
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/tools/factory-reset", api, map[string]any{"password": webtest.Password}), 403, "ERR_FORBIDDEN", "api_token_forbidden")
	lic := k.Do("GET", "acme", "/api/v1/auth/me", tok, nil)

	r := k.Do("POST", "acme", "/api/v1/admin/tools/factory-reset", tok, map[string]any{"password": webtest.Password, "request_id": "fr-1"})
	if r.Status != 200 || r.Data()["safety_backup_id"] == nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers`); n != 1 {
		t.Fatalf("%d managers after reset", n)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM roles WHERE name = 'custom'`); n != 0 {
		t.Fatal("custom role kept")
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM roles WHERE is_system = 1`); n == 0 {
		t.Fatal("system roles deleted")
	}
	// The owner still signs in; the licence (instance registry) is untouched.
	tok2 := k.Owner("acme")
	if me := k.Do("GET", "acme", "/api/v1/auth/me", tok2, nil); me.Status != 200 || fmt.Sprint(me.Data()["license"]) != fmt.Sprint(lic.Data()["license"]) {
		t.Fatalf("me %d %s", me.Status, me.Body)
	}
	// The safety backup is listed and restorable.
	list := k.Do("GET", "acme", "/api/v1/admin/tools/backup", tok2, nil).List()
	if len(list) != 1 || list[0].(map[string]any)["kind"] != "safety" {
		t.Fatalf("%v", list)
	}
	rs := k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/tools/backup/%v/restore", list[0].(map[string]any)["id"]), tok2, nil)
	if rs.Status != 200 || webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM managers`) != managers {
		t.Fatalf("restore of the safety backup %d %s", rs.Status, rs.Body)
	}
	_ = http.StatusOK
}

// A restore changes what RADIUS answers at once (the index reloads from
// the swapped file, no wait, no poll); a factory reset takes the NAS out.
func TestRestoreAndResetReloadRadius(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	webtest.RunJobsBackground(t, k.App)
	k.CreateUser("alice")
	if c := k.Auth("alice", "pw-alice"); c != radius.CodeAccessAccept {
		t.Fatalf("alice before: %v", c)
	}
	b := bkTake(t, k.Kit, "acme", k.Tok, nil)
	k.CreateUser("bob")
	if c := k.Auth("bob", "pw-bob"); c != radius.CodeAccessAccept {
		t.Fatalf("bob before the restore: %v", c)
	}
	r := k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/tools/backup/%v/restore", b["id"]), k.Tok, map[string]any{"request_id": "radius-restore"})
	if r.Status != 200 {
		t.Fatalf("restore %d %s", r.Status, r.Body)
	}
	if c := k.Auth("bob", "pw-bob"); c != radius.CodeAccessReject {
		t.Fatalf("bob after the restore: %v", c)
	}
	if c := k.Auth("alice", "pw-alice"); c != radius.CodeAccessAccept {
		t.Fatalf("alice after the restore: %v", c)
	}
	r = k.Do("POST", "acme", "/api/v1/admin/tools/factory-reset", k.Tok, map[string]any{"password": webtest.Password})
	if r.Status != 200 {
		t.Fatalf("reset %d %s", r.Status, r.Body)
	}
	// The reset deleted the NAS too: its address leaves the directory, so
	// the server no longer answers it.
	if _, ok := k.Svc.LookupNAS(netip.MustParseAddr("127.0.0.1")); ok {
		t.Fatal("the NAS is still in the directory after the reset")
	}
}
