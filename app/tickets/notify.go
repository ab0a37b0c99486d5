package tickets

import (
	"context"
	"database/sql"
	"fmt"

	"xr/app"
	"xr/app/outbox"
)

// Notifications go through the tenant outbox (app/outbox), enqueued in the
// transaction of their cause: the requester gets an email on a staff public
// reply (nothing when the ticket has no requester email), the assignee an
// email on a new assignment (nothing when the manager has no email). When
// no SMTP relay is configured the outbox records the message as dead with
// reason smtp_not_configured (and logs it).

// Outbox template keys.
const (
	TemplateReplied  = "ticket.replied"
	TemplateAssigned = "ticket.assigned"
)

var templates = []outbox.Template{
	{Key: TemplateReplied, Subject: "[{ticket_number}] {subject}", Body: "{body}\n\n-- \n{agent}",
		Vars: []string{"ticket_number", "subject", "body", "agent", "requester"}},
	{Key: TemplateAssigned, Subject: "[{ticket_number}] assigned to you: {subject}",
		Body: "Ticket {ticket_number} ({subject}) from {requester} is now assigned to you.",
		Vars: []string{"ticket_number", "subject", "requester"}},
}

func notifyReply(ctx context.Context, tx *sql.Tx, t *app.Tenant, k Ticket, messageID int64, body string) error {
	to := k.Requester.Email
	if to == "" {
		return nil
	}
	var author int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(author_manager_id, 0) FROM ticket_messages WHERE id = ?`, messageID).Scan(&author); err != nil {
		return err
	}
	agent, err := agentName(ctx, tx, author)
	if err != nil {
		return err
	}
	v := vars(k, agent)
	v["body"] = body
	var uid int64
	if k.Requester.UserID != nil {
		uid = *k.Requester.UserID
	}
	_, err = outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelEmail, To: to, UserID: uid, Template: TemplateReplied, Vars: v,
		Cause: fmt.Sprintf("ticket:%d:msg:%d", k.ID, messageID)})
	return skipBadAddress(t, k, err)
}

func notifyAssigned(ctx context.Context, tx *sql.Tx, t *app.Tenant, k Ticket) error {
	if k.AssigneeID == nil {
		return nil
	}
	var email string
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(email, '') FROM managers WHERE id = ?`, *k.AssigneeID).Scan(&email); err != nil {
		return err
	}
	if email == "" {
		return nil
	}
	v := vars(k, "")
	delete(v, "agent")
	_, err := outbox.Enqueue(ctx, tx, t, outbox.Message{Channel: outbox.ChannelEmail, To: email, Template: TemplateAssigned, Vars: v,
		Cause: fmt.Sprintf("ticket:%d:assigned:%d:%s", k.ID, *k.AssigneeID, t.NowText())})
	return skipBadAddress(t, k, err)
}

// skipBadAddress logs (and drops) a notification whose stored address the
// outbox refuses: a reply is not refused because an old address is malformed.
func skipBadAddress(t *app.Tenant, k Ticket, err error) error {
	var ae *app.Error
	if err != nil && asAppErr(err, &ae) && ae.Reason == "invalid_email" {
		t.App.Log.Warn("tickets: notification skipped", "tenant", t.Slug, "ticket", k.ID, "reason", ae.Reason)
		return nil
	}
	return err
}
