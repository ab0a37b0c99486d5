package outbox

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"xr/app"
	"xr/internal/xrtest"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var t0 = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

type fixture struct {
	a     *app.App
	ten   *app.Tenant
	clock *fakeClock
	log   *syncBuf
	cfg   app.Config

	closeNow func()
}

// open opens an instance on cfg (a temp dir when DataDir is empty) with
// tenant acme created unless it exists; the caller's cleanup closes it.
func open(t *testing.T, cfg app.Config) *fixture {
	t.Helper()
	f := &fixture{clock: &fakeClock{t: t0}, log: &syncBuf{}}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Logger = slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f.cfg = cfg
	f.a = xrtest.Seeded(t, cfg, "acme", Module)
	ten, release, err := f.a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	f.ten = ten
	SetClock(f.a, f.clock.now)
	closed := false
	t.Cleanup(func() {
		if !closed {
			release()
			f.a.Close()
		}
	})
	f.closeNow = func() { closed = true; release(); f.a.Close() }
	return f
}

func (f *fixture) enqueue(t *testing.T, m Message) (int64, error) {
	t.Helper()
	var id int64
	err := f.ten.Write(context.Background(), func(tx *sql.Tx) error {
		var err error
		id, err = Enqueue(context.Background(), tx, f.ten, m)
		return err
	})
	return id, err
}

func (f *fixture) mustEnqueue(t *testing.T, m Message) int64 {
	t.Helper()
	id, err := f.enqueue(t, m)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *fixture) drain(t *testing.T) (int, time.Time) {
	t.Helper()
	n, next, err := Drain(context.Background(), f.ten)
	if err != nil {
		t.Fatal(err)
	}
	return n, next
}

func (f *fixture) state(t *testing.T, id int64) (st string, attempts int64, reason string) {
	t.Helper()
	err := f.ten.DB.R.QueryRow(`SELECT state, attempts, last_error FROM outbox_messages WHERE id = ?`, id).Scan(&st, &attempts, &reason)
	if err != nil {
		t.Fatal(err)
	}
	return
}

func (f *fixture) count(t *testing.T, where string, args ...any) int64 {
	t.Helper()
	return xrtest.Scalar(t, f.ten, `SELECT COUNT(*) FROM outbox_messages WHERE `+where, args...)
}

func email(i int) Message {
	return Message{Channel: ChannelEmail, To: fmt.Sprintf("sub%d@example.net", i), Subject: "Hello {username}", Body: "Your plan {plan} expires {expiration}.",
		Vars: map[string]string{"username": fmt.Sprintf("sub%d", i), "plan": "Home 50M", "expiration": "2026-04-01"}, Cause: "announcement:1"}
}

// TestEnqueueValidatesTemplatesAndVariables: an unknown variable is a 400
// unknown_variable naming it, with nothing stored; a registered template
// renders; the same cause and recipient is stored once.
func TestEnqueueValidatesTemplatesAndVariables(t *testing.T) {
	t.Parallel()
	f := open(t, app.Config{})
	Register(f.a, Template{Key: "ticket.replied", Subject: "Ticket {number} replied", Body: "Hi {name}, {agent} answered.", Vars: []string{"number", "name", "agent"}})

	if ts := Templates(f.a); len(ts) != 1 || ts[0].Key != "ticket.replied" {
		t.Fatalf("templates %+v", ts)
	}
	_, err := f.enqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Body: "Hi {usename}", Vars: map[string]string{"username": "x"}})
	e := xrtest.WantError(t, err, 400, app.CodeValidation, "unknown_variable")
	if e.Field != "body" || e.Details["variable"] != "usename" {
		t.Fatalf("field %q details %v", e.Field, e.Details)
	}
	_, err = f.enqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Template: "ticket.replied", Vars: map[string]string{"number": "T-1", "balance": "9"}})
	e = xrtest.WantError(t, err, 400, app.CodeValidation, "unknown_variable")
	if e.Field != "vars" || e.Details["variable"] != "balance" {
		t.Fatalf("field %q details %v", e.Field, e.Details)
	}
	xrtest.WantError(t, ValidateText("Dear {username}, {credit} left", "body", []string{"username", "balance"}), 400, app.CodeValidation, "unknown_variable")
	_, err = f.enqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Template: "ticket.replied", Vars: map[string]string{"number": "T-1", "name": "x"}})
	e = xrtest.WantError(t, err, 400, app.CodeValidation, "missing_variable")
	if e.Details["variable"] != "agent" {
		t.Fatalf("missing %v", e.Details)
	}
	_, err = f.enqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Template: "nope"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "unknown_template")
	_, err = f.enqueue(t, Message{Channel: ChannelSMS, To: "07701234567", Body: "x"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_phone")
	_, err = f.enqueue(t, Message{Channel: ChannelEmail, To: "not an address", Body: "x"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_email")
	_, err = f.enqueue(t, Message{Channel: ChannelInbox, Body: "x"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "user_required")
	_, err = f.enqueue(t, Message{Channel: "fax", To: "x", Body: "x"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_channel")
	if n := f.count(t, "1=1"); n != 0 {
		t.Fatalf("%d messages stored by refused calls", n)
	}

	id := f.mustEnqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Template: "ticket.replied",
		Vars: map[string]string{"number": "T-000042", "name": "Ali", "agent": "Sara"}, Cause: "ticket:42"})
	again := f.mustEnqueue(t, Message{Channel: ChannelEmail, To: "a@example.net", Template: "ticket.replied",
		Vars: map[string]string{"number": "T-000042", "name": "Ali", "agent": "Sara"}, Cause: "ticket:42"})
	if again != id {
		t.Fatalf("re-enqueue answered %d, want %d", again, id)
	}
	var subject, body, st string
	if err := f.ten.DB.R.QueryRow(`SELECT subject, body, state FROM outbox_messages WHERE id = ?`, id).Scan(&subject, &body, &st); err != nil {
		t.Fatal(err)
	}
	if subject != "Ticket T-000042 replied" || body != "Hi Ali, Sara answered." || st != "queued" {
		t.Fatalf("stored %q %q %s", subject, body, st)
	}
	// Inbox fan-out: one cause, one message per subscriber.
	f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 7, Subject: "s", Body: "b", Cause: "announcement:9"})
	f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 8, Subject: "s", Body: "b", Cause: "announcement:9"})
	f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 8, Subject: "s", Body: "b", Cause: "announcement:9"})
	if n := f.count(t, "cause = 'announcement:9' AND state = 'sent'"); n != 2 {
		t.Fatalf("%d inbox messages, want 2", n)
	}
	// A rolled-back cause leaves no message.
	boom := fmt.Errorf("boom")
	err = f.ten.Write(context.Background(), func(tx *sql.Tx) error {
		if _, err := Enqueue(context.Background(), tx, f.ten, email(99)); err != nil {
			return err
		}
		return boom
	})
	if err != boom || f.count(t, "recipient = 'sub99@example.net'") != 0 {
		t.Fatalf("rolled back: %v, %d stored", err, f.count(t, "recipient = 'sub99@example.net'"))
	}
}

// TestEmailThroughSMTPWithAuth: mail goes through a real SMTP server that
// requires AUTH (no STARTTLS offered), from the tenant's sender settings,
// with a stable Message-ID.
func TestEmailThroughSMTPWithAuth(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "relay", "s3cret")
	f := open(t, app.Config{SMTPAddr: ms.addr, SMTPUser: "relay", SMTPPassword: "s3cret", SMTPAuth: "plain", SMTPFrom: "noreply@relay.test"})
	act := xrtest.System(t, f.ten)
	if _, err := UpdateSettings(context.Background(), act, SettingsInput{FromName: "Acme ISP", FromAddress: "billing@acme.test", MessagesPerMinute: 60}); err != nil {
		t.Fatal(err)
	}
	_, err := UpdateSettings(context.Background(), act, SettingsInput{FromAddress: "nope", MessagesPerMinute: 60})
	xrtest.WantError(t, err, 400, app.CodeValidation, "invalid_email")
	var ids []int64
	for i := range 3 {
		ids = append(ids, f.mustEnqueue(t, email(i)))
	}
	if n, next := f.drain(t); n != 3 || !next.IsZero() {
		r, _ := List(context.Background(), act, app.ListQuery{Page: 1, PageSize: 10, SortExpr: "id"})
		t.Fatalf("drain: %d attempted, next %v: %+v", n, next, r.Rows)
	}
	if ms.count() != 3 || ms.authed == 0 {
		t.Fatalf("server got %d mails, %d auths", ms.count(), ms.authed)
	}
	m := ms.got[0]
	if from := m.Header.Get("From"); !strings.Contains(from, "Acme ISP") || !strings.Contains(from, "billing@acme.test") {
		t.Fatalf("From %q", from)
	}
	if s := m.Header.Get("Subject"); s != "Hello sub0" {
		t.Fatalf("Subject %q", s)
	}
	if id := m.Header.Get("Message-Id"); id != fmt.Sprintf("<xr.acme.%d@xr.test>", ids[0]) {
		t.Fatalf("Message-Id %q", id)
	}
	b, _ := io.ReadAll(m.Body)
	if !strings.Contains(string(b), "Your plan Home 50M expires 2026-04-01.") {
		t.Fatalf("body %q", b)
	}
	for _, id := range ids {
		if st, n, _ := f.state(t, id); st != "sent" || n != 1 {
			t.Fatalf("message %d: %s after %d attempts", id, st, n)
		}
	}
	// Sent is final: another drain sends nothing.
	if n, _ := f.drain(t); n != 0 || ms.count() != 3 {
		t.Fatalf("second drain attempted %d, server has %d", n, ms.count())
	}
	// Wrong credentials: a failed attempt kept for retry, nothing accepted.
	f2 := open(t, app.Config{SMTPAddr: ms.addr, SMTPUser: "relay", SMTPPassword: "wrong", SMTPAuth: "plain"})
	id := f2.mustEnqueue(t, email(1))
	f2.drain(t)
	if st, _, reason := f2.state(t, id); st != "failed" || reason == "" || ms.count() != 3 {
		t.Fatalf("bad password: %s %q, server has %d", st, reason, ms.count())
	}
	// The automatic mechanism choice never sends the password in clear.
	f4 := open(t, app.Config{SMTPAddr: ms.addr, SMTPUser: "relay", SMTPPassword: "s3cret"})
	auths := ms.authed
	id = f4.mustEnqueue(t, email(1))
	f4.drain(t)
	if st, _, _ := f4.state(t, id); st != "failed" || ms.authed != auths || ms.count() != 3 {
		t.Fatalf("autodiscover in clear: %s, %d auths", st, ms.authed-auths)
	}
	// STARTTLS required, the relay offers none: not sent in clear.
	f3 := open(t, app.Config{SMTPAddr: ms.addr, SMTPTLS: SMTPTLSStartTLS, SMTPUser: "relay", SMTPPassword: "s3cret"})
	id = f3.mustEnqueue(t, email(2))
	f3.drain(t)
	if st, _, _ := f3.state(t, id); st != "failed" || ms.count() != 3 {
		t.Fatalf("starttls required: %s, server has %d", st, ms.count())
	}
}

// TestEmailWithoutRelay: with no relay an email is dead at once with
// smtp_not_configured, and the log says so.
func TestEmailWithoutRelay(t *testing.T) {
	t.Parallel()
	f := open(t, app.Config{})
	id := f.mustEnqueue(t, email(1))
	if n, next := f.drain(t); n != 1 || !next.IsZero() {
		t.Fatalf("drain: %d, next %v", n, next)
	}
	if st, n, reason := f.state(t, id); st != "dead" || n != 1 || reason != "smtp_not_configured" {
		t.Fatalf("%s after %d attempts: %s", st, n, reason)
	}
	if !strings.Contains(f.log.String(), "smtp_not_configured") {
		t.Fatalf("log: %s", f.log.String())
	}
	f.clock.add(24 * time.Hour)
	if n, _ := f.drain(t); n != 0 {
		t.Fatalf("a dead message was tried again")
	}
	if err := CheckSMTPConfig(app.Config{SMTPAddr: "relay.test"}); err == nil {
		t.Fatal("an address without a port was accepted")
	}
	if err := CheckSMTPConfig(app.Config{SMTPAddr: "relay.test:587", SMTPTLS: "maybe"}); err == nil {
		t.Fatal("an unknown TLS mode was accepted")
	}
}

// TestRetryBackoffThenDeadThenRetry: a temporary refusal is retried on an
// exponential schedule (fake clock), dead after MaxAttempts, and a staff
// retry sends it.
func TestRetryBackoffThenDeadThenRetry(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	ms.setFail(&smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try later"})
	f := open(t, app.Config{SMTPAddr: ms.addr})
	id := f.mustEnqueue(t, email(1))
	wantDelay := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		n, next := f.drain(t)
		if n != 1 {
			t.Fatalf("attempt %d: drain made %d attempts", attempt, n)
		}
		st, got, reason := f.state(t, id)
		if got != int64(attempt) || reason != "smtp_temporary_failure" {
			t.Fatalf("attempt %d: %s attempts %d reason %s", attempt, st, got, reason)
		}
		if attempt == MaxAttempts {
			if st != "dead" || !next.IsZero() {
				t.Fatalf("after the last attempt: %s, next %v", st, next)
			}
			break
		}
		if st != "failed" || !next.Equal(f.clock.now().Add(wantDelay[attempt-1])) {
			t.Fatalf("attempt %d: %s, next %v (now %v)", attempt, st, next, f.clock.now())
		}
		// Not before its time.
		f.clock.add(wantDelay[attempt-1] - time.Second)
		if n, _ := f.drain(t); n != 0 {
			t.Fatalf("attempt %d retried early", attempt)
		}
		f.clock.add(time.Second)
	}
	ms.setFail(nil)
	act := xrtest.System(t, f.ten)
	if _, err := Retry(context.Background(), act, id); err != nil {
		t.Fatal(err)
	}
	_, err := Retry(context.Background(), act, id)
	xrtest.WantError(t, err, 409, app.CodeConflict, "message_not_retryable")
	f.drain(t)
	if st, n, _ := f.state(t, id); st != "sent" || n != 1 || ms.count() != 1 {
		t.Fatalf("after retry: %s attempts %d, server %d", st, n, ms.count())
	}
	// A permanent refusal is dead at once.
	ms.setFail(&smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"})
	id = f.mustEnqueue(t, email(2))
	f.drain(t)
	if st, n, reason := f.state(t, id); st != "dead" || n != 1 || reason != "smtp_rejected" {
		t.Fatalf("permanent: %s after %d, %s", st, n, reason)
	}
}

// TestSendRate: at most messages_per_minute attempts start in any minute.
func TestSendRate(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	f := open(t, app.Config{SMTPAddr: ms.addr})
	if _, err := UpdateSettings(context.Background(), xrtest.System(t, f.ten), SettingsInput{MessagesPerMinute: 5}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		f.mustEnqueue(t, email(i))
	}
	var windows []int
	for range 3 {
		n, next := f.drain(t)
		windows = append(windows, ms.count())
		if n > 5 {
			t.Fatalf("%d attempts in one window", n)
		}
		if next.IsZero() {
			break
		}
		if next.Before(f.clock.now().Add(time.Minute)) {
			t.Fatalf("next %v is inside the window started %v", next, f.clock.now())
		}
		f.clock.t = next
	}
	if fmt.Sprint(windows) != "[5 10 12]" {
		t.Fatalf("sent per window (cumulative) %v, want [5 10 12]", windows)
	}
}

// TestCrashAndRestartSendsEachOnce: the sender dies after claiming a batch
// and sending part of it; the instance is reopened on the same files; every
// message is then delivered exactly once.
func TestCrashAndRestartSendsEachOnce(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	dir := t.TempDir()
	f := open(t, app.Config{DataDir: dir, SMTPAddr: ms.addr})
	for i := range 10 {
		f.mustEnqueue(t, email(i))
	}
	calls := 0
	stateOf(f.a).afterClaim = func(int64) bool { calls++; return calls == 4 } // dies before the 4th
	if _, _, err := Drain(context.Background(), f.ten); err != errStopped {
		t.Fatalf("drain: %v", err)
	}
	if ms.count() != 3 || f.count(t, "state = 'sending'") != 7 || f.count(t, "state = 'sent'") != 3 {
		t.Fatalf("at the crash: server %d, sending %d, sent %d", ms.count(), f.count(t, "state = 'sending'"), f.count(t, "state = 'sent'"))
	}
	f.closeNow()

	g := open(t, app.Config{DataDir: dir, SMTPAddr: ms.addr})
	g.clock.t = t0.Add(time.Minute) // the claims have not lapsed yet
	if n, next := g.drain(t); n != 0 || !next.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("before the claims lapse: %d attempted, next %v", n, next)
	}
	// xr serve's start ends the dead process's claims at once.
	ten, release, err := g.a.Acquire("acme")
	if err != nil {
		t.Fatal(err)
	}
	_, err = releaseClaims(context.Background(), ten)
	release()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := g.drain(t); n != 7 {
		t.Fatalf("after restart %d attempted, want 7", n)
	}
	got := ms.byMessageID()
	if len(got) != 10 {
		t.Fatalf("%d distinct messages delivered, want 10", len(got))
	}
	for id, n := range got {
		if n != 1 {
			t.Fatalf("%s delivered %d times", id, n)
		}
	}
	if g.count(t, "state = 'sent'") != 10 {
		t.Fatalf("%d sent", g.count(t, "state = 'sent'"))
	}
}

// TestCrashBetweenAcceptAndRecord documents the one at-least-once window:
// a process that dies after the relay accepted a message and before it
// recorded that sends it again after restart, with the same Message-ID.
func TestCrashBetweenAcceptAndRecord(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	dir := t.TempDir()
	f := open(t, app.Config{DataDir: dir, SMTPAddr: ms.addr})
	f.mustEnqueue(t, email(1))
	f.mustEnqueue(t, email(2))
	stateOf(f.a).afterSend = func(int64) bool { return true }
	if _, _, err := Drain(context.Background(), f.ten); err != errStopped {
		t.Fatalf("drain: %v", err)
	}
	f.closeNow()
	g := open(t, app.Config{DataDir: dir, SMTPAddr: ms.addr})
	g.clock.t = t0.Add(3 * time.Minute)
	g.drain(t)
	got := ms.byMessageID()
	if len(got) != 2 || ms.count() != 3 {
		t.Fatalf("delivered %v", got)
	}
}

// TestShutdownHandsBackClaims: a cancelled drain hands back the messages
// it had claimed but not tried, without counting an attempt.
func TestShutdownHandsBackClaims(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	f := open(t, app.Config{SMTPAddr: ms.addr})
	for i := range 4 {
		f.mustEnqueue(t, email(i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	stateOf(f.a).afterClaim = func(int64) bool {
		calls++
		if calls == 2 {
			cancel()
		}
		return false
	}
	if _, _, err := Drain(ctx, f.ten); err != context.Canceled {
		t.Fatalf("drain: %v", err)
	}
	if ms.count() != 1 || f.count(t, "state = 'queued' AND attempts = 0") != 3 {
		t.Fatalf("server %d, queued %d", ms.count(), f.count(t, "state = 'queued' AND attempts = 0"))
	}
}

type gatewayHit struct {
	method, path, query, auth, idem, ctype, body string
}

func gateway(t *testing.T, status int) (*httptest.Server, func() []gatewayHit) {
	var mu sync.Mutex
	var hits []gatewayHit
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, gatewayHit{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("X-Api-Key"), r.Header.Get("Idempotency-Key"), r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
		if status == http.StatusFound {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(status)
		fmt.Fprint(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []gatewayHit { mu.Lock(); defer mu.Unlock(); return append([]gatewayHit(nil), hits...) }
}

// TestSMSThroughGateway: the tenant's gateway gets one call per SMS with the
// templates filled and escaped, the sealed auth header and an idempotency
// key; 5xx is retried, 4xx and redirects are dead.
func TestSMSThroughGateway(t *testing.T) {
	t.Parallel()
	srv, hits := gateway(t, 200)
	f := open(t, app.Config{AllowPrivateEgress: true})
	act := xrtest.System(t, f.ten)
	g, err := SetSMSGateway(context.Background(), act, SMSGatewayInput{URL: srv.URL + "/send?dest={to}", Method: "POST",
		Body: `{"to":"{to}","message":"{text}"}`, ContentType: "application/json", AuthHeader: "X-Api-Key",
		AuthValue: app.Opt[string]{Set: true, V: "key-123"}})
	if err != nil {
		t.Fatal(err)
	}
	if !g.AuthSet {
		t.Fatal("auth value not stored")
	}
	var raw []byte
	if err := f.ten.DB.R.QueryRow(`SELECT auth_value_sealed FROM outbox_sms_gateway`).Scan(&raw); err != nil || bytes.Contains(raw, []byte("key-123")) {
		t.Fatalf("auth value stored in clear (%v)", err)
	}
	_, err = SetSMSGateway(context.Background(), act, SMSGatewayInput{URL: srv.URL + "/send?x={msisdn}"})
	xrtest.WantError(t, err, 400, app.CodeValidation, "unknown_variable")

	id := f.mustEnqueue(t, Message{Channel: ChannelSMS, To: "+9647701234567", Body: `Code "42" & more`, Cause: "signup:1"})
	f.drain(t)
	if st, _, _ := f.state(t, id); st != "sent" {
		t.Fatalf("sms %s", st)
	}
	h := hits()
	if len(h) != 1 {
		t.Fatalf("%d gateway calls", len(h))
	}
	var body map[string]string
	if err := json.Unmarshal([]byte(h[0].body), &body); err != nil {
		t.Fatalf("body %q: %v", h[0].body, err)
	}
	if h[0].method != "POST" || h[0].query != "dest=%2B9647701234567" || h[0].auth != "key-123" || h[0].ctype != "application/json" ||
		body["to"] != "+9647701234567" || body["message"] != `Code "42" & more` || h[0].idem != fmt.Sprintf("xr-acme-%d", id) {
		t.Fatalf("gateway got %+v", h[0])
	}

	for _, c := range []struct {
		status        int
		state, reason string
	}{{503, "failed", "sms_gateway_error"}, {400, "dead", "sms_rejected"}, {302, "dead", "sms_gateway_redirect"}} {
		srv2, hits2 := gateway(t, c.status)
		if _, err := SetSMSGateway(context.Background(), act, SMSGatewayInput{URL: srv2.URL + "/send?to={to}&text={text}", Method: "GET"}); err != nil {
			t.Fatal(err)
		}
		id := f.mustEnqueue(t, Message{Channel: ChannelSMS, To: "+9647701234567", Body: "hello", Cause: fmt.Sprintf("case:%d", c.status)})
		f.drain(t)
		if st, _, reason := f.state(t, id); st != c.state || reason != c.reason || len(hits2()) != 1 {
			t.Fatalf("gateway %d: %s %s after %d calls", c.status, st, reason, len(hits2()))
		}
		if q := hits2()[0].query; q != "to=%2B9647701234567&text=hello" {
			t.Fatalf("query %q", q)
		}
	}
	if g, err := GetSMSGateway(context.Background(), act); err != nil || g.Method != "GET" || !g.AuthSet { // an unset auth_value keeps the stored one
		t.Fatalf("gateway read back %+v %v", g, err)
	}
	if err := DeleteSMSGateway(context.Background(), act); err != nil {
		t.Fatal(err)
	}
	_, err = GetSMSGateway(context.Background(), act)
	xrtest.WantError(t, err, 404, app.CodeNotFound, "not_found")
	id = f.mustEnqueue(t, Message{Channel: ChannelSMS, To: "+9647701234567", Body: "x", Cause: "nogw"})
	f.drain(t)
	if st, _, reason := f.state(t, id); st != "dead" || reason != "sms_gateway_not_configured" {
		t.Fatalf("no gateway: %s %s", st, reason)
	}
}

// TestSMSGatewaySSRF: a gateway on a loopback or private address is
// refused on save, and at connect time when the name resolves there later.
func TestSMSGatewaySSRF(t *testing.T) {
	t.Parallel()
	srv, hits := gateway(t, 200)
	f := open(t, app.Config{})
	act := xrtest.System(t, f.ten)
	for _, u := range []string{srv.URL + "/send?to={to}", "http://10.1.2.3/send?to={to}", "http://[::1]/x", "http://localhost/x", "ftp://example.net/x"} {
		_, err := SetSMSGateway(context.Background(), act, SMSGatewayInput{URL: u})
		if e := app.AsError(err); e == nil || e.Status != 400 {
			t.Fatalf("%s: %v", u, err)
		}
	}
	if f.count(t, "1=1") != 0 || xrtest.Scalar(t, f.ten, `SELECT COUNT(*) FROM outbox_sms_gateway`) != 0 {
		t.Fatal("something stored")
	}
	// As if a public name now resolved to loopback (rebinding): refused when dialled.
	xrtest.Exec(t, f.ten, `INSERT INTO outbox_sms_gateway(id, url, method, updated_at) VALUES (1, ?, 'GET', ?)`, srv.URL+"/send?to={to}", app.StampNow())
	id := f.mustEnqueue(t, Message{Channel: ChannelSMS, To: "+9647701234567", Body: "x"})
	f.drain(t)
	if st, _, reason := f.state(t, id); st != "dead" || reason != "sms_address_not_allowed" || len(hits()) != 0 {
		t.Fatalf("%s %s, %d calls reached the gateway", st, reason, len(hits()))
	}
}

// TestInbox: a subscriber reads its own inbox, newest first, with the
// unread count; marking another subscriber's message is a 404.
func TestInbox(t *testing.T) {
	t.Parallel()
	f := open(t, app.Config{})
	a1 := f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 1, Subject: "Welcome", Body: "Hi", Cause: "a:1"})
	a2 := f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 1, Subject: "Expiring", Body: "Soon", Cause: "a:2"})
	b1 := f.mustEnqueue(t, Message{Channel: ChannelInbox, UserID: 2, Subject: "Other", Body: "x", Cause: "a:2"})
	lq, err := app.ParseList(nil, InboxListSpec)
	if err != nil {
		t.Fatal(err)
	}
	page, err := Inbox(context.Background(), f.ten, 1, lq)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Rows) != 2 || page.Rows[0].ID != a2 || page.Rows[1].ID != a1 || page.Meta.Aggregates.(map[string]any)["unread"] != int64(2) {
		t.Fatalf("inbox %+v meta %+v", page.Rows, page.Meta)
	}
	if err := MarkRead(context.Background(), f.ten, 1, a1); err != nil {
		t.Fatal(err)
	}
	xrtest.WantError(t, MarkRead(context.Background(), f.ten, 1, b1), 404, app.CodeNotFound, "not_found")
	lq.Filters["unread"] = true
	page, err = Inbox(context.Background(), f.ten, 1, lq)
	if err != nil || len(page.Rows) != 1 || page.Rows[0].ID != a2 {
		t.Fatalf("unread %+v %v", page.Rows, err)
	}
	if c, err := Counts(context.Background(), f.ten, "a:2"); err != nil || c["sent"] != 2 || c["dead"] != 0 {
		t.Fatalf("counts %v %v", c, err)
	}
	ds, err := Deliveries(context.Background(), f.ten, "a:2")
	if err != nil || len(ds) != 2 || ds[0].State != "sent" {
		t.Fatalf("deliveries %+v %v", ds, err)
	}
}

// TestJobRunnerSendsAfterCommit: with the job runner running (real clock),
// a message enqueued in a write transaction is sent after commit.
func TestJobRunnerSendsAfterCommit(t *testing.T) {
	t.Parallel()
	ms := newMailServer(t, "", "")
	f := open(t, app.Config{SMTPAddr: ms.addr})
	SetClock(f.a, nil)
	if err := f.a.Jobs.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.a.Jobs.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for i := range 3 {
		f.mustEnqueue(t, email(i))
	}
	xrtest.Eventually(t, "3 mails delivered", func() bool { return ms.count() == 3 })
	xrtest.Eventually(t, "all recorded sent", func() bool { return f.count(t, "state = 'sent'") == 3 })
}

// TestWakeQueuesADrain: messages left without a drain job (its job failed,
// or another process wrote them) get one from the sweep, once.
func TestWakeQueuesADrain(t *testing.T) {
	t.Parallel()
	f := open(t, app.Config{})
	f.mustEnqueue(t, email(1))
	drains := func() int64 {
		return xrtest.Scalar(t, f.ten, `SELECT COUNT(*) FROM jobs WHERE kind = ? AND state = 'queued'`, JobSend)
	}
	if drains() != 1 {
		t.Fatalf("%d drain jobs after enqueue", drains())
	}
	f.mustEnqueue(t, email(2))
	if drains() != 1 {
		t.Fatalf("%d drain jobs after a second enqueue", drains())
	}
	xrtest.Exec(t, f.ten, `UPDATE jobs SET state = 'failed' WHERE kind = ?`, JobSend)
	for range 2 {
		if _, err := wake(context.Background(), f.ten); err != nil {
			t.Fatal(err)
		}
	}
	if drains() != 1 {
		t.Fatalf("%d drain jobs after wake", drains())
	}
}

// BenchmarkEnqueueFanOut measures an announcement's fan-out: 1,000 email
// messages enqueued in one transaction (b.N transactions).
func BenchmarkEnqueueFanOut(b *testing.B) {
	a := xrtest.Open(b, app.Config{}, Module)
	defer a.Close()
	xrtest.Tenant(b, a, "acme")
	ten := xrtest.Acquire(b, a, "acme")
	ctx := context.Background()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		err := ten.Write(ctx, func(tx *sql.Tx) error {
			for i := range 1000 {
				m := email(i)
				m.Cause = fmt.Sprintf("announcement:%d", n)
				if _, err := Enqueue(ctx, tx, ten, m); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
