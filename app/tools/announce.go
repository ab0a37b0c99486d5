package tools

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"xr/app"
	"xr/app/outbox"
	"xr/app/subs"
)

// AnnouncementVars are the variables an announcement's text may use.
var AnnouncementVars = []string{"username", "expiration", "balance", "plan"}

// Limits of an announcement.
const (
	MaxTitleLen = 200
	MaxBodyLen  = 4000
)

var channelNames = []string{outbox.ChannelEmail, outbox.ChannelSMS, outbox.ChannelInbox}

// AnnouncementInput is POST /admin/tools/announcements.
type AnnouncementInput struct {
	Title     string          `json:"title"`
	Body      string          `json:"body"`
	Channels  []string        `json:"channels"`
	Target    subs.Selection  `json:"target"`
	ExpiresAt *app.DateOrTime `json:"expires_at"` // the portal shows it until then (null: until read)
}

// PreviewCountInput is POST /admin/tools/announcements/preview-count.
type PreviewCountInput struct {
	Channels []string       `json:"channels"`
	Target   subs.Selection `json:"target"`
}

// Reach is how many subscribers a target picks and how many each channel
// reaches (email: with an address, sms: with a phone number, inbox: all).
type Reach struct {
	Subscribers int64            `json:"subscribers"`
	Reachable   map[string]int64 `json:"reachable"`
}

// Announcement is an announcement and its progress: recipients fixed at
// creation, processed by the fan-out so far, skipped (recipient, channel)
// pairs without a usable address, and the outbox's delivery counts by
// state (queued, sending, sent, failed, dead).
type Announcement struct {
	ID         int64            `json:"id"`
	Title      string           `json:"title"`
	Body       string           `json:"body"`
	Channels   []string         `json:"channels"`
	Target     subs.Selection   `json:"target"`
	State      string           `json:"state"`
	Recipients int64            `json:"recipients"`
	Processed  int64            `json:"processed"`
	Skipped    int64            `json:"skipped"`
	Delivery   map[string]int64 `json:"delivery"`
	ExpiresAt  app.Time         `json:"expires_at"`
	JobID      *int64           `json:"job_id"`
	CreatedBy  *int64           `json:"created_by"`
	CreatedAt  app.Time         `json:"created_at"`
	FinishedAt app.Time         `json:"finished_at"`
}

func checkChannels(chs []string) ([]string, error) {
	if len(chs) == 0 {
		return nil, app.ErrValidation("channels_required", "channels")
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range chs {
		ok := false
		for _, n := range channelNames {
			ok = ok || n == c
		}
		if !ok {
			return nil, app.ErrValidation("invalid_enum", "channels").With("allowed", channelNames)
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

func (in *AnnouncementInput) validate(now time.Time) error {
	in.Title = strings.TrimSpace(in.Title)
	if in.Title == "" {
		return app.ErrValidation("title_required", "title")
	}
	if utf8.RuneCountInString(in.Title) > MaxTitleLen || strings.ContainsAny(in.Title, "\r\n") {
		return app.ErrValidation("too_long", "title")
	}
	if strings.TrimSpace(in.Body) == "" {
		return app.ErrValidation("body_required", "body")
	}
	if utf8.RuneCountInString(in.Body) > MaxBodyLen {
		return app.ErrValidation("too_long", "body")
	}
	if err := outbox.ValidateText(in.Title, "title", AnnouncementVars); err != nil {
		return err
	}
	if err := outbox.ValidateText(in.Body, "body", AnnouncementVars); err != nil {
		return err
	}
	chs, err := checkChannels(in.Channels)
	if err != nil {
		return err
	}
	in.Channels = chs
	if in.ExpiresAt != nil && !in.ExpiresAt.IsZero() && !in.ExpiresAt.Time.Time.After(now) {
		return app.ErrValidation("expires_in_past", "expires_at")
	}
	return nil
}

// PreviewAnnouncementCount answers how many subscribers a target picks and
// how many each channel reaches, sending nothing.
func PreviewAnnouncementCount(ctx context.Context, act *app.Actor, in PreviewCountInput) (*Reach, error) {
	if err := act.Require(PermToolsAnnouncements); err != nil {
		return nil, err
	}
	chs := in.Channels
	if len(chs) == 0 {
		chs = channelNames
	}
	chs, err := checkChannels(chs)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	var total, email, phone int64
	err = t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		total, email, phone, err = subs.SelectionReach(ctx, tx, act, in.Target, t.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	r := &Reach{Subscribers: total, Reachable: map[string]int64{}}
	for _, c := range chs {
		switch c {
		case outbox.ChannelEmail:
			r.Reachable[c] = email
		case outbox.ChannelSMS:
			r.Reachable[c] = phone
		case outbox.ChannelInbox:
			r.Reachable[c] = total
		}
	}
	return r, nil
}

// CreateAnnouncement fixes the target's recipients and queues the fan-out
// job (202 with the announcement). An unknown {variable} in the title or
// body is a 400 unknown_variable naming it; a target that picks nobody is
// 400 no_recipients.
func CreateAnnouncement(ctx context.Context, act *app.Actor, in AnnouncementInput) (*Announcement, error) {
	if err := act.Require(PermToolsAnnouncements); err != nil {
		return nil, err
	}
	t := act.Tenant
	if err := in.validate(t.Now()); err != nil {
		return nil, err
	}
	var id, jobID int64
	err := t.Write(ctx, func(tx *sql.Tx) error {
		now := t.Now()
		ids, err := subs.SelectUserIDs(ctx, tx, act, in.Target, now)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return app.ErrValidation("no_recipients", "target")
		}
		chs, err := json.Marshal(in.Channels)
		if err != nil {
			return err
		}
		target, err := json.Marshal(in.Target)
		if err != nil {
			return err
		}
		var exp any
		if in.ExpiresAt != nil && !in.ExpiresAt.IsZero() {
			exp = in.ExpiresAt.Time
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO announcements(title, body, channels, target, recipients, expires_at, created_by, created_at)
			VALUES (?,?,?,?,?,?,?,?)`, in.Title, in.Body, string(chs), string(target), len(ids), exp, nullID(act.ManagerID), app.FormatTime(now))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := insertIDs(ctx, tx, `INSERT INTO announcement_recipients(announcement_id, user_id) SELECT ?, value FROM json_each(?)`, id, ids); err != nil {
			return err
		}
		if jobID, err = app.EnqueueJob(ctx, tx, JobAnnounce, map[string]int64{"announcement_id": id}, now, act.ManagerID, 10); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE announcements SET job_id = ? WHERE id = ?`, jobID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return GetAnnouncement(ctx, act, id)
}

func nullID(id int64) any {
	if id > 0 {
		return id
	}
	return nil
}

// insertIDs runs an INSERT ... SELECT ?, value FROM json_each(?) over ids in
// slices (one statement per 5,000 ids).
func insertIDs(ctx context.Context, tx *sql.Tx, query string, owner int64, ids []int64) error {
	for len(ids) > 0 {
		n := min(len(ids), 5000)
		b := make([]string, n)
		for i, id := range ids[:n] {
			b[i] = strconv.FormatInt(id, 10)
		}
		if _, err := tx.ExecContext(ctx, query, owner, "["+strings.Join(b, ",")+"]"); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

const announcementCols = `id, title, body, channels, target, state, recipients, processed, skipped, expires_at, job_id, created_by, created_at, finished_at`

func scanAnnouncement(row interface{ Scan(...any) error }) (*Announcement, sql.NullInt64, error) {
	a := &Announcement{}
	var chs, target string
	var job, by sql.NullInt64
	if err := row.Scan(&a.ID, &a.Title, &a.Body, &chs, &target, &a.State, &a.Recipients, &a.Processed, &a.Skipped, &a.ExpiresAt,
		&job, &by, &a.CreatedAt, &a.FinishedAt); err != nil {
		return nil, by, err
	}
	if err := json.Unmarshal([]byte(chs), &a.Channels); err != nil {
		return nil, by, err
	}
	if err := json.Unmarshal([]byte(target), &a.Target); err != nil {
		return nil, by, err
	}
	if job.Valid {
		a.JobID = &job.Int64
	}
	if by.Valid {
		a.CreatedBy = &by.Int64
	}
	return a, by, nil
}

// GetAnnouncement is GET /admin/tools/announcements/{id}: the announcement
// with its progress and delivery counts (its creator or a tenant-wide
// caller; anyone else gets the 404 of a missing one).
func GetAnnouncement(ctx context.Context, act *app.Actor, id int64) (*Announcement, error) {
	if err := act.Require(PermToolsAnnouncements); err != nil {
		return nil, err
	}
	t := act.Tenant
	a, by, err := scanAnnouncement(t.DB.R.QueryRowContext(ctx, `SELECT `+announcementCols+` FROM announcements WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !owns(act, by)) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	if a.Delivery, err = outbox.Counts(ctx, t, cause(id)); err != nil {
		return nil, err
	}
	return a, nil
}

// AnnouncementListSpec is the list spec of GET /admin/tools/announcements.
var AnnouncementListSpec = app.ListSpec{Sorts: map[string]string{"id": "id", "created_at": "created_at"}, DefaultSort: "id",
	Filters: map[string]app.FilterKind{"state": app.FilterString}}

// ListAnnouncements is GET /admin/tools/announcements, newest first (the
// caller's own unless tenant-wide); filter state.
func ListAnnouncements(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Announcement], error) {
	if err := act.Require(PermToolsAnnouncements); err != nil {
		return app.Page[Announcement]{}, err
	}
	cond, args := ownerSQL(act, "created_by")
	if v, ok := lq.Str("state"); ok {
		cond += " AND state = ?"
		args = append(args, v)
	}
	return app.QueryPage(ctx, act.Tenant, lq, announcementCols, `FROM announcements WHERE `+cond, args, "id",
		func(rows *sql.Rows) (Announcement, error) {
			a, _, err := scanAnnouncement(rows)
			if err != nil {
				return Announcement{}, err
			}
			a.Delivery = map[string]int64{}
			return *a, nil
		})
}

func cause(id int64) string { return fmt.Sprintf("announcement:%d", id) }

// runAnnounce is the fan-out job of one announcement.
func runAnnounce(ctx context.Context, jc *app.JobContext) (any, error) {
	var p struct {
		AnnouncementID int64 `json:"announcement_id"`
	}
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	return fanOut(ctx, jc.Tenant, p.AnnouncementID, func(done, total int64) { jc.NoteProgress(ctx, done, total) })
}

// FanOutResult is the fan-out job's result.
type FanOutResult struct {
	Processed int64 `json:"processed"`
	Skipped   int64 `json:"skipped"`
}

// fanOut enqueues an announcement's messages, one chunk of recipients per
// transaction, from its cursor on. Enqueue is idempotent per (cause,
// channel, recipient), so running it again after a crash sends nothing
// twice.
func fanOut(ctx context.Context, t *app.Tenant, id int64, progress func(done, total int64)) (*FanOutResult, error) {
	chunk, after := hooksOf(t.App).get()
	for {
		var done bool
		var res FanOutResult
		var total int64
		err := t.Write(ctx, func(tx *sql.Tx) error {
			a, _, err := scanAnnouncement(tx.QueryRowContext(ctx, `SELECT `+announcementCols+` FROM announcements WHERE id = ?`, id))
			if err != nil {
				return err
			}
			var cursor int64
			if err := tx.QueryRowContext(ctx, `SELECT cursor FROM announcements WHERE id = ?`, id).Scan(&cursor); err != nil {
				return err
			}
			ids, err := app.QueryIDs(ctx, tx, `SELECT user_id FROM announcement_recipients WHERE announcement_id = ? AND user_id > ? ORDER BY user_id LIMIT ?`, id, cursor, chunk)
			if err != nil {
				return err
			}
			res.Processed, res.Skipped, total = a.Processed, a.Skipped, a.Recipients
			if len(ids) == 0 {
				done = true
				_, err := tx.ExecContext(ctx, `UPDATE announcements SET state = 'done', finished_at = COALESCE(finished_at, ?) WHERE id = ?`, t.NowText(), id)
				return err
			}
			rs, err := subs.RecipientsByID(ctx, tx, ids)
			if err != nil {
				return err
			}
			var skipped int64
			for _, r := range rs {
				vars := map[string]string{"username": r.Username, "plan": r.Plan, "balance": r.Balance.String(), "expiration": ""}
				if !r.Expiration.IsZero() {
					vars["expiration"] = app.FormatTime(r.Expiration.Time)
				}
				for _, ch := range a.Channels {
					m := outbox.Message{Channel: ch, UserID: r.ID, Vars: vars, Subject: a.Title, Body: a.Body, Cause: cause(id)}
					switch ch {
					case outbox.ChannelEmail:
						m.To = r.Email
					case outbox.ChannelSMS:
						m.To = r.Phone
						m.Subject = ""
					}
					if ch != outbox.ChannelInbox && m.To == "" {
						skipped++
						continue
					}
					if _, err := outbox.Enqueue(ctx, tx, t, m); err != nil {
						var ae *app.Error
						if errors.As(err, &ae) && ae.Status == 400 {
							skipped++ // an address the outbox cannot use (not E.164, malformed email)
							continue
						}
						return err
					}
				}
			}
			res.Processed += int64(len(ids))
			res.Skipped += skipped
			if _, err := tx.ExecContext(ctx, `UPDATE announcements SET state = 'sending', cursor = ?, processed = processed + ?, skipped = skipped + ? WHERE id = ?`,
				ids[len(ids)-1], len(ids), skipped, id); err != nil {
				return err
			}
			if after != nil {
				return after(ctx, tx, JobAnnounce, id)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(res.Processed, total)
		}
		if done {
			return &res, nil
		}
	}
}

// PortalAnnouncement is an announcement shown on the subscriber portal
// (GET /portal/me) until read (the inbox's mark-read) or expired.
type PortalAnnouncement struct {
	MessageID int64    `json:"message_id"`
	Title     string   `json:"title"`
	Body      string   `json:"body"`
	CreatedAt app.Time `json:"created_at"`
	ExpiresAt app.Time `json:"expires_at"`
}

// ActiveAnnouncements are subscriber userID's unread, unexpired
// announcements, newest first (at most 20).
func ActiveAnnouncements(ctx context.Context, t *app.Tenant, userID int64) ([]PortalAnnouncement, error) {
	rows, err := t.DB.R.QueryContext(ctx, `SELECT m.id, m.subject, m.body, m.created_at, a.expires_at
		FROM outbox_messages m JOIN announcements a ON m.cause = 'announcement:' || a.id
		WHERE m.channel = 'inbox' AND m.user_id = ? AND m.read_at IS NULL AND (a.expires_at IS NULL OR a.expires_at > ?)
		ORDER BY m.id DESC LIMIT 20`, userID, t.NowText())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []PortalAnnouncement{}
	for rows.Next() {
		var p PortalAnnouncement
		if err := rows.Scan(&p.MessageID, &p.Title, &p.Body, &p.CreatedAt, &p.ExpiresAt); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
