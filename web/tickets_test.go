package web_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
)

// Tests of the support tickets rows (prefix tk).

var tkAgentCodes = []string{"prm_tickets_view", "prm_tickets_reply", "prm_tickets_assign"}

type tkEnv struct {
	*webtest.Acme
	resA, resB       int64
	tokA, tokB       string
	subA, subB, subO int64 // subscribers of reseller A, reseller B, the owner
	portA, portB     string
}

func newTk(t *testing.T) *tkEnv {
	t.Helper()
	s := webtest.NewAcme(t)
	e := &tkEnv{Acme: s}
	e.resA, e.tokA = s.Manager(s.OwnerID, "resa", tkAgentCodes...)
	e.resB, e.tokB = s.Manager(s.OwnerID, "resb", tkAgentCodes...)
	e.subA = s.User("", map[string]any{"username": "anna", "password": "radius-anna", "email": "anna@isp.example", "parent_id": e.resA})
	e.subB = s.User("", map[string]any{"username": "bert", "password": "radius-bert", "email": "bert@isp.example", "parent_id": e.resB})
	e.subO = s.User("", map[string]any{"username": "olga", "password": "radius-olga"})
	e.portA = webtest.PortalLogin(t, s, "anna", "radius-anna")
	e.portB = webtest.PortalLogin(t, s, "bert", "radius-bert")
	return e
}

func tkID(r webtest.Resp) int64 { return int64(r.Data()["id"].(float64)) }

// ticket opens a ticket as token for subscriber uid.
func (e *tkEnv) ticket(token string, uid int64, subject string, extra ...any) int64 {
	e.T.Helper()
	body := map[string]any{"subject": subject, "body": "Help with " + subject, "user_id": uid}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := e.Call("POST", "/tickets", token, body)
	if r.Status != 201 {
		e.T.Fatalf("create ticket %s: %d %s", subject, r.Status, r.Body)
	}
	return tkID(r)
}

func tkListIDs(t *testing.T, r webtest.Resp) []int64 {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var ids []int64
	for _, row := range r.List() {
		ids = append(ids, int64(row.(map[string]any)["id"].(float64)))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func tkSame(a, b []int64) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestTicketsScopeMatrix(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	tA := e.ticket(e.tokA, e.subA, "A's line is down")
	tB := e.ticket(e.tokB, e.subB, "B's router")
	tO := e.ticket(e.Tok, e.subO, "Owner's subscriber")

	// A reseller cannot open a ticket for another reseller's subscriber.
	r := e.Call("POST", "/tickets", e.tokA, map[string]any{"subject": "x", "body": "y", "user_id": e.subB})
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "invalid_subscriber")

	if got := tkListIDs(t, e.Call("GET", "/tickets", e.Tok, nil)); !tkSame(got, []int64{tA, tB, tO}) {
		t.Fatalf("owner sees %v", got)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets", e.tokA, nil)); !tkSame(got, []int64{tA}) {
		t.Fatalf("reseller A sees %v", got)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets", e.tokB, nil)); !tkSame(got, []int64{tB}) {
		t.Fatalf("reseller B sees %v", got)
	}
	// Outside the scope answers exactly like a missing ticket.
	out := e.Call("GET", fmt.Sprintf("/tickets/%d", tB), e.tokA, nil)
	missing := e.Call("GET", "/tickets/999999", e.tokA, nil)
	webtest.ExpectErr(t, out, 404, "ERR_NOT_FOUND", "not_found")
	if out.Code() != missing.Code() || out.Reason() != missing.Reason() || len(out.JSON) != len(missing.JSON) {
		t.Fatalf("out of scope %s vs missing %s", out.Body, missing.Body)
	}
	webtest.ExpectErr(t, e.Call("POST", fmt.Sprintf("/tickets/%d/messages", tB), e.tokA, map[string]any{"body": "hi"}), 404, "ERR_NOT_FOUND", "not_found")

	// Assigned to B, the owner's ticket becomes visible to B (only).
	r = e.Call("POST", fmt.Sprintf("/tickets/%d/assign", tO), e.Tok, map[string]any{"assignee_id": e.resB})
	if r.Status != 200 || r.Data()["assignee_id"].(float64) != float64(e.resB) {
		t.Fatalf("assign: %d %s", r.Status, r.Body)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets", e.tokB, nil)); !tkSame(got, []int64{tB, tO}) {
		t.Fatalf("reseller B after assignment sees %v", got)
	}
	if r := e.Call("GET", "/tickets/counts", e.tokB, nil); r.Data()["mine"].(float64) != 1 || r.Data()["total"].(float64) != 2 {
		t.Fatalf("counts of B: %s", r.Body)
	}
	// A reseller cannot assign to a manager outside its subtree.
	webtest.ExpectErr(t, e.Call("POST", fmt.Sprintf("/tickets/%d/assign", tA), e.tokA, map[string]any{"assignee_id": e.resB}), 400, "ERR_VALIDATION", "invalid_assignee")

	// Bulk: the spec's shape, out of scope = not_authorized, missing = not_found.
	r = e.Call("POST", "/tickets/bulk-close", e.tokA, map[string]any{"ids": []int64{tA, tB, 999999}})
	if r.Status != 200 {
		t.Fatalf("bulk: %d %s", r.Status, r.Body)
	}
	upd, _ := r.Data()["updated"].([]any)
	failed, _ := r.Data()["failed"].([]any)
	if len(upd) != 1 || upd[0].(float64) != float64(tA) || len(failed) != 2 {
		t.Fatalf("bulk shape: %s", r.Body)
	}
	reasons := map[float64]string{}
	for _, f := range failed {
		m := f.(map[string]any)
		reasons[m["id"].(float64)] = m["reason"].(string)
	}
	if reasons[float64(tB)] != "not_authorized" || reasons[999999] != "not_found" {
		t.Fatalf("bulk failures: %s", r.Body)
	}
	if st := e.str(`SELECT state FROM tickets WHERE id = ?`, tB); st != "new" {
		t.Fatalf("B's ticket touched: %s", st)
	}

	// Portal: each subscriber sees only its own tickets.
	if got := tkListIDs(t, e.Call("GET", "/portal/tickets", e.portA, nil)); !tkSame(got, []int64{tA}) {
		t.Fatalf("subscriber A sees %v", got)
	}
	if got := tkListIDs(t, e.Call("GET", "/user/tickets", e.portB, nil)); !tkSame(got, []int64{tB}) {
		t.Fatalf("subscriber B sees %v", got)
	}
	webtest.ExpectErr(t, e.Call("GET", fmt.Sprintf("/portal/tickets/%d", tA), e.portB, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, e.Call("POST", fmt.Sprintf("/user/tickets/%d/messages", tA), e.portB, map[string]any{"body": "me too"}), 404, "ERR_NOT_FOUND", "not_found")
	// A staff token is not a portal token, and the reverse.
	if r := e.Call("GET", "/portal/tickets", e.Tok, nil); r.Status != 401 {
		t.Fatalf("staff token on portal: %d", r.Status)
	}
	if r := e.Call("GET", "/tickets", e.portA, nil); r.Status != 401 {
		t.Fatalf("portal token on staff: %d", r.Status)
	}
}

func (e *tkEnv) str(q string, args ...any) string {
	e.T.Helper()
	var s string
	if err := e.Ten.DB.R.QueryRow(q, args...).Scan(&s); err != nil {
		e.T.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestTicketsForbiddenBeforeValidation(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	_, viewer := e.Manager(e.OwnerID, "viewer", "prm_tickets_view")
	webtest.ExpectErr(t, e.Call("POST", "/tickets", viewer, map[string]any{"subject": 5}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, e.Call("POST", "/tickets/bulk-close", viewer, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, e.Call("POST", "/tickets/categories", e.tokA, "not json"), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, e.Call("POST", "/tickets/1/attach", viewer, "garbage"), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// Then validation, for one who may.
	webtest.ExpectErr(t, e.Call("POST", "/tickets", e.Tok, map[string]any{"body": "x", "user_id": e.subA}), 400, "ERR_VALIDATION", "subject_required")
	webtest.ExpectErr(t, e.Call("POST", "/tickets", e.Tok, map[string]any{"subject": "s", "body": "x"}), 400, "ERR_VALIDATION", "requester_required")
	webtest.ExpectErr(t, e.Call("POST", "/tickets", e.Tok, map[string]any{"subject": "s", "body": "x", "requester_email": "a@b.example", "priority": "panic"}), 400, "ERR_VALIDATION", "invalid_enum")
	webtest.ExpectErr(t, e.Call("POST", "/tickets/bulk-close", e.Tok, map[string]any{"ids": []int64{}}), 400, "ERR_VALIDATION", "ids_required")
	if n := e.Scalar(`SELECT COUNT(*) FROM tickets`); n != 0 {
		t.Fatalf("%d tickets stored", n)
	}
}

func TestTicketsStateMachineHTTP(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	id := e.ticket(e.Tok, e.subA, "Slow")
	path := fmt.Sprintf("/tickets/%d", id)
	state := func() string { return e.str(`SELECT state FROM tickets WHERE id = ?`, id) }

	webtest.ExpectErr(t, e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "reopen"}), 409, "ERR_CONFLICT", "invalid_transition")
	webtest.ExpectErr(t, e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "fly"}), 400, "ERR_VALIDATION", "invalid_enum")
	webtest.ExpectErr(t, e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "snooze", "until": "2001-01-01 00:00:00"}), 400, "ERR_VALIDATION", "snooze_in_past")

	// A staff public reply waits for the requester; the requester's reply reopens.
	if r := e.Call("POST", path+"/messages", e.Tok, map[string]any{"body": "Restart the router"}); r.Status != 201 || r.Data()["state"] != "pending" {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	if e.str(`SELECT COALESCE(first_responded_at, '') FROM tickets WHERE id = ?`, id) == "" {
		t.Fatal("first response not recorded")
	}
	if r := e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "resolve"}); r.Status != 200 || r.Data()["state"] != "resolved" {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	if r := e.Call("POST", fmt.Sprintf("/portal/tickets/%d/messages", id), e.portA, map[string]any{"body": "Still slow"}); r.Status != 201 || r.Data()["state"] != "open" {
		t.Fatalf("subscriber reply on resolved: %d %s", r.Status, r.Body)
	}
	// Closed is terminal for single moves and messages.
	if r := e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "close"}); r.Status != 200 {
		t.Fatalf("close: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "reopen"}), 409, "ERR_CONFLICT", "ticket_closed")
	webtest.ExpectErr(t, e.Call("POST", fmt.Sprintf("/portal/tickets/%d/messages", id), e.portA, map[string]any{"body": "hello?"}), 409, "ERR_CONFLICT", "ticket_closed")
	webtest.ExpectErr(t, e.Call("POST", path+"/messages", e.Tok, map[string]any{"body": "note", "internal": true}), 409, "ERR_CONFLICT", "ticket_closed")
	if state() != "closed" {
		t.Fatalf("state %s", state())
	}
	// bulk-reopen within the window; past it, 409 in the failures.
	r := e.Call("POST", "/tickets/bulk-reopen", e.Tok, map[string]any{"ids": []int64{id}})
	if r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 || state() != "open" {
		t.Fatalf("bulk-reopen: %s (%s)", r.Body, state())
	}
	e.Call("POST", path+"/state", e.Tok, map[string]any{"action": "close"})
	e.Exec(`UPDATE tickets SET closed_at = ? WHERE id = ?`, app.FormatTime(time.Now().UTC().Add(-8*24*time.Hour)), id)
	r = e.Call("POST", "/tickets/bulk-reopen", e.Tok, map[string]any{"ids": []int64{id}})
	if f := r.Data()["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["message"] != "reopen_window_passed" || state() != "closed" {
		t.Fatalf("bulk-reopen past the window: %s", r.Body)
	}

	// Snooze then wake by the job.
	id2 := e.ticket(e.Tok, e.subA, "Snooze me")
	until := time.Now().UTC().Add(2 * time.Second).Format("2006-01-02 15:04:05")
	r = e.Call("POST", "/tickets/bulk-snooze", e.Tok, map[string]any{"ids": []int64{id2}, "until": until})
	if r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 {
		t.Fatalf("bulk-snooze: %s", r.Body)
	}
	e.App.Jobs.Notify("acme", time.Now())
	if e.str(`SELECT state FROM tickets WHERE id = ?`, id2) != "snoozed" {
		t.Fatal("not snoozed")
	}
	// The wake job is queued for the snooze time.
	if n := e.Scalar(`SELECT COUNT(*) FROM jobs WHERE kind = 'tickets.wake' AND run_at = ?`, until); n != 1 {
		t.Fatalf("%d wake jobs", n)
	}
	// Events of the moves were written.
	for _, typ := range []string{"ticket.created", "ticket.replied", "ticket.state_changed"} {
		if n := e.Scalar(`SELECT COUNT(*) FROM events WHERE type = ?`, typ); n == 0 {
			t.Errorf("no %s event", typ)
		}
	}
}

func tkUpload(t *testing.T, e *tkEnv, path, token, name string, content []byte, fields ...string) webtest.Resp {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		mw.WriteField(fields[i], fields[i+1])
	}
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(content)
	mw.Close()
	return e.Do("POST", "acme", "/api/v1"+path, token, buf.Bytes(), "Content-Type", mw.FormDataContentType())
}

func tkStoreFiles(t *testing.T, e *tkEnv) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(e.App.FilesDir("acme"), "store"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func TestTicketsAttachments(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	id := e.ticket(e.Tok, e.subA, "Photo of the modem")
	base := fmt.Sprintf("/tickets/%d", id)
	e.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('tickets_attachment_max_bytes', '2000')`)

	// Refusals store nothing: no row, no file.
	for _, c := range []struct {
		name    string
		content []byte
		reason  string
	}{
		{"big.png", append(append([]byte{}, webtest.TinyPNG...), make([]byte, 3000)...), "file_too_large"},
		{"page.png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), "file_type_not_allowed"},
		{"tool.exe", []byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), "file_type_not_allowed"},
		{"image.pdf", webtest.TinyPNG, "file_extension_mismatch"},
		{"empty.txt", nil, "file_empty"},
	} {
		webtest.ExpectErr(t, tkUpload(t, e, base+"/attach", e.Tok, c.name, c.content), 400, "ERR_VALIDATION", c.reason)
		webtest.ExpectErr(t, tkUpload(t, e, fmt.Sprintf("/portal/tickets/%d/attach", id), e.portA, c.name, c.content), 400, "ERR_VALIDATION", c.reason)
	}
	// Another subscriber's ticket: 404, nothing stored either.
	webtest.ExpectErr(t, tkUpload(t, e, fmt.Sprintf("/portal/tickets/%d/attach", id), e.portB, "a.png", webtest.TinyPNG), 404, "ERR_NOT_FOUND", "not_found")
	if n := e.Scalar(`SELECT COUNT(*) FROM files`) + e.Scalar(`SELECT COUNT(*) FROM ticket_attachments`); n != 0 || tkStoreFiles(t, e) != 0 {
		t.Fatalf("refused uploads left %d rows, %d files", n, tkStoreFiles(t, e))
	}

	// Accepted: the subscriber's image, a staff internal text note file.
	r := tkUpload(t, e, fmt.Sprintf("/user/tickets/%d/attach", id), e.portA, "modem.png", webtest.TinyPNG)
	if r.Status != 201 || r.Data()["content_type"] != "image/png" || r.Data()["sha256"] == "" {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	pub := tkID(r)
	r = tkUpload(t, e, base+"/attach", e.Tok, "notes.txt", []byte("internal diagnostics\n"), "internal", "true")
	if r.Status != 201 || r.Data()["internal"] != true {
		t.Fatalf("internal upload: %d %s", r.Status, r.Body)
	}
	internal := tkID(r)
	if tkStoreFiles(t, e) != 2 {
		t.Fatalf("%d files stored", tkStoreFiles(t, e))
	}
	// Downloads: images inline, text as an attachment, nosniff always.
	r = e.Call("GET", fmt.Sprintf("/portal/tickets/%d/attachments/%d", id, pub), e.portA, nil)
	if r.Status != 200 || !bytes.Equal(r.Body, webtest.TinyPNG) || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "inline") ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("download: %d %v", r.Status, r.Header)
	}
	r = e.Call("GET", fmt.Sprintf("%s/attachments/%d/download", base, internal), e.Tok, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment") || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("staff download: %d %v", r.Status, r.Header)
	}
	// The subscriber never sees the internal file, nor B the public one.
	webtest.ExpectErr(t, e.Call("GET", fmt.Sprintf("/portal/tickets/%d/attachments/%d", id, internal), e.portA, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, e.Call("GET", fmt.Sprintf("/portal/tickets/%d/attachments/%d", id, pub), e.portB, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, e.Call("DELETE", fmt.Sprintf("/portal/tickets/%d/attachments/%d", id, pub), e.portB, nil), 404, "ERR_NOT_FOUND", "not_found")
	// A reply links the upload; the subscriber deletes its own file: row and bytes go.
	r = e.Call("POST", fmt.Sprintf("/portal/tickets/%d/messages", id), e.portA, map[string]any{"body": "see photo", "attachment_ids": []int64{pub}})
	if r.Status != 201 {
		t.Fatalf("reply with attachment: %d %s", r.Status, r.Body)
	}
	if r := e.Call("DELETE", fmt.Sprintf("/user/tickets/%d/attachments/%d", id, pub), e.portA, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if n := e.Scalar(`SELECT COUNT(*) FROM files`); n != 1 || tkStoreFiles(t, e) != 1 {
		t.Fatalf("after delete: %d rows, %d files", n, tkStoreFiles(t, e))
	}
}

func TestTicketsInternalNotesHidden(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	id := e.ticket(e.Tok, e.subA, "Billing question")
	base := fmt.Sprintf("/tickets/%d", id)
	if r := e.Call("POST", base+"/messages", e.Tok, map[string]any{"body": "SECRET: customer owes money", "internal": true}); r.Status != 201 {
		t.Fatalf("note: %d %s", r.Status, r.Body)
	}
	if r := e.Call("POST", base+"/messages", e.Tok, map[string]any{"body": "We are looking into it"}); r.Status != 201 {
		t.Fatalf("reply: %d %s", r.Status, r.Body)
	}
	staff := e.Call("GET", base, e.Tok, nil)
	if len(staff.Data()["messages"].([]any)) != 3 {
		t.Fatalf("staff sees %s", staff.Body)
	}
	for _, p := range []string{"/portal/tickets/%d", "/user/tickets/%d"} {
		r := e.Call("GET", fmt.Sprintf(p, id), e.portA, nil)
		if r.Status != 200 || len(r.Data()["messages"].([]any)) != 2 || bytes.Contains(r.Body, []byte("SECRET")) {
			t.Fatalf("portal sees %d %s", r.Status, r.Body)
		}
		if _, ok := r.Data()["tags"]; ok {
			t.Fatal("portal view carries tags")
		}
	}
	// Message search never reaches internal notes from the portal.
	if r := e.Call("GET", "/portal/tickets?q=SECRET", e.portA, nil); len(r.List()) != 0 {
		t.Fatalf("portal q found an internal note: %s", r.Body)
	}
	// Staff q searches message text, number and subject.
	for _, q := range []string{"SECRET", fmt.Sprintf("T-%06d", id), "billing"} {
		if got := tkListIDs(t, e.Call("GET", "/tickets?q="+q, e.Tok, nil)); !tkSame(got, []int64{id}) {
			t.Fatalf("q=%s: %v", q, got)
		}
	}
	// Notifications: one email for the public reply, none for the note.
	if n := e.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE recipient = 'anna@isp.example' AND template = 'ticket.replied'`); n != 1 {
		t.Fatalf("%d reply emails", n)
	}
	if n := e.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE body LIKE '%SECRET%'`); n != 0 {
		t.Fatal("an internal note was emailed")
	}
}

func TestTicketsCategoriesFieldsAndForm(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	r := e.Call("POST", "/tickets/categories", e.Tok, map[string]any{"name": "Outage"})
	if r.Status != 201 {
		t.Fatalf("category: %d %s", r.Status, r.Body)
	}
	cat := tkID(r)
	webtest.ExpectErr(t, e.Call("POST", "/tickets/categories", e.Tok, map[string]any{"name": "outage"}), 409, "ERR_CONFLICT", "name_taken")
	fields := fmt.Sprintf("/tickets/categories/%d/fields", cat)
	webtest.ExpectErr(t, e.Call("POST", fields, e.Tok, map[string]any{"name": "Bad Name", "type": "text"}), 400, "ERR_VALIDATION", "invalid_name")
	webtest.ExpectErr(t, e.Call("POST", fields, e.Tok, map[string]any{"name": "area", "type": "select"}), 400, "ERR_VALIDATION", "options_required")
	if r := e.Call("POST", fields, e.Tok, map[string]any{"name": "area", "type": "select", "options": []string{"north", "south"}, "required": true}); r.Status != 201 {
		t.Fatalf("field: %d %s", r.Status, r.Body)
	}
	if r := e.Call("POST", fields, e.Tok, map[string]any{"name": "circuit", "type": "text", "regex": "C-[0-9]+"}); r.Status != 201 {
		t.Fatalf("field: %d %s", r.Status, r.Body)
	}
	if r := e.Call("GET", "/tickets/form", e.Tok, nil); r.Status != 200 || len(r.Data()["categories"].([]any)) != 1 {
		t.Fatalf("form: %s", r.Body)
	}
	if r := e.Call("GET", "/portal/tickets/form", e.portA, nil); r.Status != 200 || len(r.Data()["categories"].([]any)) != 1 {
		t.Fatalf("portal form: %s", r.Body)
	}
	body := map[string]any{"subject": "Down", "body": "No link", "category_id": cat}
	r = e.Call("POST", "/portal/tickets", e.portA, body)
	webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "custom_field_required")
	if r.Field() != "custom_fields.area" {
		t.Fatalf("field %q", r.Field())
	}
	body["custom_fields"] = map[string]any{"area": "west"}
	webtest.ExpectErr(t, e.Call("POST", "/portal/tickets", e.portA, body), 400, "ERR_VALIDATION", "custom_field_invalid_option")
	body["custom_fields"] = map[string]any{"area": "north", "circuit": "X-1"}
	webtest.ExpectErr(t, e.Call("POST", "/portal/tickets", e.portA, body), 400, "ERR_VALIDATION", "custom_field_pattern_mismatch")
	body["custom_fields"] = map[string]any{"area": "north", "circuit": "C-12"}
	r = e.Call("POST", "/portal/tickets", e.portA, body)
	if r.Status != 201 || r.Data()["custom_fields"].(map[string]any)["circuit"] != "C-12" {
		t.Fatalf("portal create: %d %s", r.Status, r.Body)
	}
	if n := e.Scalar(`SELECT COUNT(*) FROM tickets`); n != 1 {
		t.Fatalf("%d tickets", n)
	}
}

func TestTicketsCannedMacrosAssignment(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	e.Exec(`UPDATE managers SET email = 'resa@isp.example', firstname = 'Rita', lastname = 'Agent' WHERE id = ?`, e.resA)
	webtest.ExpectErr(t, e.Call("POST", "/tickets/canned-replies", e.Tok, map[string]any{"title": "Hi", "body": "Dear {customer}"}), 400, "ERR_VALIDATION", "unknown_variable")
	r := e.Call("POST", "/tickets/canned-replies", e.Tok, map[string]any{"title": "Hi", "body": "Dear {requester}, about {ticket_number}. {agent}"})
	if r.Status != 201 {
		t.Fatalf("canned: %d %s", r.Status, r.Body)
	}
	canned := tkID(r)
	r = e.Call("POST", "/tickets/macros", e.Tok, map[string]any{"name": "Solve", "body": "Fixed, {requester}.",
		"actions": map[string]any{"state": "resolve", "priority": "high", "add_tags": []string{"Fixed"}}})
	if r.Status != 201 {
		t.Fatalf("macro: %d %s", r.Status, r.Body)
	}
	macro := tkID(r)
	webtest.ExpectErr(t, e.Call("POST", "/tickets/macros", e.Tok, map[string]any{"name": "Nothing"}), 400, "ERR_VALIDATION", "macro_empty")

	// Least-open assignment: new tickets go to the agent with fewest open ones.
	e.Exec(`INSERT OR REPLACE INTO settings(key, value) VALUES ('tickets_assignment_strategy', '"least_open"')`)
	if r := e.Call("GET", "/tickets/assignment-strategies", e.Tok, nil); r.Data()["current"] != "least_open" || len(r.Data()["strategies"].([]any)) != 4 {
		t.Fatalf("strategies: %s", r.Body)
	}
	if r := e.Call("GET", "/tickets/assignees", e.Tok, nil); len(r.List()) != 3 {
		t.Fatalf("assignees: %s", r.Body)
	}
	first := e.ticket(e.Tok, e.subA, "one")
	second := e.ticket(e.Tok, e.subA, "two")
	a1 := e.Scalar(`SELECT COALESCE(assignee_id, 0) FROM tickets WHERE id = ?`, first)
	a2 := e.Scalar(`SELECT COALESCE(assignee_id, 0) FROM tickets WHERE id = ?`, second)
	if a1 == 0 || a2 == 0 || a1 == a2 {
		t.Fatalf("least_open assigned %d then %d", a1, a2)
	}
	// Reassign to A: A is emailed.
	if r := e.Call("POST", "/tickets/bulk-assign", e.Tok, map[string]any{"ids": []int64{first}, "assignee_id": e.resA}); len(r.Data()["updated"].([]any)) != 1 {
		t.Fatalf("bulk-assign: %s", r.Body)
	}
	if a1 != e.resA {
		if n := e.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE recipient = 'resa@isp.example' AND template = 'ticket.assigned'`); n == 0 {
			t.Fatal("assignee not notified")
		}
	}

	// A canned reply renders its variables as the agent.
	r = e.Call("POST", fmt.Sprintf("/tickets/%d/messages", first), e.tokA, map[string]any{"canned_reply_id": canned})
	msgs := r.Data()["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any)["body"]; last != fmt.Sprintf("Dear anna, about T-%06d. Rita Agent", first) {
		t.Fatalf("canned body %q", last)
	}
	// A macro replies and acts in one step.
	r = e.Call("POST", fmt.Sprintf("/tickets/%d/macros/%d/apply", first, macro), e.tokA, nil)
	if r.Status != 200 || r.Data()["state"] != "resolved" || r.Data()["priority"] != "high" || r.Data()["tags"].([]any)[0] != "fixed" {
		t.Fatalf("macro: %d %s", r.Status, r.Body)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets?filter[state]=resolved&filter[tag]=fixed", e.Tok, nil)); !tkSame(got, []int64{first}) {
		t.Fatalf("filters: %v", got)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets?filter[priority]=low,normal&sort=priority", e.Tok, nil)); !tkSame(got, []int64{second}) {
		t.Fatalf("priority filter: %v", got)
	}
	webtest.ExpectErr(t, e.Call("GET", "/tickets?filter[state]=nope", e.Tok, nil), 400, "ERR_VALIDATION", "invalid_filter")
}

func TestTicketsSLAAndBlocklist(t *testing.T) {
	t.Parallel()
	e := newTk(t)
	// Around-the-clock policy for urgent tickets: 30 min first response.
	r := e.Call("POST", "/tickets/sla/calendars", e.Tok, map[string]any{"name": "Office", "timezone": "UTC",
		"hours": map[string]any{"mon": []map[string]string{{"start": "09:00", "end": "17:00"}}}, "holidays": []string{"2026-12-25"}})
	if r.Status != 201 {
		t.Fatalf("calendar: %d %s", r.Status, r.Body)
	}
	if r := e.Call("GET", "/tickets/sla/calendars", e.Tok, nil); len(r.List()) != 1 {
		t.Fatalf("calendars: %s", r.Body)
	}
	if r := e.Call("POST", "/tickets/sla/policies", e.Tok, map[string]any{"name": "Urgent", "priority": "urgent", "first_response_minutes": 30, "resolution_minutes": 240}); r.Status != 201 {
		t.Fatalf("policy: %d %s", r.Status, r.Body)
	}
	id := e.ticket(e.Tok, e.subA, "Fire", "priority", "urgent")
	due := e.str(`SELECT first_response_due FROM tickets WHERE id = ?`, id)
	if due == "" {
		t.Fatal("no due time")
	}
	if r := e.Call("GET", "/tickets/sla/breaches", e.Tok, nil); len(r.List()) != 0 {
		t.Fatalf("breached too soon: %s", r.Body)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets/sla/breaches?within=60", e.Tok, nil)); !tkSame(got, []int64{id}) {
		t.Fatalf("within 60: %v", got)
	}
	e.Exec(`UPDATE tickets SET first_response_due = '2001-01-01 00:00:00' WHERE id = ?`, id)
	if got := tkListIDs(t, e.Call("GET", "/tickets?filter[breached]=true", e.Tok, nil)); !tkSame(got, []int64{id}) {
		t.Fatalf("breached filter: %v", got)
	}
	if r := e.Call("GET", "/tickets/counts", e.Tok, nil); r.Data()["breached"].(float64) != 1 || r.Data()["states"].(map[string]any)["new"].(float64) != 1 {
		t.Fatalf("counts: %s", r.Body)
	}

	// Blocklist: refused or spam.
	webtest.ExpectErr(t, e.Call("POST", "/tickets/blocklist", e.Tok, map[string]any{"kind": "domain", "value": "nodot"}), 400, "ERR_VALIDATION", "invalid_domain")
	if r := e.Call("POST", "/tickets/blocklist", e.Tok, map[string]any{"kind": "subscriber", "value": fmt.Sprint(e.subB)}); r.Status != 201 {
		t.Fatalf("block: %d %s", r.Status, r.Body)
	}
	r = e.Call("POST", "/tickets/blocklist", e.Tok, map[string]any{"kind": "domain", "value": "spam.example", "action": "spam"})
	if r.Status != 201 {
		t.Fatalf("block: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, e.Call("POST", "/tickets/blocklist", e.Tok, map[string]any{"kind": "domain", "value": "spam.example"}), 409, "ERR_CONFLICT", "already_blocked")
	webtest.ExpectErr(t, e.Call("POST", "/portal/tickets", e.portB, map[string]any{"subject": "x", "body": "y"}), 403, "ERR_FORBIDDEN", "requester_blocked")
	r = e.Call("POST", "/tickets", e.Tok, map[string]any{"subject": "Buy now", "body": "cheap", "requester_email": "x@spam.example"})
	if r.Status != 201 || r.Data()["spam"] != true || r.Data()["assignee_id"] != nil {
		t.Fatalf("spam: %d %s", r.Status, r.Body)
	}
	if got := tkListIDs(t, e.Call("GET", "/tickets/blocklist", e.Tok, nil)); len(got) != 2 {
		t.Fatalf("blocklist: %v", got)
	}
	if r := e.Call("POST", "/tickets/blocklist/bulk-delete", e.Tok, map[string]any{"ids": []int64{1, 2, 77}}); len(r.Data()["updated"].([]any)) != 2 {
		t.Fatalf("bulk-delete: %s", r.Body)
	}
}
