package subs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"xr/app"
	"xr/app/identity"
)

// Money operations on one subscriber. Each takes a request_id (required,
// the spec's key rules), runs in one transaction with its idempotency
// record, and answers replay=true with the stored outcome when the key is
// reused on the same subject. A refusal stores nothing, so a retry with the
// same key is evaluated again.

// DepositInput is POST /users/{id}/deposit.
type DepositInput struct {
	Amount       *app.Money `json:"amount"`
	RequestID    string     `json:"request_id"`
	IssueInvoice bool       `json:"issue_invoice"` // default: no invoice on subscriber deposit
	Note         string     `json:"note"`
}

// WithdrawInput is POST /users/{id}/withdraw: cash paid out of the
// subscriber's balance, never below zero.
type WithdrawInput struct {
	Amount    *app.Money `json:"amount"`
	RequestID string     `json:"request_id"`
	Note      string     `json:"note"`
}

// PayDebtInput is POST /users/{id}/pay-debt: a payment against a negative
// balance; amount defaults to the whole debt and may not exceed it.
type PayDebtInput struct {
	Amount       *app.Money `json:"amount"`
	RequestID    string     `json:"request_id"`
	IssueInvoice bool       `json:"issue_invoice"`
	Note         string     `json:"note"`
}

// MoneyResult is the outcome of a balance operation.
type MoneyResult struct {
	UserID    int64     `json:"user_id"`
	Kind      string    `json:"kind"`
	Amount    app.Money `json:"amount"` // signed movement
	Balance   app.Money `json:"balance"`
	Debt      app.Money `json:"debt"`
	LedgerID  int64     `json:"ledger_id"`
	InvoiceNo string    `json:"invoice_no,omitempty"`
	CreatedAt app.Time  `json:"created_at"`
	Replay    bool      `json:"replay"`
}

func positive(a *app.Money) error {
	if a == nil {
		return app.ErrValidation("amount_required", "amount")
	}
	if *a <= 0 {
		return app.ErrValidation("amount_must_be_positive", "amount")
	}
	return nil
}

func checkNote(n string) error {
	if len(n) > 500 {
		return app.ErrValidation("too_long", "note")
	}
	return nil
}

// idemOp runs effect once per (key, subject) for subscriber id in one
// transaction: the subscriber is loaded and scope-checked first (a key
// never reveals a record outside the scope), then the key is looked up.
func idemOp[T any](ctx context.Context, act *app.Actor, id int64, key, op, conflict string, input any, effect func(tx *sql.Tx, u *urow) (T, error)) (T, bool, error) {
	var out T
	var replay bool
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		u, err := loadUser(ctx, tx, act, id)
		if err != nil {
			return err
		}
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: key, Subject: fmt.Sprintf("users/%d/%s", id, op), Input: input, ConflictReason: conflict},
			func() (T, error) {
				if err := u.live(); err != nil {
					var zero T
					return zero, err
				}
				return effect(tx, u)
			})
		return err
	})
	return out, replay, err
}

// issueInvoice numbers and records an invoice for a ledger row.
func issueInvoice(ctx context.Context, tx *sql.Tx, now time.Time, userID int64, amount app.Money, ledgerID, actorID int64) (string, error) {
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM user_invoices`).Scan(&n); err != nil {
		return "", err
	}
	no := fmt.Sprintf("U-%s-%06d", now.Format("2006"), n)
	_, err := tx.ExecContext(ctx, `INSERT INTO user_invoices(user_id, number, amount, ledger_id, actor_id, created_at) VALUES (?,?,?,?,?,?)`,
		userID, no, int64(amount), ledgerID, nullID(actorID), app.FormatTime(now))
	return no, err
}

func moneyResult(now time.Time, userID int64, kind string, amount, bal app.Money, ledgerID int64) MoneyResult {
	r := MoneyResult{UserID: userID, Kind: kind, Amount: amount, Balance: bal, Debt: debtOf(int64(bal)), LedgerID: ledgerID}
	r.CreatedAt = app.T(now)
	return r
}

// credit is deposit and pay-debt: a credit with an optional invoice and
// the payment.deposit event.
func credit(ctx context.Context, tx *sql.Tx, act *app.Actor, u *urow, kind string, amount app.Money, key, note string, invoice bool) (MoneyResult, error) {
	bal, lid, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: amount, Kind: kind, ActorID: act.ManagerID,
		RequestID: key, Note: note})
	if err != nil {
		return MoneyResult{}, err
	}
	res := moneyResult(act.Tenant.Now(), u.ID, kind, amount, bal, lid)
	if invoice {
		if res.InvoiceNo, err = issueInvoice(ctx, tx, act.Tenant.Now(), u.ID, amount, lid, act.ManagerID); err != nil {
			return res, err
		}
	}
	err = app.Emit(ctx, tx, "payment.deposit", map[string]any{"user_id": u.ID, "username": u.Username, "kind": kind,
		"amount": amount, "balance": bal, "ledger_id": lid})
	return res, err
}

// Deposit is POST /users/{id}/deposit: credits the balance.
func Deposit(ctx context.Context, act *app.Actor, id int64, in DepositInput) (*MoneyResult, error) {
	if err := act.Require(PermUsersDeposit); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if err := positive(in.Amount); err != nil {
		return nil, err
	}
	if err := checkNote(in.Note); err != nil {
		return nil, err
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "deposit", "", in, func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		return credit(ctx, tx, act, u, "deposit", *in.Amount, in.RequestID, in.Note, in.IssueInvoice)
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// PayDebt is POST /users/{id}/pay-debt: 409 no_debt without a negative
// balance; 400 amount_exceeds_debt beyond it.
func PayDebt(ctx context.Context, act *app.Actor, id int64, in PayDebtInput) (*MoneyResult, error) {
	if err := act.Require(PermUsersDeposit); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.Amount != nil && *in.Amount <= 0 {
		return nil, app.ErrValidation("amount_must_be_positive", "amount")
	}
	if err := checkNote(in.Note); err != nil {
		return nil, err
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "pay-debt", "", in, func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		if u.Balance >= 0 {
			return MoneyResult{}, app.ErrConflict("no_debt")
		}
		debt := app.Money(-u.Balance)
		amount := debt
		if in.Amount != nil {
			if *in.Amount > debt {
				return MoneyResult{}, app.ErrValidation("amount_exceeds_debt", "amount").With("debt", debt)
			}
			amount = *in.Amount
		}
		return credit(ctx, tx, act, u, "pay_debt", amount, in.RequestID, in.Note, in.IssueInvoice)
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// Withdraw is POST /users/{id}/withdraw: 409 insufficient_balance beyond
// the balance.
func Withdraw(ctx context.Context, act *app.Actor, id int64, in WithdrawInput) (*MoneyResult, error) {
	if err := act.Require(PermUsersWithdrawal); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if err := positive(in.Amount); err != nil {
		return nil, err
	}
	if err := checkNote(in.Note); err != nil {
		return nil, err
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "withdraw", "", in, func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		return withdraw(ctx, tx, act, u, *in.Amount, "withdraw", in.RequestID, in.Note)
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

func withdraw(ctx context.Context, tx *sql.Tx, act *app.Actor, u *urow, amount app.Money, kind, key, note string) (MoneyResult, error) {
	bal, lid, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: -amount, Kind: kind, ActorID: act.ManagerID,
		RequestID: key, Note: note, NoOverdraw: true})
	if err != nil {
		return MoneyResult{}, err
	}
	res := moneyResult(act.Tenant.Now(), u.ID, kind, -amount, bal, lid)
	err = app.Emit(ctx, tx, "payment.withdraw", map[string]any{"user_id": u.ID, "username": u.Username, "kind": kind,
		"amount": amount, "balance": bal, "ledger_id": lid})
	return res, err
}

// ActivationInput is POST /users/{id}/activation.
type ActivationInput struct {
	ProfileID *int64 `json:"profile_id"` // default the bound plan; another one must be assignable (prm_users_change_profile)
	RequestID string `json:"request_id"`
	Note      string `json:"note"`
}

// Activate is POST /users/{id}/activation: charges the plan's price (the
// subscriber's balance within its debt_limit, or the acting reseller's
// wallet when the tenant's activation_payer is "reseller"), extends the
// expiration by the plan's duration from max(now, expiration) and resets
// the quota. A key used elsewhere is 409 activation_request_conflict.
func Activate(ctx context.Context, act *app.Actor, id int64, in ActivationInput) (*ActivationResult, error) {
	if err := act.Require(PermUsersActivate); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if err := checkNote(in.Note); err != nil {
		return nil, err
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "activation", "activation_request_conflict", in, func(tx *sql.Tx, u *urow) (ActivationResult, error) {
		var pid int64
		if in.ProfileID != nil {
			pid = *in.ProfileID
			if !u.ProfileID.Valid || u.ProfileID.Int64 != pid {
				if !act.Can(PermUsersChangeProfile) {
					return ActivationResult{}, app.ErrForbidden("")
				}
				if err := requireAssignable(ctx, tx, act, pid); err != nil {
					return ActivationResult{}, err
				}
			}
		}
		r, err := ApplyActivation(ctx, tx, act.Tenant, act.ManagerID, u.ID, pid, ActivationOptions{Charge: ChargeAuto,
			RequestID: in.RequestID, Note: in.Note})
		if err != nil {
			return ActivationResult{}, err
		}
		return *r, nil
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// RefundInput is POST /users/{id}/refund-activation.
type RefundInput struct {
	RequestID string `json:"request_id"`
	Note      string `json:"note"`
}

// RefundResult is the outcome of a refund.
type RefundResult struct {
	UserID         int64     `json:"user_id"`
	ActivationID   int64     `json:"activation_id"`
	Refunded       app.Money `json:"refunded"`
	RefundedTo     string    `json:"refunded_to"` // subscriber, reseller, none
	PayerManagerID *int64    `json:"payer_manager_id"`
	Expiration     app.Time  `json:"expiration"`
	ProfileID      *int64    `json:"profile_id"`
	Balance        app.Money `json:"balance"`
	Debt           app.Money `json:"debt"`
	Replay         bool      `json:"replay"`
}

// RefundActivation reverses the subscriber's last activation: its money
// goes back to whoever paid it, the time it added is taken off the
// expiration, and the plan and quota limits it replaced come back (usage
// since is kept and added to the usage it had reset). 409 no_activation
// when there is none, activation_already_refunded when the last one was.
func RefundActivation(ctx context.Context, act *app.Actor, id int64, in RefundInput) (*RefundResult, error) {
	if err := act.Require(PermUsersRefund); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if err := checkNote(in.Note); err != nil {
		return nil, err
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "refund-activation", "", in, func(tx *sql.Tx, u *urow) (RefundResult, error) {
		var last int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM user_activations WHERE user_id = ? ORDER BY id DESC LIMIT 1`, u.ID).Scan(&last)
		if err == sql.ErrNoRows {
			return RefundResult{}, app.ErrConflict("no_activation")
		}
		if err != nil {
			return RefundResult{}, err
		}
		r, err := RevertActivation(ctx, tx, act.ManagerID, u.ID, last, in.RequestID, in.Note)
		if err != nil {
			return RefundResult{}, err
		}
		return *r, nil
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// AddonPurchaseInput is POST /users/{id}/addons.
type AddonPurchaseInput struct {
	AddonID   int64  `json:"addon_id"`
	Quantity  int64  `json:"quantity"` // default 1
	RequestID string `json:"request_id"`
}

// AddonPurchaseResult is the outcome of an add-on purchase.
type AddonPurchaseResult struct {
	PurchaseID   int64     `json:"purchase_id"`
	UserID       int64     `json:"user_id"`
	AddonID      int64     `json:"addon_id"`
	Kind         string    `json:"kind"`
	Quantity     int64     `json:"quantity"`
	Price        app.Money `json:"price"`
	PaidBy       string    `json:"paid_by"`
	BytesLimit   int64     `json:"bytes_limit"`
	SecondsLimit int64     `json:"seconds_limit"`
	Expiration   app.Time  `json:"expiration"`
	Balance      app.Money `json:"balance"`
	Debt         app.Money `json:"debt"`
	Replay       bool      `json:"replay"`
}

// BuyAddon is POST /users/{id}/addons: charges the add-on's price like an
// activation (same payer rule) and adds its data, days or time to the
// current period. 409 addon_not_allowed when the subscriber's plan may not
// take it (or it is disabled); 409 quota_unlimited for data/time on a
// period without that limit.
func BuyAddon(ctx context.Context, act *app.Actor, id int64, in AddonPurchaseInput) (*AddonPurchaseResult, error) {
	if err := act.Require(PermUsersAddon); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.AddonID <= 0 {
		return nil, app.ErrValidation("addon_id_required", "addon_id")
	}
	if in.Quantity == 0 {
		in.Quantity = 1
	}
	if in.Quantity < 0 || in.Quantity > 1000 {
		return nil, app.ErrValidation("out_of_range", "quantity")
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "addons", "", in, func(tx *sql.Tx, u *urow) (AddonPurchaseResult, error) {
		return applyAddon(ctx, tx, act.Tenant, u, act.ManagerID, in.AddonID, in.Quantity, ChargeAuto, in.RequestID)
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// RedeemPointsInput is POST /users/{id}/redeem-points.
type RedeemPointsInput struct {
	Points    int64  `json:"points"`
	RequestID string `json:"request_id"`
}

// PointsResult is the outcome of a points redemption.
type PointsResult struct {
	UserID        int64     `json:"user_id"`
	Points        int64     `json:"points"`
	PointsBalance int64     `json:"points_balance"`
	Credited      app.Money `json:"credited"`
	Balance       app.Money `json:"balance"`
	Debt          app.Money `json:"debt"`
	LedgerID      int64     `json:"ledger_id"`
	Replay        bool      `json:"replay"`
}

// RedeemPoints is POST /users/{id}/redeem-points: turns reward points into
// balance at the tenant setting points_value (major units per point;
// 409 points_redemption_disabled when unset). Points are earned per
// activation (setting points_per_activation).
func RedeemPoints(ctx context.Context, act *app.Actor, id int64, in RedeemPointsInput) (*PointsResult, error) {
	if err := act.Require(PermUsersPoints); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.Points <= 0 {
		return nil, app.ErrValidation("points_must_be_positive", "points")
	}
	if in.Points > 1_000_000_000 {
		return nil, app.ErrValidation("out_of_range", "points")
	}
	out, replay, err := idemOp(ctx, act, id, in.RequestID, "redeem-points", "", in, func(tx *sql.Tx, u *urow) (PointsResult, error) {
		value, err := SettingPointsValue.Get(ctx, tx)
		if err != nil {
			return PointsResult{}, err
		}
		if value <= 0 {
			return PointsResult{}, app.ErrConflict("points_redemption_disabled")
		}
		if u.Points < in.Points {
			return PointsResult{}, app.ErrConflict("insufficient_points").With("points_balance", u.Points)
		}
		amount, err := value.Mul(in.Points)
		if err != nil {
			return PointsResult{}, app.ErrAmountOutOfRange("points")
		}
		bal, lid, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: amount, Kind: "points_redeem", ActorID: act.ManagerID,
			RequestID: in.RequestID, Note: fmt.Sprintf("%d points", in.Points)})
		if err != nil {
			return PointsResult{}, err
		}
		left, err := addPoints(ctx, tx, u.ID, -in.Points, "redeem", act.ManagerID, lid)
		if err != nil {
			return PointsResult{}, err
		}
		return PointsResult{UserID: u.ID, Points: in.Points, PointsBalance: left, Credited: amount, Balance: bal, Debt: debtOf(int64(bal)), LedgerID: lid}, nil
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

// LedgerEntry is a row of GET /users/{id}/ledger.
type LedgerEntry struct {
	ID           int64     `json:"id"`
	UserID       int64     `json:"user_id"`
	Kind         string    `json:"kind"`
	Amount       app.Money `json:"amount"`
	BalanceAfter app.Money `json:"balance_after"`
	ActorID      *int64    `json:"actor_id"`
	RefType      string    `json:"ref_type"`
	RefID        *int64    `json:"ref_id"`
	RequestID    *string   `json:"request_id"`
	InvoiceNo    string    `json:"invoice_no"`
	Note         string    `json:"note"`
	CreatedAt    app.Time  `json:"created_at"`
}

var ledgerListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "l.id", "created_at": "l.id", "amount": "l.amount"},
	DefaultSort: "id",
	Filters:     map[string]app.FilterKind{"kind": app.FilterString, "created_from": app.FilterTime, "created_to": app.FilterTime},
}

// LedgerListSpec is the list spec of GET /users/{id}/ledger: newest first
// by default; filter[kind], filter[created_from], filter[created_to].
func LedgerListSpec() app.ListSpec { return ledgerListSpec }

// Ledger lists a subscriber's balance movements with running balance.
func Ledger(ctx context.Context, act *app.Actor, id int64, lq app.ListQuery) (app.Page[LedgerEntry], error) {
	if err := act.Require(PermUsersIndex); err != nil {
		return app.Page[LedgerEntry]{}, err
	}
	var page app.Page[LedgerEntry]
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		if _, err := loadUser(ctx, tx, act, id); err != nil {
			return err
		}
		cond, args := "l.user_id = ?", []any{id}
		if v, ok := lq.Str("kind"); ok {
			cond += " AND l.kind = ?"
			args = append(args, v)
		}
		if v, ok := lq.TimeF("created_from"); ok {
			cond += " AND l.created_at >= ?"
			args = append(args, app.FormatTime(v.Time))
		}
		if v, ok := lq.TimeF("created_to"); ok {
			cond += " AND l.created_at <= ?"
			args = append(args, app.FormatTime(v.Time))
		}
		var total int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM user_ledger l WHERE `+cond, args...).Scan(&total); err != nil {
			return err
		}
		page.Meta = lq.MetaFor(total)
		page.Rows = []LedgerEntry{}
		rows, err := tx.QueryContext(ctx, `SELECT l.id, l.user_id, l.kind, l.amount, l.balance_after, l.actor_id, l.ref_type, l.ref_id, l.request_id,
			l.invoice_no, l.note, l.created_at FROM user_ledger l WHERE `+cond+lq.OrderLimit("l.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e LedgerEntry
			var amt, after int64
			var actor, ref sql.NullInt64
			var rid sql.NullString
			if err := rows.Scan(&e.ID, &e.UserID, &e.Kind, &amt, &after, &actor, &e.RefType, &ref, &rid, &e.InvoiceNo, &e.Note, &e.CreatedAt); err != nil {
				return err
			}
			e.Amount, e.BalanceAfter, e.ActorID, e.RefID = app.Money(amt), app.Money(after), ptrOf(actor), ptrOf(ref)
			if rid.Valid {
				e.RequestID = &rid.String
			}
			page.Rows = append(page.Rows, e)
		}
		return rows.Err()
	})
	return page, err
}

// ApplyAddon buys add-on addonID (qty) for userID in tx, charging as c says
// (ChargeSubscriber: its balance; ChargeAuto: the payer rule for actorID),
// and adds its data, days or time to the current period — the effect of
// POST /users/{id}/addons, for other areas' transactions (an online
// payment, a till sale).
func ApplyAddon(ctx context.Context, tx *sql.Tx, t *app.Tenant, actorID, userID, addonID, qty int64, c Charge, requestID string) (*AddonPurchaseResult, error) {
	u, err := readURow(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	if err := u.live(); err != nil {
		return nil, err
	}
	r, err := applyAddon(ctx, tx, t, u, actorID, addonID, qty, c, requestID)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func applyAddon(ctx context.Context, tx *sql.Tx, t *app.Tenant, u *urow, actorID, addonID, qty int64, c Charge, requestID string) (AddonPurchaseResult, error) {
	var res AddonPurchaseResult
	a, err := getAddon(ctx, tx, addonID)
	if err != nil {
		if app.AsError(err) != nil && app.AsError(err).Code == app.CodeNotFound {
			return res, app.ErrValidation("addon_not_found", "addon_id")
		}
		return res, err
	}
	allowed := a.Enabled && a.AllProfiles
	if a.Enabled && !a.AllProfiles && u.ProfileID.Valid {
		for _, p := range a.ProfileIDs {
			allowed = allowed || p == u.ProfileID.Int64
		}
	}
	if !allowed {
		return res, app.ErrConflict("addon_not_allowed")
	}
	price, err := app.Money(a.Price).Mul(qty)
	if err != nil {
		return res, app.ErrAmountOutOfRange("quantity")
	}
	payKind, payMgr, err := payer(ctx, tx, c, actorID, 0)
	if err != nil {
		return res, err
	}
	if price == 0 {
		payKind, payMgr = "none", 0
	}
	now := nowText()
	r, err := tx.ExecContext(ctx, `INSERT INTO user_addons(user_id, addon_id, quantity, price, payer, actor_id, created_at) VALUES (?,?,?,?,?,?,?)`,
		u.ID, a.ID, qty, int64(price), payKind, actorID, now)
	if err != nil {
		return res, err
	}
	pid, _ := r.LastInsertId()
	lid, jid, err := charge(ctx, tx, payKind, payMgr, u.ID, price, "addon", actorID, "user_addon", pid, requestID, a.Name)
	if err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE user_addons SET ledger_id = ?, journal_id = ? WHERE id = ?`, nullID(lid), nullID(jid), pid); err != nil {
		return res, err
	}
	amount := a.Amount * qty
	switch a.Kind {
	case "data":
		if u.BytesLimit <= 0 {
			return res, app.ErrConflict("quota_unlimited")
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET bytes_limit = bytes_limit + ?, updated_at = ? WHERE id = ?`, amount, now, u.ID)
	case "time":
		if u.SecondsLimit <= 0 {
			return res, app.ErrConflict("quota_unlimited")
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET seconds_limit = seconds_limit + ?, updated_at = ? WHERE id = ?`, amount, now, u.ID)
	case "days":
		exp := app.T(later(t.Now(), u.Expiration).Add(time.Duration(amount) * 24 * time.Hour))
		_, err = tx.ExecContext(ctx, `UPDATE users SET expiration = ?, updated_at = ? WHERE id = ?`, exp, now, u.ID)
	}
	if err != nil {
		return res, err
	}
	var bal int64
	err = tx.QueryRowContext(ctx, `SELECT balance, bytes_limit, seconds_limit, expiration FROM users WHERE id = ?`, u.ID).
		Scan(&bal, &res.BytesLimit, &res.SecondsLimit, &res.Expiration)
	if err != nil {
		return res, err
	}
	res.PurchaseID, res.UserID, res.AddonID, res.Kind, res.Quantity, res.Price, res.PaidBy = pid, u.ID, a.ID, a.Kind, qty, price, payKind
	res.Balance, res.Debt = app.Money(bal), debtOf(bal)
	return res, app.Emit(ctx, tx, "user.updated", map[string]any{"id": u.ID, "username": u.Username, "changed": []string{"addon"}, "addon_id": a.ID})
}

// RevertAddon undoes add-on purchase purchaseID of userID in tx (a voided
// till sale): the payer is refunded what it paid, and the data, time or
// days the add-on added are taken back. Once only (409
// addon_already_refunded); refused when the subscriber already used what
// the add-on added (409 addon_used): what was consumed cannot be returned.
// It does not check the caller's authority (the caller has).
func RevertAddon(ctx context.Context, tx *sql.Tx, actorID, userID, purchaseID int64, requestID, note string) error {
	u, err := readURow(ctx, tx, userID)
	if err != nil {
		return err
	}
	var qty, price, amount int64
	var payer, kind string
	var journal sql.NullInt64
	var refunded sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT ua.quantity, ua.price, ua.payer, ua.journal_id, ua.refunded_at, a.kind, a.amount
		FROM user_addons ua JOIN addons a ON a.id = ua.addon_id WHERE ua.id = ? AND ua.user_id = ?`, purchaseID, userID).
		Scan(&qty, &price, &payer, &journal, &refunded, &kind, &amount)
	if errors.Is(err, sql.ErrNoRows) {
		return app.ErrNotFound()
	}
	if err != nil {
		return err
	}
	if refunded.Valid {
		return app.ErrConflict("addon_already_refunded")
	}
	added := amount * qty
	now := nowText()
	switch kind {
	case "data":
		if u.UsedBytes > u.BytesLimit-added {
			return app.ErrConflict("addon_used")
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET bytes_limit = bytes_limit - ?, updated_at = ? WHERE id = ?`, added, now, u.ID)
	case "time":
		if u.UsedSeconds > u.SecondsLimit-added {
			return app.ErrConflict("addon_used")
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET seconds_limit = seconds_limit - ?, updated_at = ? WHERE id = ?`, added, now, u.ID)
	case "days":
		if !u.Expiration.IsZero() {
			_, err = tx.ExecContext(ctx, `UPDATE users SET expiration = ?, updated_at = ? WHERE id = ?`,
				app.T(u.Expiration.Add(-time.Duration(added)*24*time.Hour)), now, u.ID)
		}
	}
	if err != nil {
		return err
	}
	if price > 0 {
		switch payer {
		case "subscriber":
			if _, _, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: app.Money(price), Kind: "refund_addon", ActorID: actorID,
				RefType: "user_addon", RefID: purchaseID, RequestID: requestID, Note: note}); err != nil {
				return err
			}
		case "reseller":
			var mgr int64
			if err := tx.QueryRowContext(ctx, `SELECT manager_id FROM manager_journal WHERE id = ?`, journal.Int64).Scan(&mgr); err != nil {
				return err
			}
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: mgr, Amount: app.Money(price), Kind: "refund",
				ActorID: actorID, RefType: "user_addon", RefID: purchaseID, RequestID: requestID, Note: note}); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE user_addons SET refunded_at = ? WHERE id = ?`, now, purchaseID); err != nil {
		return err
	}
	return app.Emit(ctx, tx, "user.updated", map[string]any{"id": u.ID, "username": u.Username, "changed": []string{"revert_addon"}})
}
