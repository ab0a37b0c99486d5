package outbox

import (
	"context"
	"database/sql"
	"net/mail"
	"strings"

	"xr/app"
)

// Record is one stored message as staff see it in the message log.
type Record struct {
	ID          int64    `json:"id"`
	Channel     string   `json:"channel"`
	To          string   `json:"to"`
	UserID      *int64   `json:"user_id"`
	Template    string   `json:"template"`
	Subject     string   `json:"subject"`
	Body        string   `json:"body"`
	Cause       string   `json:"cause"`
	State       string   `json:"state"`
	Attempts    int      `json:"attempts"`
	MaxAttempts int      `json:"max_attempts"`
	NextAt      app.Time `json:"next_at"`
	LastError   string   `json:"last_error"`
	LastDetail  string   `json:"last_detail"`
	CreatedAt   app.Time `json:"created_at"`
	SentAt      app.Time `json:"sent_at"`
	ReadAt      app.Time `json:"read_at"`
}

const recordCols = `id, channel, recipient, user_id, template, subject, body, cause, state, attempts, max_attempts, next_at, last_error, last_detail, created_at, sent_at, read_at`

func scanRecord(row interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var user sql.NullInt64
	err := row.Scan(&r.ID, &r.Channel, &r.To, &user, &r.Template, &r.Subject, &r.Body, &r.Cause, &r.State, &r.Attempts, &r.MaxAttempts,
		&r.NextAt, &r.LastError, &r.LastDetail, &r.CreatedAt, &r.SentAt, &r.ReadAt)
	if user.Valid {
		r.UserID = &user.Int64
	}
	return r, err
}

// States of a message.
var States = []string{"queued", "sending", "sent", "failed", "dead"}

// ListSpec is the message log's list spec.
var ListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "id", "created_at": "created_at", "state": "state"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"state": app.FilterString, "channel": app.FilterString, "cause": app.FilterString, "user_id": app.FilterInt},
	Aliases:     []string{"state", "channel", "cause", "user_id"},
}

// List is the tenant's message log (prm_settings): filters state, channel,
// cause, user_id; q matches the recipient and the subject.
func List(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Record], error) {
	if err := act.Require(app.PermSettings); err != nil {
		return app.Page[Record]{}, err
	}
	where := []string{"1=1"}
	var args []any
	for _, k := range []string{"state", "channel", "cause"} {
		if v, ok := lq.Str(k); ok {
			where = append(where, k+" = ?")
			args = append(args, v)
		}
	}
	if v, ok := lq.Int("user_id"); ok {
		where = append(where, "user_id = ?")
		args = append(args, v)
	}
	if lq.Q != "" {
		where = append(where, `(recipient LIKE ? ESCAPE '\' OR subject LIKE ? ESCAPE '\')`)
		p := "%" + app.LikeEscape(lq.Q) + "%"
		args = append(args, p, p)
	}
	return app.QueryPage(ctx, act.Tenant, lq, recordCols, `FROM outbox_messages WHERE `+strings.Join(where, " AND "), args, "id",
		func(rows *sql.Rows) (Record, error) { return scanRecord(rows) })
}

// Get reads one message of the log.
func Get(ctx context.Context, act *app.Actor, id int64) (*Record, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	r, err := scanRecord(act.Tenant.DB.R.QueryRowContext(ctx, `SELECT `+recordCols+` FROM outbox_messages WHERE id = ?`, id))
	if err == sql.ErrNoRows {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Retry puts a dead or failed message back in the queue with its attempts
// reset (409 message_not_retryable for any other state).
func Retry(ctx context.Context, act *app.Actor, id int64) (*Record, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	t := act.Tenant
	s := stateOf(t.App)
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var st string
		if err := tx.QueryRowContext(ctx, `SELECT state FROM outbox_messages WHERE id = ?`, id).Scan(&st); err == sql.ErrNoRows {
			return app.ErrNotFound()
		} else if err != nil {
			return err
		}
		if st != "dead" && st != "failed" {
			return app.ErrConflict("message_not_retryable").With("state", st)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET state = 'queued', attempts = 0, next_at = ?, last_error = '', last_detail = '' WHERE id = ?`,
			app.FormatTime(s.now()), id); err != nil {
			return err
		}
		return ensureDrain(ctx, tx, act.Tenant.Now())
	})
	if err != nil {
		return nil, err
	}
	return Get(ctx, act, id)
}

// Delivery is one message of a cause: who was notified, how, and where it
// stands.
type Delivery struct {
	ID        int64    `json:"id"`
	Channel   string   `json:"channel"`
	To        string   `json:"to"`
	UserID    *int64   `json:"user_id"`
	State     string   `json:"state"`
	Attempts  int      `json:"attempts"`
	LastError string   `json:"last_error"`
	SentAt    app.Time `json:"sent_at"`
}

// Deliveries lists the messages enqueued for cause, oldest first (an area
// shows "who was notified" from it; the caller authorizes).
func Deliveries(ctx context.Context, t *app.Tenant, cause string) ([]Delivery, error) {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT id, channel, recipient, user_id, state, attempts, last_error, sent_at FROM outbox_messages WHERE cause = ? ORDER BY id`, cause)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		var d Delivery
		var user sql.NullInt64
		if err := rows.Scan(&d.ID, &d.Channel, &d.To, &user, &d.State, &d.Attempts, &d.LastError, &d.SentAt); err != nil {
			return nil, err
		}
		if user.Valid {
			d.UserID = &user.Int64
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Counts are a cause's messages by state (announcement progress).
func Counts(ctx context.Context, t *app.Tenant, cause string) (map[string]int64, error) {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT state, COUNT(*) FROM outbox_messages WHERE cause = ? GROUP BY state`, cause)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for _, s := range States {
		out[s] = 0
	}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}

// InboxMessage is a message of a subscriber's portal inbox.
type InboxMessage struct {
	ID        int64    `json:"id"`
	Subject   string   `json:"subject"`
	Body      string   `json:"body"`
	CreatedAt app.Time `json:"created_at"`
	ReadAt    app.Time `json:"read_at"`
}

// InboxListSpec is the inbox's list spec (filter unread=true).
var InboxListSpec = app.ListSpec{
	Sorts: map[string]string{"id": "id"}, DefaultSort: "id",
	Filters: map[string]app.FilterKind{"unread": app.FilterBool}, Aliases: []string{"unread"},
}

// Inbox is a page of subscriber userID's inbox, newest first (the portal
// authorizes: the caller is that subscriber).
func Inbox(ctx context.Context, t *app.Tenant, userID int64, page app.ListQuery) (app.Page[InboxMessage], error) {
	from := `FROM outbox_messages WHERE channel = 'inbox' AND user_id = ?`
	if unread, ok := page.Bool("unread"); ok {
		if unread {
			from += ` AND read_at IS NULL`
		} else {
			from += ` AND read_at IS NOT NULL`
		}
	}
	return app.QueryPage(ctx, t, page, `id, subject, body, created_at, read_at`, from, []any{userID}, "id",
		func(rows *sql.Rows) (InboxMessage, error) {
			var m InboxMessage
			err := rows.Scan(&m.ID, &m.Subject, &m.Body, &m.CreatedAt, &m.ReadAt)
			return m, err
		}, app.Rollup{Key: "unread", Expr: `SUM(read_at IS NULL)`})
}

// MarkRead marks message id of userID's inbox read (404 when it is not
// theirs); marking it again keeps the first time.
func MarkRead(ctx context.Context, t *app.Tenant, userID, id int64) error {
	now := app.FormatTime(stateOf(t.App).now())
	return t.Write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET read_at = COALESCE(read_at, ?) WHERE id = ? AND channel = 'inbox' AND user_id = ?`, now, id, userID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return app.ErrNotFound()
		}
		return nil
	})
}

// Settings are the tenant's messaging settings as the console edits them.
type Settings struct {
	FromName          string      `json:"from_name"`
	FromAddress       string      `json:"from_address"`
	MessagesPerMinute int64       `json:"messages_per_minute"`
	SMTPConfigured    bool        `json:"smtp_configured"`
	SMTPFrom          string      `json:"smtp_from"`
	Gateway           *SMSGateway `json:"sms_gateway"`
}

// SettingsInput changes the sender and the send rate.
type SettingsInput struct {
	FromName          string `json:"from_name"`
	FromAddress       string `json:"from_address"`
	MessagesPerMinute int64  `json:"messages_per_minute"`
}

// GetSettings reads the tenant's messaging settings (prm_settings).
func GetSettings(ctx context.Context, act *app.Actor) (*Settings, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	t := act.Tenant
	var out Settings
	var err error
	if out.FromName, err = SettingMailFromName.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	if out.FromAddress, err = SettingMailFromAddress.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	if out.MessagesPerMinute, err = SettingMessagesPerMinute.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	out.SMTPConfigured, out.SMTPFrom = t.App.Cfg.SMTPAddr != "", t.App.Cfg.SMTPFrom
	if out.Gateway, _, err = loadGateway(ctx, t.DB.R); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateSettings stores the sender and the send rate.
func UpdateSettings(ctx context.Context, act *app.Actor, in SettingsInput) (*Settings, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	in.FromName = strings.TrimSpace(in.FromName)
	in.FromAddress = strings.TrimSpace(in.FromAddress)
	if len(in.FromName) > 100 || strings.ContainsAny(in.FromName, "\r\n") {
		return nil, app.ErrValidation("invalid_name", "from_name")
	}
	if in.FromAddress != "" {
		if a, err := mail.ParseAddress(in.FromAddress); err != nil || a.Address != in.FromAddress {
			return nil, app.ErrValidation("invalid_email", "from_address")
		}
	}
	if in.MessagesPerMinute < 1 || in.MessagesPerMinute > 6000 {
		return nil, app.ErrValidation("out_of_range", "messages_per_minute").With("min", 1).With("max", 6000)
	}
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		for _, kv := range []struct {
			key string
			val any
		}{{SettingMailFromName.Key, in.FromName}, {SettingMailFromAddress.Key, in.FromAddress}, {SettingMessagesPerMinute.Key, in.MessagesPerMinute}} {
			if err := app.PutSetting(ctx, tx, kv.key, kv.val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return GetSettings(ctx, act)
}

// TestInput is a test message sent from the settings page.
type TestInput struct {
	Channel string `json:"channel"`
	To      string `json:"to"`
}

// SendTest enqueues a test message to an address or phone number; it goes
// through the outbox like any other (see the message log for its outcome).
func SendTest(ctx context.Context, act *app.Actor, in TestInput) (*Record, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	if in.Channel != ChannelEmail && in.Channel != ChannelSMS {
		return nil, app.ErrValidation("invalid_channel", "channel").With("allowed", []string{ChannelEmail, ChannelSMS})
	}
	t := act.Tenant
	var id int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = Enqueue(ctx, tx, t, Message{Channel: in.Channel, To: in.To, Subject: "Test message from " + t.Name,
			Body:  "This is a test message from " + t.Name + ". If you read it, outbound " + in.Channel + " works.",
			Cause: "test:" + app.RandomToken(8)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return Get(ctx, act, id)
}
