package tools

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"xr/app"
	"xr/app/outbox"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// mailServer is a real SMTP server on loopback that counts what it accepts
// per recipient.
type mailServer struct {
	addr string
	mu   sync.Mutex
	to   map[string]int
}

func newMailServer(t *testing.T) *mailServer {
	t.Helper()
	ms := &mailServer{to: map[string]int{}}
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &mailSession{ms: ms}, nil }))
	s.Domain = "localhost"
	s.AllowInsecureAuth = true
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms.addr = ln.Addr().String()
	go s.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { s.Close() })
	return ms
}

func (ms *mailServer) counts() map[string]int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	out := map[string]int{}
	for k, v := range ms.to {
		out[k] = v
	}
	return out
}

type mailSession struct{ ms *mailServer }

func (s *mailSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *mailSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *mailSession) Reset()                               {}
func (s *mailSession) Logout() error                        { return nil }
func (s *mailSession) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	if _, err := io.ReadAll(m.Body); err != nil {
		return err
	}
	s.ms.mu.Lock()
	s.ms.to[m.Header.Get("To")]++
	s.ms.mu.Unlock()
	return nil
}

// smsGateway is an HTTP stand-in for an SMS gateway counting calls per
// destination.
func smsGateway(t *testing.T) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Query().Get("to")]++
		mu.Unlock()
		w.WriteHeader(200)
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range got {
			out[k] = v
		}
		return out
	}
}

type env struct {
	t    *testing.T
	ctx  context.Context
	a    *app.App
	ten  *app.Tenant
	root *app.Actor
	now  time.Time
}

func newEnv(t *testing.T, cfg app.Config) *env {
	t.Helper()
	a := xrtest.Seeded(t, cfg, "acme", subs.Module, outbox.Module, Module)
	t.Cleanup(a.Close)
	ten := xrtest.Acquire(t, a, "acme")
	e := &env{t: t, ctx: context.Background(), a: a, ten: ten, now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}
	a.SetClock(func() time.Time { return e.now })
	outbox.SetClock(a, func() time.Time { return e.now })
	e.root = xrtest.System(t, ten)
	return e
}

func (e *env) manager(parent int64, name string) int64 {
	e.t.Helper()
	id := xrtest.Exec(e.t, e.ten, `INSERT INTO managers(parent_id, username, password_hash, created_at, updated_at) VALUES (?,?,?,?,?)`,
		parent, name, "x", app.StampNow(), app.StampNow())
	xrtest.Exec(e.t, e.ten, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0`, id, parent, id, id)
	return id
}

func (e *env) user(name string, parent int64, mod func(*subs.NewUser)) int64 {
	e.t.Helper()
	nu := subs.NewUser{Username: name, Password: "pw-" + name, ParentID: parent}
	if mod != nil {
		mod(&nu)
	}
	var id int64
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		c, err := subs.CreateUser(e.ctx, tx, e.ten, nu)
		if c != nil {
			id = c.ID
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// limited is a tenant-wide staff actor holding only perms.
func limited(ten *app.Tenant, id int64, perms ...app.Perm) *app.Actor {
	m := map[app.Perm]bool{}
	for _, p := range perms {
		m[p] = true
	}
	return &app.Actor{Tenant: ten, ManagerID: id, Kind: app.CredSession, Perms: m, TenantWide: true, Roles: []string{"staff"}}
}

var errCrash = errors.New("simulated crash")

// TestAnnouncementFanOutCrashNoDuplicates: an announcement on email, SMS and
// the portal reaches a real SMTP server and an HTTP gateway stand-in once
// per recipient, although the fan-out crashed in the middle (the chunk in
// flight rolled back) and was run again from the start.
func TestAnnouncementFanOutCrashNoDuplicates(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t)
	gw, hits := smsGateway(t)
	e := newEnv(t, app.Config{SMTPAddr: ms.addr, AllowPrivateEgress: true})
	if _, err := outbox.SetSMSGateway(e.ctx, e.root, outbox.SMSGatewayInput{URL: gw.URL + "/send?to={to}&text={text}", Method: "GET"}); err != nil {
		t.Fatal(err)
	}
	var users []int64
	for i, n := range []string{"ann1", "ann2", "ann3", "ann4", "ann5"} {
		users = append(users, e.user(n, e.root.ManagerID, func(u *subs.NewUser) {
			u.Email = n + "@example.test"
			u.Phone = "+96477000000" + string(rune('1'+i))
		}))
	}
	nomail := e.user("nomail", e.root.ManagerID, nil)
	e.user("off", e.root.ManagerID, func(u *subs.NewUser) { f := false; u.Enabled = &f })

	exp := app.DateOrTime{Time: app.T(e.now.Add(48 * time.Hour))}
	a, err := CreateAnnouncement(e.ctx, e.root, AnnouncementInput{Title: "Maintenance for {username}", Body: "Dear {username}, plan {plan} until {expiration}.",
		Channels: []string{"email", "sms", "inbox"}, Target: subs.Selection{Filter: map[string]string{"enabled": "true"}}, ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if a.Recipients != 6 || a.State != "queued" || a.JobID == nil {
		t.Fatalf("created %+v", a)
	}

	// Crash while the second chunk is in flight: the first chunk stays.
	calls := 0
	setHooks(e.a, 2, func(ctx context.Context, tx *sql.Tx, kind string, id int64) error {
		calls++
		if calls == 2 {
			return errCrash
		}
		return nil
	})
	if _, err := fanOut(e.ctx, e.ten, a.ID, nil); !errors.Is(err, errCrash) {
		t.Fatalf("fan-out: %v", err)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE cause = ?`, cause(a.ID)); n != 6 {
		t.Fatalf("after the crash %d messages, want the first chunk's 6", n)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT processed FROM announcements WHERE id = ?`, a.ID); n != 2 {
		t.Fatalf("processed %d after the crash", n)
	}
	// Restart: the job runs from the cursor; then a replay from scratch adds nothing.
	setHooks(e.a, 2, nil)
	if _, err := e.a.Jobs.RunDue(e.ctx, "acme", e.now); err != nil {
		t.Fatal(err)
	}
	got, err := GetAnnouncement(e.ctx, e.root, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The outbox's drain job is due on the App's clock too, so the run may
	// already have sent some: what counts is 16 messages, none dead.
	if got.State != "done" || got.Processed != 6 || got.Skipped != 2 || got.Delivery["queued"]+got.Delivery["sending"]+got.Delivery["sent"] != 16 ||
		got.Delivery["dead"]+got.Delivery["failed"] != 0 {
		t.Fatalf("progress %+v", got)
	}
	xrtest.Exec(t, e.ten, `UPDATE announcements SET cursor = 0 WHERE id = ?`, a.ID)
	if _, err := fanOut(e.ctx, e.ten, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	// 5 emails + 5 sms + 6 inbox; nomail has neither address.
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE cause = ?`, cause(a.ID)); n != 16 {
		t.Fatalf("%d messages, want 16", n)
	}
	for i := 0; i < 20; i++ {
		if _, _, err := outbox.Drain(e.ctx, e.ten); err != nil {
			t.Fatal(err)
		}
		if xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM outbox_messages WHERE cause = ? AND state <> 'sent'`, cause(a.ID)) == 0 {
			break
		}
		e.now = e.now.Add(time.Minute)
	}
	mc, sc := ms.counts(), hits()
	if len(mc) != 5 || len(sc) != 5 {
		t.Fatalf("mail %v sms %v", mc, sc)
	}
	for k, v := range mc {
		if v != 1 {
			t.Fatalf("mail to %s %d times", k, v)
		}
	}
	for k, v := range sc {
		if v != 1 {
			t.Fatalf("sms to %s %d times", k, v)
		}
	}
	got, err = GetAnnouncement(e.ctx, e.root, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Delivery["sent"] != 16 {
		t.Fatalf("progress %+v", got)
	}
	// The portal shows it to nomail until read or expired.
	pa, err := ActiveAnnouncements(e.ctx, e.ten, nomail)
	if err != nil || len(pa) != 1 || pa[0].Title != "Maintenance for nomail" {
		t.Fatalf("portal %+v %v", pa, err)
	}
	if err := outbox.MarkRead(e.ctx, e.ten, nomail, pa[0].MessageID); err != nil {
		t.Fatal(err)
	}
	if pa, _ := ActiveAnnouncements(e.ctx, e.ten, nomail); len(pa) != 0 {
		t.Fatalf("read announcement still shown: %+v", pa)
	}
	if pa, _ := ActiveAnnouncements(e.ctx, e.ten, users[0]); len(pa) != 1 {
		t.Fatalf("unread announcement not shown: %+v", pa)
	}
	e.now = e.now.Add(72 * time.Hour)
	if pa, _ := ActiveAnnouncements(e.ctx, e.ten, users[0]); len(pa) != 0 {
		t.Fatalf("expired announcement still shown: %+v", pa)
	}
}

// TestAnnouncementValidationAndScope: an unknown variable is a 400 naming
// it, nothing stored; preview-count counts the caller's subtree only.
func TestAnnouncementValidationAndScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, app.Config{})
	res := e.manager(e.root.ManagerID, "res")
	e.user("r1", res, func(u *subs.NewUser) { u.Email = "r1@example.test" })
	e.user("r2", res, func(u *subs.NewUser) { u.Phone = "+9647700000009" })
	e.user("o1", e.root.ManagerID, func(u *subs.NewUser) { u.Email = "o1@example.test" })

	_, err := CreateAnnouncement(e.ctx, e.root, AnnouncementInput{Title: "Hi", Body: "Hello {username}, your {speed}", Channels: []string{"inbox"}})
	ae := xrtest.WantError(t, err, 400, app.CodeValidation, "unknown_variable")
	if ae.Field != "body" || ae.Details["variable"] != "speed" {
		t.Fatalf("error %+v", ae)
	}
	_, err = CreateAnnouncement(e.ctx, e.root, AnnouncementInput{Title: "Hi", Body: "x", Channels: []string{"fax"}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_enum")
	_, err = CreateAnnouncement(e.ctx, e.root, AnnouncementInput{Title: "Hi", Body: "x", Channels: []string{"inbox"}, Target: subs.Selection{Filter: map[string]string{"colour": "red"}}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_filter")
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM announcements`); n != 0 {
		t.Fatalf("%d announcements stored", n)
	}
	// 403 before validation.
	_, err = CreateAnnouncement(e.ctx, limited(e.ten, e.root.ManagerID, PermToolsBulkChanges), AnnouncementInput{Body: "{nope}"})
	xrtest.WantError(t, err, 403, app.CodeForbidden, "insufficient_permissions")

	r, err := PreviewAnnouncementCount(e.ctx, xrtest.Reseller(e.ten, res), PreviewCountInput{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Subscribers != 2 || r.Reachable["email"] != 1 || r.Reachable["sms"] != 1 || r.Reachable["inbox"] != 2 {
		t.Fatalf("reseller reach %+v", r)
	}
	r, err = PreviewAnnouncementCount(e.ctx, e.root, PreviewCountInput{Channels: []string{"email"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Subscribers != 3 || r.Reachable["email"] != 2 || len(r.Reachable) != 1 {
		t.Fatalf("owner reach %+v", r)
	}
	// The reseller's announcement fixes its own subtree only; the owner's is not visible to it.
	ra, err := CreateAnnouncement(e.ctx, xrtest.Reseller(e.ten, res), AnnouncementInput{Title: "T", Body: "B", Channels: []string{"inbox"}})
	if err != nil || ra.Recipients != 2 {
		t.Fatalf("reseller announcement %+v %v", ra, err)
	}
	oa, err := CreateAnnouncement(e.ctx, e.root, AnnouncementInput{Title: "T", Body: "B", Channels: []string{"inbox"}})
	if err != nil || oa.Recipients != 3 {
		t.Fatalf("owner announcement %+v %v", oa, err)
	}
	other := e.manager(e.root.ManagerID, "res2")
	_, err = GetAnnouncement(e.ctx, xrtest.Reseller(e.ten, other), ra.ID)
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
}

func rowState(t *testing.T, e *env, id int64) *subs.RowState {
	t.Helper()
	s, err := subs.ReadRowState(e.ctx, e.ten.DB.R, id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBulkPreviewApplyParity: the preview's after rows are what apply
// stores, failures carry the same reason, and the log keeps before/after.
func TestBulkPreviewApplyParity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, app.Config{})
	g, err := subs.CreateGroup(e.ctx, e.root, subs.GroupInput{Name: app.Opt[string]{Set: true, V: "night"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, n := range []string{"b1", "b2", "b3"} {
		ids = append(ids, e.user(n, e.root.ManagerID, func(u *subs.NewUser) {
			u.Expiration = app.T(e.now.Add(time.Duration(i+1) * 24 * time.Hour))
		}))
	}
	xrtest.Exec(t, e.ten, `UPDATE users SET bytes_limit = 1000 WHERE id IN (?, ?)`, ids[0], ids[1])
	in := BulkInput{Selection: subs.Selection{IDs: ids}, Operations: []subs.Change{
		{Op: subs.OpAddDays, Days: 10}, {Op: subs.OpSetGroup, GroupID: &g.ID}, {Op: subs.OpDisable}, {Op: subs.OpAddTraffic, Bytes: 500}}}
	p, err := PreviewBulk(e.ctx, e.root, in)
	if err != nil {
		t.Fatal(err)
	}
	if p.Matched != 3 || len(p.Sample) != 3 || len(p.Refused) != 0 {
		t.Fatalf("preview %+v", p)
	}
	if !p.Sample[0].OK || p.Sample[2].OK || p.Sample[2].Reason != "quota_unlimited" {
		t.Fatalf("sample %+v", p.Sample)
	}
	// Nothing changed.
	if s := rowState(t, e, ids[0]); !s.Enabled || s.GroupID != nil {
		t.Fatalf("preview changed %+v", s)
	}
	b, err := ApplyBulk(e.ctx, e.root, in)
	if err != nil {
		t.Fatal(err)
	}
	if b.Total != 3 || b.State != "queued" {
		t.Fatalf("apply %+v", b)
	}
	if _, err := e.a.Jobs.RunDue(e.ctx, "acme", e.now); err != nil {
		t.Fatal(err)
	}
	got, err := GetBulkJob(e.ctx, e.root, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "done" || got.OK != 2 || got.Failed != 1 || len(got.Rows) != 3 {
		t.Fatalf("job %+v", got)
	}
	for i, s := range p.Sample {
		stored := rowState(t, e, s.ID)
		if s.OK {
			if *s.After.GroupID != *stored.GroupID || s.After.Expiration != stored.Expiration || s.After.Enabled != stored.Enabled ||
				s.After.BytesLimit != stored.BytesLimit || stored.BytesLimit != 1500 || stored.Enabled {
				t.Fatalf("row %d: preview %+v, stored %+v", s.ID, s.After, stored)
			}
		} else if stored.Enabled != s.Before.Enabled || stored.Expiration != s.Before.Expiration || stored.GroupID != nil {
			t.Fatalf("failed row %d changed: %+v", s.ID, stored)
		}
		r := got.Rows[i]
		if r.UserID != s.ID || (r.Status == "ok") != s.OK || r.Reason != s.Reason {
			t.Fatalf("log %+v vs preview %+v", r, s)
		}
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM events WHERE type IN ('user.updated','user.disabled')`); n == 0 {
		t.Fatal("no events emitted")
	}
}

// TestBulkPermissionsAndResume: preview lists the operations the caller
// may not do and apply refuses them with 403; a crash in the middle of the
// job rolls back the chunk in flight, and the rerun applies each row once.
func TestBulkPermissionsAndResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, app.Config{})
	var ids []int64
	for _, n := range []string{"c1", "c2", "c3", "c4", "c5"} {
		ids = append(ids, e.user(n, e.root.ManagerID, func(u *subs.NewUser) { u.Expiration = app.T(e.now.Add(24 * time.Hour)) }))
	}
	staff := limited(e.ten, e.root.ManagerID, PermToolsBulkChanges, subs.PermUsersExtend)
	in := BulkInput{Selection: subs.Selection{Filter: map[string]string{"enabled": "true"}},
		Operations: []subs.Change{{Op: subs.OpAddDays, Days: 1}, {Op: subs.OpDisable}}}
	p, err := PreviewBulk(e.ctx, staff, in)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Refused) != 1 || p.Refused[0].Op != "disable" || p.Refused[0].Permission != subs.PermUsersEnableDisable || p.Matched != 5 ||
		p.Sample[0].Reason != "operation_not_permitted" {
		t.Fatalf("preview %+v", p)
	}
	_, err = ApplyBulk(e.ctx, staff, in)
	ae := xrtest.WantError(t, err, 403, app.CodeForbidden, "operation_not_permitted")
	if ae.Details["op"] != "disable" {
		t.Fatalf("details %+v", ae.Details)
	}
	// 403 before validation: no bulk permission at all, an invalid body.
	_, err = PreviewBulk(e.ctx, limited(e.ten, e.root.ManagerID, subs.PermUsersExtend), BulkInput{})
	xrtest.WantError(t, err, 403, app.CodeForbidden, "insufficient_permissions")
	_, err = ApplyBulk(e.ctx, staff, BulkInput{Operations: []subs.Change{{Op: subs.OpAddDays, Days: 1}}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "selection_required")
	_, err = ApplyBulk(e.ctx, staff, BulkInput{Selection: subs.Selection{IDs: ids}, Operations: []subs.Change{{Op: "explode"}}})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_enum")

	in.Operations = in.Operations[:1]
	b, err := ApplyBulk(e.ctx, staff, in)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	setHooks(e.a, 2, func(ctx context.Context, tx *sql.Tx, kind string, id int64) error {
		calls++
		if calls == 2 {
			return errCrash
		}
		return nil
	})
	if _, err := applyChunks(e.ctx, e.ten, b.ID, nil); !errors.Is(err, errCrash) {
		t.Fatalf("apply: %v", err)
	}
	if n := xrtest.Scalar(t, e.ten, `SELECT COUNT(*) FROM bulk_change_rows WHERE bulk_id = ? AND status = 'pending'`, b.ID); n != 3 {
		t.Fatalf("%d pending after the crash, want 3", n)
	}
	if s := rowState(t, e, ids[2]); s.Expiration.Time != e.now.Add(24*time.Hour) {
		t.Fatalf("rolled-back row changed: %v", s.Expiration)
	}
	setHooks(e.a, 2, nil)
	out, err := applyChunks(e.ctx, e.ten, b.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.OK != 5 || out.Failed != 0 {
		t.Fatalf("outcome %+v", out)
	}
	for _, id := range ids {
		if s := rowState(t, e, id); !s.Expiration.Time.Equal(e.now.Add(48 * time.Hour)) {
			t.Fatalf("user %d expiration %v, want once +1 day", id, s.Expiration)
		}
	}
	got, err := GetBulkJob(e.ctx, staff, b.ID)
	if err != nil || got.State != "done" || got.Done != 5 {
		t.Fatalf("job %+v %v", got, err)
	}
	page, err := ListBulkJobs(e.ctx, staff, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "id", Desc: true})
	if err != nil || len(page.Rows) != 1 {
		t.Fatalf("list %+v %v", page, err)
	}
}

// TestBulkFinishFailureFailsTheRun: when the bulk change cannot be marked
// done, the run answers the error (its job retries) instead of reporting
// an outcome while the change stays running.
func TestBulkFinishFailureFailsTheRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, app.Config{})
	id := e.user("f1", e.root.ManagerID, func(u *subs.NewUser) { u.Expiration = app.T(e.now.Add(24 * time.Hour)) })
	b, err := ApplyBulk(e.ctx, e.root, BulkInput{Selection: subs.Selection{IDs: []int64{id}}, Operations: []subs.Change{{Op: subs.OpAddDays, Days: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	xrtest.Exec(t, e.ten, `CREATE TRIGGER refuse_bulk_done BEFORE UPDATE OF state ON bulk_changes WHEN NEW.state = 'done'
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
	out, err := applyChunks(e.ctx, e.ten, b.ID, nil)
	if err == nil {
		t.Fatalf("a run whose change could not be marked done answered %+v", out)
	}
	xrtest.Exec(t, e.ten, `DROP TRIGGER refuse_bulk_done`)
	if out, err = applyChunks(e.ctx, e.ten, b.ID, nil); err != nil || out.OK != 1 {
		t.Fatalf("the retry: %+v %v", out, err)
	}
	if got, err := GetBulkJob(e.ctx, e.root, b.ID); err != nil || got.State != "done" {
		t.Fatalf("job %+v %v", got, err)
	}
}
