package tickets

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/files"
	"xr/app/subs"
)

// ---- Attachments (staff and portal) ----

func attachPolicy(ctx context.Context, t *app.Tenant) (files.Policy, error) {
	max, err := SettingTicketsAttachmentMax.Get(ctx, t.DB.R)
	if err != nil {
		return files.Policy{}, err
	}
	return files.Policy{MaxBytes: max, Allow: allowTypes}, nil
}

// allowTypes are the attachment types accepted: images, PDF, plain text.
var allowTypes = files.DefaultAllow

// storeAttachment stages body, then records it on ticket id in one write
// (check re-reads the ticket in the transaction). Nothing is stored when
// any step refuses.
func storeAttachment(ctx context.Context, t *app.Tenant, name string, body io.Reader, check func(tx *sql.Tx) error,
	mgr, uid *int64, internal bool, ticketID int64) (*Attachment, error) {
	pol, err := attachPolicy(ctx, t)
	if err != nil {
		return nil, err
	}
	st, err := files.Stage(t, name, body, pol)
	if err != nil {
		return nil, err
	}
	defer st.Discard()
	var out []Attachment
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		f, err := st.Insert(ctx, tx, "tickets")
		if err != nil {
			return err
		}
		r, err := tx.ExecContext(ctx, `INSERT INTO ticket_attachments(ticket_id, file_id, internal, uploaded_by_manager_id, uploaded_by_user_id, created_at)
			VALUES (?,?,?,?,?,?)`, ticketID, f.ID, internal, mgr, uid, t.NowText())
		if err != nil {
			return err
		}
		aid, _ := r.LastInsertId()
		if _, err := tx.ExecContext(ctx, `UPDATE tickets SET updated_at = ? WHERE id = ?`, t.NowText(), ticketID); err != nil {
			return err
		}
		out, err = loadAttachments(ctx, tx, `a.id = ?`, aid)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.Keep()
	return &out[0], nil
}

func notClosed(k Ticket) error {
	if k.State == StateClosed {
		return app.ErrConflict("ticket_closed")
	}
	return nil
}

// Attach stores a file on a ticket as staff (internal: hidden from the
// subscriber). Link it to a message with the reply's attachment_ids.
func Attach(ctx context.Context, act *app.Actor, id int64, name string, body io.Reader, internal bool) (*Attachment, error) {
	if err := act.Require(PermTicketsReply); err != nil {
		return nil, err
	}
	k, err := loadTicket(ctx, act.Tenant.DB.R, act, id)
	if err != nil {
		return nil, err
	}
	if err := notClosed(k); err != nil {
		return nil, err
	}
	check := func(tx *sql.Tx) error {
		k, err := loadTicket(ctx, tx, act, id)
		if err != nil {
			return err
		}
		return notClosed(k)
	}
	return storeAttachment(ctx, act.Tenant, name, body, check, &act.ManagerID, nil, internal, id)
}

func oneAttachment(ctx context.Context, q app.Querier, id, attID int64, public bool) (*Attachment, error) {
	where := `a.id = ? AND a.ticket_id = ?`
	if public {
		where += ` AND a.internal = 0`
	}
	list, err := loadAttachments(ctx, q, where, attID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, app.ErrNotFound()
	}
	return &list[0], nil
}

// GetAttachment returns the stored file of an attachment of a ticket in act's scope.
func GetAttachment(ctx context.Context, act *app.Actor, id, attID int64) (*files.File, error) {
	if err := act.Require(PermTicketsView); err != nil {
		return nil, err
	}
	var f *files.File
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadTicket(ctx, tx, act, id); err != nil {
			return err
		}
		a, err := oneAttachment(ctx, tx, id, attID, false)
		if err != nil {
			return err
		}
		f, err = files.Get(ctx, tx, a.fileID)
		return err
	})
	return f, err
}

// deleteAttachment removes an attachment row and its file row in one
// write, then the bytes once committed.
func deleteAttachment(ctx context.Context, t *app.Tenant, check func(tx *sql.Tx) (*Attachment, error)) error {
	var rel string
	err := t.Write(ctx, func(tx *sql.Tx) error {
		a, err := check(tx)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM ticket_attachments WHERE id = ?`, a.ID); err != nil {
			return err
		}
		rel, err = files.DeleteRow(ctx, tx, a.fileID)
		return err
	})
	if err != nil {
		return err
	}
	files.Remove(t, rel)
	return nil
}

// DeleteAttachment removes an attachment of a ticket in act's scope.
func DeleteAttachment(ctx context.Context, act *app.Actor, id, attID int64) error {
	if err := act.Require(PermTicketsReply); err != nil {
		return err
	}
	return deleteAttachment(ctx, act.Tenant, func(tx *sql.Tx) (*Attachment, error) {
		if _, err := loadTicket(ctx, tx, act, id); err != nil {
			return nil, err
		}
		return oneAttachment(ctx, tx, id, attID, false)
	})
}

// ---- The subscriber portal ----
//
// A subscriber sees only the tickets it requested, never internal notes
// or internal attachments; anything else answers 404.

// PortalTicket is a ticket as its requester sees it (no tags, team or spam mark).
type PortalTicket struct {
	ID            int64           `json:"id"`
	Number        string          `json:"number"`
	Subject       string          `json:"subject"`
	CategoryID    *int64          `json:"category_id"`
	CategoryName  string          `json:"category_name"`
	Priority      string          `json:"priority"`
	State         string          `json:"state"`
	AssigneeName  string          `json:"assignee_name"`
	CustomFields  json.RawMessage `json:"custom_fields"`
	LastMessageAt app.Time        `json:"last_message_at"`
	MessageCount  int             `json:"message_count"`
	CreatedAt     app.Time        `json:"created_at"`
	UpdatedAt     app.Time        `json:"updated_at"`
}

// PortalDetail is a ticket with its public conversation.
type PortalDetail struct {
	PortalTicket
	Messages    []Message    `json:"messages"`
	Attachments []Attachment `json:"attachments"`
}

func portalView(k Ticket) PortalTicket {
	return PortalTicket{ID: k.ID, Number: k.Number, Subject: k.Subject, CategoryID: k.CategoryID, CategoryName: k.CategoryName,
		Priority: k.Priority, State: k.State, AssigneeName: k.AssigneeName, CustomFields: k.CustomFields,
		LastMessageAt: k.LastMessageAt, MessageCount: k.MessageCount, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
}

var portalSpec = app.ListSpec{
	Sorts:       map[string]string{"updated_at": "t.updated_at", "created_at": "t.created_at", "id": "t.id"},
	DefaultSort: "updated_at",
	Filters:     map[string]app.FilterKind{"state": app.FilterString},
	Aliases:     []string{"state"},
}

// PortalSpec is the portal list's sorts and filters.
func PortalSpec() app.ListSpec { return portalSpec }

// PortalList lists the subscriber's tickets (q: number or subject).
func PortalList(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[PortalTicket], error) {
	t, uid := act.Tenant, act.SubscriberID
	where := []string{"t.requester_user_id = ?"}
	args := []any{uid}
	if s, ok := lq.Str("state"); ok {
		c, a, err := inList("t.state", s, States, "filter[state]")
		if err != nil {
			return app.Page[PortalTicket]{}, err
		}
		where, args = append(where, c), append(args, a...)
	}
	if lq.Q != "" {
		cond := `(t.subject LIKE ? ESCAPE '\'`
		args = append(args, "%"+app.LikeEscape(lq.Q)+"%")
		if m := numberRe.FindStringSubmatch(lq.Q); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			cond += ` OR t.id = ?`
			args = append(args, n)
		}
		where = append(where, cond+")")
	}
	return app.QueryPage(ctx, t, lq, ticketCols, ticketFrom+" WHERE "+strings.Join(where, " AND "), args, "t.id",
		func(rows *sql.Rows) (PortalTicket, error) {
			k, err := scanTicket(rows, t.Now())
			return portalView(k), err
		})
}

// PortalGet reads one of the subscriber's tickets with its public messages.
func PortalGet(ctx context.Context, act *app.Actor, id int64) (*PortalDetail, error) {
	t, uid := act.Tenant, act.SubscriberID
	var d PortalDetail
	err := t.Read(ctx, func(tx *sql.Tx) error {
		k, err := loadOwnTicket(ctx, tx, t.Now(), uid, id)
		if err != nil {
			return err
		}
		d.PortalTicket = portalView(k)
		d.Messages, d.Attachments, err = loadMessages(ctx, tx, id, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// PortalForm is the portal's new-ticket form (categories offered on the portal).
func PortalForm(ctx context.Context, act *app.Actor) (*Form, error) {
	t := act.Tenant
	return buildForm(ctx, t, true)
}

// PortalCreateInput opens a ticket from the portal.
type PortalCreateInput struct {
	Subject      string                     `json:"subject"`
	Body         string                     `json:"body"`
	CategoryID   *int64                     `json:"category_id"`
	Priority     Priority                   `json:"priority"`
	CustomFields map[string]json.RawMessage `json:"custom_fields"`
}

// PortalCreate opens a ticket as the subscriber (refused with 403
// requester_blocked when the blocklist says so).
func PortalCreate(ctx context.Context, act *app.Actor, in PortalCreateInput) (*PortalDetail, error) {
	t, uid := act.Tenant, act.SubscriberID
	subject, err := checkText(in.Subject, in.Body)
	if err != nil {
		return nil, err
	}
	if in.Priority == "" {
		in.Priority = "normal"
	}
	var id int64
	err = t.Write(ctx, func(tx *sql.Tx) error {
		u, err := subs.Read(ctx, tx, uid)
		if err != nil {
			return err
		}
		email, first, last := u.Email, u.FirstName, u.LastName
		k, err := insertTicket(ctx, tx, t, newTicket{subject: subject, body: in.Body, priority: string(in.Priority),
			email: strings.ToLower(email), name: strings.TrimSpace(first + " " + last), channel: "portal", categoryID: in.CategoryID,
			requesterUID: &uid, userID: &uid, tags: []string{}, custom: in.CustomFields, portal: true})
		id = k.ID
		return err
	})
	if err != nil {
		return nil, err
	}
	return PortalGet(ctx, act, id)
}

// PortalReplyInput is a subscriber's reply.
type PortalReplyInput struct {
	Body          string  `json:"body"`
	AttachmentIDs []int64 `json:"attachment_ids"`
}

// PortalReply adds the subscriber's reply (a resolved ticket reopens; a
// closed one is 409 ticket_closed).
func PortalReply(ctx context.Context, act *app.Actor, id int64, in PortalReplyInput) (*PortalDetail, error) {
	t, uid := act.Tenant, act.SubscriberID
	if strings.TrimSpace(in.Body) == "" {
		return nil, app.ErrValidation("body_required", "body")
	}
	if len(in.Body) > maxBody {
		return nil, app.ErrValidation("too_long", "body")
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		k, err := loadOwnTicket(ctx, tx, t.Now(), uid, id)
		if err != nil {
			return err
		}
		_, err = addMessage(ctx, tx, t, &k, false, nil, &uid, in.Body, in.AttachmentIDs)
		return err
	})
	if err != nil {
		return nil, err
	}
	return PortalGet(ctx, act, id)
}

// PortalAttach stores a file on one of the subscriber's tickets.
func PortalAttach(ctx context.Context, act *app.Actor, id int64, name string, body io.Reader) (*Attachment, error) {
	t, uid := act.Tenant, act.SubscriberID
	k, err := loadOwnTicket(ctx, t.DB.R, t.Now(), uid, id)
	if err != nil {
		return nil, err
	}
	if err := notClosed(k); err != nil {
		return nil, err
	}
	check := func(tx *sql.Tx) error {
		k, err := loadOwnTicket(ctx, tx, t.Now(), uid, id)
		if err != nil {
			return err
		}
		return notClosed(k)
	}
	return storeAttachment(ctx, t, name, body, check, nil, &uid, false, id)
}

// PortalAttachment returns the file of a public attachment of one of the
// subscriber's tickets (404 for anything else).
func PortalAttachment(ctx context.Context, act *app.Actor, id, attID int64) (*files.File, error) {
	t, uid := act.Tenant, act.SubscriberID
	var f *files.File
	err := t.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadOwnTicket(ctx, tx, t.Now(), uid, id); err != nil {
			return err
		}
		a, err := oneAttachment(ctx, tx, id, attID, true)
		if err != nil {
			return err
		}
		f, err = files.Get(ctx, tx, a.fileID)
		return err
	})
	return f, err
}

// PortalDeleteAttachment removes an attachment the subscriber uploaded
// (403 attachment_not_yours for staff's files).
func PortalDeleteAttachment(ctx context.Context, act *app.Actor, id, attID int64) error {
	t, uid := act.Tenant, act.SubscriberID
	return deleteAttachment(ctx, t, func(tx *sql.Tx) (*Attachment, error) {
		k, err := loadOwnTicket(ctx, tx, t.Now(), uid, id)
		if err != nil {
			return nil, err
		}
		a, err := oneAttachment(ctx, tx, id, attID, true)
		if err != nil {
			return nil, err
		}
		if a.UploadedBy.Kind != "subscriber" || a.UploadedBy.ID != uid {
			return nil, app.ErrForbidden("attachment_not_yours")
		}
		return a, notClosed(k)
	})
}
