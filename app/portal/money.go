package portal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/subs"
)

// RenewInput is POST /portal/renew.
type RenewInput struct {
	RequestID string `json:"request_id"`
}

// Renew activates the caller's current plan, charged to its own balance
// within its debt_limit (409 insufficient_balance beyond it; nothing is
// written then). Idempotent on request_id with the subject of the staff
// activation (users/{id}/activation): the same key from either surface is
// one activation, and a key used on anything else is 409
// activation_request_conflict. A subscriber without plan is 400
// profile_required, a disabled plan 409 profile_disabled.
func Renew(ctx context.Context, act *app.Actor, in RenewInput) (*subs.ActivationResult, error) {
	t, uid := act.Tenant, act.SubscriberID
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	var out subs.ActivationResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		var err error
		// No Input: the key is shared with the staff activation, whose
		// body differs by nature; the subject alone binds it.
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("users/%d/activation", uid),
			ConflictReason: "activation_request_conflict"}, func() (subs.ActivationResult, error) {
			r, err := subs.ApplyActivation(ctx, tx, t, 0, uid, 0, subs.ActivationOptions{Charge: subs.ChargeSubscriber,
				RefType: "portal", RequestID: in.RequestID, Note: "portal renew"})
			if err != nil {
				return subs.ActivationResult{}, err
			}
			return *r, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// RedeemInput is POST /portal/cards/redeem.
type RedeemInput struct {
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
}

// Redeem redeems a card onto the caller (the code is the credential; the
// card's owner need not be the subscriber's manager).
func Redeem(ctx context.Context, act *app.Actor, in RedeemInput) (*cards.RedeemResult, error) {
	t, uid := act.Tenant, act.SubscriberID
	return cards.RedeemForSubscriber(ctx, t, uid, in.Code, in.RequestID)
}

// LedgerEntry is a row of GET /portal/ledger: one balance movement with
// the running balance after it. Staff identities are not shown.
type LedgerEntry struct {
	ID           int64     `json:"id"`
	Kind         string    `json:"kind"`
	Amount       app.Money `json:"amount"`
	BalanceAfter app.Money `json:"balance_after"`
	RefType      string    `json:"ref_type"`
	InvoiceNo    string    `json:"invoice_no"`
	Note         string    `json:"note"`
	CreatedAt    app.Time  `json:"created_at"`
}

var ledgerSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "l.id", "created_at": "l.id", "amount": "l.amount"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"kind": app.FilterString, "created_from": app.FilterTime, "created_to": app.FilterTime},
}

// LedgerSpec is the list spec of GET /portal/ledger (newest first).
func LedgerSpec() app.ListSpec { return ledgerSpec }

// Ledger lists the caller's balance movements.
func Ledger(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[LedgerEntry], error) {
	t, uid := act.Tenant, act.SubscriberID
	from, args := `FROM user_ledger l WHERE l.user_id = ?`, []any{uid}
	if v, ok := lq.Str("kind"); ok {
		from += ` AND l.kind = ?`
		args = append(args, v)
	}
	if v, ok := lq.TimeF("created_from"); ok {
		from += ` AND l.created_at >= ?`
		args = append(args, app.FormatTime(v.Time))
	}
	if v, ok := lq.TimeF("created_to"); ok {
		from += ` AND l.created_at <= ?`
		args = append(args, app.FormatTime(v.Time))
	}
	return app.QueryPage(ctx, t, lq, `l.id, l.kind, l.amount, l.balance_after, l.ref_type, l.invoice_no, l.note, l.created_at`, from, args, "l.id",
		func(rows *sql.Rows) (LedgerEntry, error) {
			var e LedgerEntry
			var amt, after int64
			err := rows.Scan(&e.ID, &e.Kind, &amt, &after, &e.RefType, &e.InvoiceNo, &e.Note, &e.CreatedAt)
			e.Amount, e.BalanceAfter = app.Money(amt), app.Money(after)
			return e, err
		})
}

// Invoice is a row of GET /portal/invoices (user_invoices).
type Invoice struct {
	ID        int64     `json:"id"`
	Number    string    `json:"number"`
	Amount    app.Money `json:"amount"`
	LedgerID  *int64    `json:"ledger_id"`
	CreatedAt app.Time  `json:"created_at"`
}

var invoiceSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "i.id", "created_at": "i.id", "amount": "i.amount"},
	DefaultSort: "id",
}

// InvoiceSpec is the list spec of GET /portal/invoices (newest first).
func InvoiceSpec() app.ListSpec { return invoiceSpec }

func scanInvoice(row interface{ Scan(...any) error }) (Invoice, error) {
	var i Invoice
	var amt int64
	var lid sql.NullInt64
	err := row.Scan(&i.ID, &i.Number, &amt, &lid, &i.CreatedAt)
	i.Amount = app.Money(amt)
	if lid.Valid {
		i.LedgerID = &lid.Int64
	}
	return i, err
}

const invoiceCols = `i.id, i.number, i.amount, i.ledger_id, i.created_at`

// Invoices lists the caller's invoices.
func Invoices(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[Invoice], error) {
	t, uid := act.Tenant, act.SubscriberID
	return app.QueryPage(ctx, t, lq, invoiceCols, `FROM user_invoices i WHERE i.user_id = ?`, []any{uid}, "i.id",
		func(rows *sql.Rows) (Invoice, error) { return scanInvoice(rows) })
}

// GetInvoice reads one of the caller's invoices; another subscriber's is
// the 404 of a missing one.
func GetInvoice(ctx context.Context, act *app.Actor, id int64) (*Invoice, error) {
	t, uid := act.Tenant, act.SubscriberID
	i, err := scanInvoice(t.DB.R.QueryRowContext(ctx, `SELECT `+invoiceCols+` FROM user_invoices i WHERE i.id = ? AND i.user_id = ?`, id, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &i, nil
}

// Plan is a row of GET /portal/profiles.
type Plan struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	Description  string    `json:"description"`
	Price        app.Money `json:"price"`
	DurationDays int64     `json:"duration_days"`
	BytesLimit   int64     `json:"bytes_limit"`   // 0 = unlimited
	SecondsLimit int64     `json:"seconds_limit"` // 0 = unlimited
	RateDownKbps int64     `json:"rate_down_kbps"`
	RateUpKbps   int64     `json:"rate_up_kbps"`
	Current      bool      `json:"current"`
}

// Profiles lists the plans the caller may renew or switch to: enabled
// plans open to every manager or to its own manager's chain (the plans
// the subscriber's manager may assign), plus its current plan when
// enabled. Not paginated.
func Profiles(ctx context.Context, act *app.Actor) ([]Plan, error) {
	t, uid := act.Tenant, act.SubscriberID
	u, err := subs.Read(ctx, t.DB.R, uid)
	if err != nil {
		return nil, err
	}
	parent, pid := u.ParentID, u.ProfileID
	rows, err := t.DB.R.QueryContext(ctx, `SELECT p.id, p.name, p.description, p.price, p.duration_days, p.bytes_limit, p.seconds_limit,
		p.rate_down_kbps, p.rate_up_kbps FROM profiles p WHERE p.enabled = 1 AND (p.all_managers = 1 OR p.id = ? OR p.id IN
		(SELECT pm.profile_id FROM profile_managers pm JOIN manager_tree mt ON mt.ancestor_id = pm.manager_id WHERE mt.descendant_id = ?))
		ORDER BY p.price, p.name`, pid, parent)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Plan{}
	for rows.Next() {
		var p Plan
		var price int64
		if err := rows.Scan(&p.ID, &p.Name, &p.Description, &price, &p.DurationDays, &p.BytesLimit, &p.SecondsLimit, &p.RateDownKbps, &p.RateUpKbps); err != nil {
			return nil, err
		}
		p.Price, p.Current = app.Money(price), pid != 0 && pid == p.ID
		out = append(out, p)
	}
	return out, rows.Err()
}

// Addons are the add-ons the caller's plan may take (what the portal
// offers to buy).
func Addons(ctx context.Context, act *app.Actor) ([]subs.Addon, error) {
	return subs.AddonsForSubscriber(ctx, act.Tenant.DB.R, act.SubscriberID)
}

// InvoiceRenderData is GET /portal/invoices/{id}/render-data: everything a
// client needs to draw or print the invoice itself — the seller (the
// tenant, its branding and currency), the buyer as the invoice names it,
// and the line the invoice bills (its ledger movement).
type InvoiceRenderData struct {
	Invoice  Invoice         `json:"invoice"`
	Seller   InvoiceSeller   `json:"seller"`
	Buyer    InvoiceBuyer    `json:"buyer"`
	Lines    []InvoiceLine   `json:"lines"`
	Total    app.Money       `json:"total"`
	Currency string          `json:"currency"`
	Branding json.RawMessage `json:"branding"` // the tenant's branding object, null when none
}

// InvoiceSeller is who issued an invoice.
type InvoiceSeller struct {
	Name string `json:"name"`
	Slug string `json:"slug"`
}

// InvoiceBuyer is who an invoice is issued to.
type InvoiceBuyer struct {
	Username  string `json:"username"`
	Firstname string `json:"firstname"`
	Lastname  string `json:"lastname"`
	Email     string `json:"email"`
	Phone     string `json:"phone"`
}

// InvoiceLine is one billed line.
type InvoiceLine struct {
	Description string    `json:"description"` // the movement's kind
	Note        string    `json:"note"`
	Amount      app.Money `json:"amount"`
	At          app.Time  `json:"at"`
}

// GetInvoiceRenderData reads one of the caller's invoices with what is
// needed to render it; another subscriber's is the 404 of a missing one.
func GetInvoiceRenderData(ctx context.Context, act *app.Actor, id int64) (*InvoiceRenderData, error) {
	t, uid := act.Tenant, act.SubscriberID
	inv, err := GetInvoice(ctx, act, id)
	if err != nil {
		return nil, err
	}
	out := &InvoiceRenderData{Invoice: *inv, Seller: InvoiceSeller{Name: t.Name, Slug: t.Slug}, Lines: []InvoiceLine{}, Total: inv.Amount}
	err = t.Read(ctx, func(tx *sql.Tx) error {
		s, err := readSelf(ctx, tx, t.Now(), uid)
		if err != nil {
			return err
		}
		out.Buyer = InvoiceBuyer{Username: s.Username, Firstname: s.Firstname, Lastname: s.Lastname, Email: s.Email, Phone: s.Phone}
		if out.Currency, err = app.SettingCurrency.Get(ctx, tx); err != nil {
			return err
		}
		if out.Branding, err = identity.SettingBranding.Get(ctx, tx); err != nil {
			return err
		}
		line := InvoiceLine{Description: "invoice", Amount: inv.Amount, At: inv.CreatedAt}
		if inv.LedgerID != nil {
			err := tx.QueryRowContext(ctx, `SELECT kind, note, created_at FROM user_ledger WHERE id = ? AND user_id = ?`, *inv.LedgerID, uid).
				Scan(&line.Description, &line.Note, &line.At)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		out.Lines = append(out.Lines, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
