// Package outbox is the one outbox of outbound messages of a tenant: email
// through the instance's SMTP relay, SMS through the tenant's HTTP gateway,
// and the subscriber portal inbox.
//
// An area enqueues a message inside its own write transaction (Enqueue), so
// the message exists exactly when its cause committed. The job runner sends
// it after commit (job kind outbox.send, one drain job per tenant at a
// time), at most messages_per_minute email and SMS messages a minute per
// tenant. Each message moves queued → sending → sent, or → failed (retried
// with exponential backoff) → dead after MaxAttempts or on a permanent
// error; a dead message can be retried by staff (Retry). Inbox messages are
// delivered when written.
//
// Crash safety: a message is claimed (state sending, a claim of two
// minutes) in one transaction before it is handed to the relay or gateway,
// and its outcome is recorded in its own transaction right after. A message
// marked sent is never sent again. A message whose process died holding its
// claim is sent again when xr serve starts (or once the claim lapses): the
// one at-least-once window is between the relay or gateway accepting a
// message and the commit that records it (milliseconds). Email
// carries a stable Message-ID and SMS requests an Idempotency-Key header
// (both derived from the tenant and message id) so a receiver can drop that
// rare duplicate.
package outbox

import (
	"context"
	"database/sql"
	"fmt"
	"net/mail"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"xr/app"
)

// Channels.
const (
	ChannelEmail = "email"
	ChannelSMS   = "sms"
	ChannelInbox = "inbox"
)

// Message is one message to one recipient.
type Message struct {
	Channel  string            // "email" | "sms" | "inbox"
	To       string            // email address, E.164 phone number, or "" for inbox
	UserID   int64             // the subscriber it concerns (required for inbox; optional otherwise)
	Template string            // a template key registered by an area (e.g. "ticket.replied"), or "" with Subject/Body given
	Vars     map[string]string // template variables
	Subject  string
	Body     string
	Cause    string // what caused it, e.g. "ticket:42"; (Cause, Channel, To) is unique: enqueueing the same again is a no-op (idempotent fan-out)
}

// Template is a message template an area registers with Register (from its
// Module's Init). Subject and Body use {name} placeholders; Vars lists the
// names allowed. For SMS only Body is sent.
type Template struct {
	Key, Subject, Body string
	Vars               []string
}

// Limits of a message.
const (
	MaxSubjectLen = 500
	MaxBodyLen    = 64 << 10
	MaxCauseLen   = 200
	MaxAttempts   = 6
)

// JobSend is the job kind that drains a tenant's outbox.
const JobSend = "outbox.send"

// Module is the outbox's contribution to an App: the drain job (a
// transaction that enqueues a message makes it due, ensureDrain), the
// tenant tasks that end a dead process's claims at start and make sure
// waiting messages have a drain job, its settings and its sealed column.
var Module = app.Module{
	Name: "outbox",
	Jobs: map[string]app.JobHandler{JobSend: runSend},
	TenantTasks: []app.TenantTask{
		{Name: "outbox.release_claims", Run: releaseClaims},
		{Name: "outbox.sweep", Every: SweepEvery, Run: wake},
	},
	Settings:      settingDecls,
	SealedColumns: []app.SealedColumn{{Table: "outbox_sms_gateway", Column: "auth_value_sealed"}},
}

// state is the outbox's per-App state.
type state struct {
	app       *app.App
	mu        sync.Mutex
	templates map[string]Template
	clock     func() time.Time

	lease      time.Duration // a claim of a message being sent
	retryBase  time.Duration // first retry delay (doubles each attempt)
	retryMax   time.Duration
	sendTO     time.Duration // one SMTP or gateway call
	batch      int
	afterClaim func(id int64) bool // tests: simulate a crash (true stops the drain)
	afterSend  func(id int64) bool
}

type stateKey struct{}

func stateOf(a *app.App) *state {
	return a.ValueOrStore(stateKey{}, &state{
		app: a, templates: map[string]Template{},
		lease: 2 * time.Minute, retryBase: 30 * time.Second, retryMax: time.Hour, sendTO: 20 * time.Second, batch: 20,
	}).(*state)
}

func (s *state) now() time.Time {
	s.mu.Lock()
	c := s.clock
	s.mu.Unlock()
	if c == nil {
		return s.app.Now()
	}
	return c().UTC()
}

// SetClock gives the outbox of a a clock of its own, apart from the App's
// (tests move the outbox's retry times while the job runner keeps real
// time). nil restores the App's clock.
func SetClock(a *app.App, now func() time.Time) {
	s := stateOf(a)
	s.mu.Lock()
	s.clock = now
	s.mu.Unlock()
}

// Backoff is the delay before attempt n+1 after n failed attempts: base
// doubled n-1 times, at most max.
func Backoff(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

var varName = regexp.MustCompile(`\{([a-z][a-z0-9_]{0,39})\}`)

// Register adds templates to a's registry (an area calls it from its
// Module's Init). A template whose text names a variable it does not list,
// or a key registered twice, is a programming error (panic).
func Register(a *app.App, ts ...Template) {
	s := stateOf(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		if t.Key == "" {
			panic("outbox: template without a key")
		}
		if _, dup := s.templates[t.Key]; dup {
			panic(fmt.Sprintf("outbox: template %q registered twice", t.Key))
		}
		if name := firstUnknown(t.Subject+"\n"+t.Body, t.Vars); name != "" {
			panic(fmt.Sprintf("outbox: template %q uses {%s}, not in its Vars", t.Key, name))
		}
		t.Vars = append([]string(nil), t.Vars...)
		s.templates[t.Key] = t
	}
}

// Templates lists a's registered templates by key.
func Templates(a *app.App) []Template {
	s := stateOf(a)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Template, 0, len(s.templates))
	for _, t := range s.templates {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (s *state) template(key string) (Template, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.templates[key]
	return t, ok
}

// Placeholders are the {name} variables text uses, in order of first use.
func Placeholders(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range varName.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

func firstUnknown(text string, allowed []string) string {
	for _, name := range Placeholders(text) {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			return name
		}
	}
	return ""
}

// ValidateText checks text someone wrote (an announcement, a canned reply)
// against the variables allowed: a {name} not among them is 400
// unknown_variable naming field, with details.variable the name.
func ValidateText(text, field string, allowed []string) error {
	if name := firstUnknown(text, allowed); name != "" {
		return unknownVariable(field, name)
	}
	return nil
}

func unknownVariable(field, name string) error {
	return app.ErrValidation("unknown_variable", field).With("variable", name)
}

// Render replaces every {name} of text with vars[name]; names absent from
// vars are left as written.
func Render(text string, vars map[string]string) string {
	return varName.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// render validates m's template and variables and answers the subject and
// body to store.
func (s *state) render(m Message) (subject, body string, err error) {
	subject, body = m.Subject, m.Body
	allowed := make([]string, 0, len(m.Vars))
	for k := range m.Vars {
		allowed = append(allowed, k)
	}
	if m.Template != "" {
		t, ok := s.template(m.Template)
		if !ok {
			return "", "", app.ErrValidation("unknown_template", "template").With("template", m.Template)
		}
		keys := append([]string(nil), allowed...)
		sort.Strings(keys)
		for _, k := range keys {
			if firstUnknown("{"+k+"}", t.Vars) != "" || !varName.MatchString("{"+k+"}") {
				return "", "", unknownVariable("vars", k)
			}
		}
		for _, name := range Placeholders(t.Subject + "\n" + t.Body) {
			if _, ok := m.Vars[name]; !ok {
				return "", "", app.ErrValidation("missing_variable", "vars").With("variable", name)
			}
		}
		subject, body = t.Subject, t.Body
	} else {
		if err := ValidateText(subject, "subject", allowed); err != nil {
			return "", "", err
		}
		if err := ValidateText(body, "body", allowed); err != nil {
			return "", "", err
		}
	}
	subject = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(Render(subject, m.Vars), "\r", " "), "\n", " "))
	body = Render(body, m.Vars)
	if strings.TrimSpace(body) == "" {
		return "", "", app.ErrValidation("body_required", "body")
	}
	if len(subject) > MaxSubjectLen {
		return "", "", app.ErrValidation("subject_too_long", "subject")
	}
	if len(body) > MaxBodyLen {
		return "", "", app.ErrValidation("body_too_long", "body")
	}
	return subject, body, nil
}

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// recipient validates m's channel and recipient and answers the stored
// recipient and its dedupe key.
func recipient(m Message) (to, dedupe string, err error) {
	switch m.Channel {
	case ChannelEmail:
		to = strings.TrimSpace(m.To)
		a, err := mail.ParseAddress(to)
		if err != nil || a.Address != to || len(to) > 254 {
			return "", "", app.ErrValidation("invalid_email", "to")
		}
		return to, strings.ToLower(to), nil
	case ChannelSMS:
		to = strings.TrimSpace(m.To)
		if !e164.MatchString(to) {
			return "", "", app.ErrValidation("invalid_phone", "to")
		}
		return to, to, nil
	case ChannelInbox:
		if m.UserID <= 0 {
			return "", "", app.ErrValidation("user_required", "user_id")
		}
		return "", fmt.Sprintf("user:%d", m.UserID), nil
	default:
		return "", "", app.ErrValidation("invalid_channel", "channel").With("allowed", []string{ChannelEmail, ChannelSMS, ChannelInbox})
	}
}

// Enqueue stores m in the caller's transaction; it is sent after commit. An
// unknown template variable is a 400 unknown_variable naming it.
//
// With a Template, every key of Vars must be one of the template's Vars;
// without one, every {name} in Subject and Body must be a key of Vars. A
// message with the same non-empty (Cause, Channel, To) as one already
// stored (for the inbox: the same UserID) is not stored again: Enqueue
// answers the existing message's id.
func Enqueue(ctx context.Context, tx *sql.Tx, t *app.Tenant, m Message) (id int64, err error) {
	s := stateOf(t.App)
	to, dedupe, err := recipient(m)
	if err != nil {
		return 0, err
	}
	if len(m.Cause) > MaxCauseLen {
		return 0, app.ErrValidation("cause_too_long", "cause")
	}
	subject, body, err := s.render(m)
	if err != nil {
		return 0, err
	}
	now := app.FormatTime(s.now())
	st, sentAt := "queued", any(nil)
	if m.Channel == ChannelInbox {
		st, sentAt = "sent", now
	}
	var user any
	if m.UserID > 0 {
		user = m.UserID
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO outbox_messages(channel, recipient, user_id, dedupe, template, subject, body, cause,
		state, max_attempts, next_at, created_at, sent_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		m.Channel, to, user, dedupe, m.Template, subject, body, m.Cause, st, MaxAttempts, now, now, sentAt)
	if err != nil {
		return 0, fmt.Errorf("enqueue message: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return 0, err
	} else if n == 0 {
		err := tx.QueryRowContext(ctx, `SELECT id FROM outbox_messages WHERE cause = ? AND channel = ? AND dedupe = ?`, m.Cause, m.Channel, dedupe).Scan(&id)
		if err != nil {
			return 0, fmt.Errorf("find enqueued message: %w", err)
		}
		return id, nil
	}
	if id, err = res.LastInsertId(); err != nil {
		return 0, err
	}
	if m.Channel != ChannelInbox {
		if err := ensureDrain(ctx, tx, t.Now()); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// ensureDrain makes sure a drain job is queued to run at `at`; the
// runner learns of it when tx commits.
func ensureDrain(ctx context.Context, tx *sql.Tx, at time.Time) error {
	if _, err := app.WakeKind(ctx, tx, JobSend, at); err != nil {
		return fmt.Errorf("wake outbox job: %w", err)
	}
	app.JobsDue(tx, at)
	var queued bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM jobs WHERE kind = ? AND state = 'queued')`, JobSend).Scan(&queued); err != nil {
		return fmt.Errorf("find outbox job: %w", err)
	}
	if queued {
		return nil
	}
	if _, err := app.EnqueueJob(ctx, tx, JobSend, map[string]any{}, at, 0, 5); err != nil {
		return fmt.Errorf("queue outbox job: %w", err)
	}
	return nil
}
