package subs

// Effects other areas apply to subscribers inside THEIR transaction: the
// cards area (refill cards credit a balance, voucher cards activate a plan,
// redeem-create makes a subscriber) and the RADIUS area. These functions do
// not check the caller's authority or scope — the caller has — and they do
// not call t.EventsEmitted (the caller does after its commit). Each writes
// its ledger rows and events in tx, so the effect commits or rolls back with
// the caller's own rows.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/db"
)

// Movement is one change of a subscriber's balance. Amount is signed:
// positive credits, negative debits.
type Movement struct {
	UserID    int64
	Amount    app.Money
	Kind      string // deposit, withdraw, pay_debt, activation, refund_activation, addon, card_refill, points_redeem, reset_balance, import, ...
	ActorID   int64
	RefType   string
	RefID     int64
	RequestID string
	InvoiceNo string
	Note      string
	// CheckCredit refuses a debit that would take the balance below
	// -debt_limit (NULL debt_limit = unlimited credit): 409 insufficient_balance.
	CheckCredit bool
	// NoOverdraw refuses a debit below zero whatever the debt_limit
	// (withdrawing cash): 409 insufficient_balance.
	NoOverdraw bool
}

// MoveBalance applies m in tx: users.balance and an append-only user_ledger
// row carrying the running balance, in the same transaction. It is the one
// primitive every movement of a subscriber's money goes through.
func MoveBalance(ctx context.Context, tx *sql.Tx, m Movement) (balanceAfter app.Money, ledgerID int64, err error) {
	return moveBalance(ctx, tx, m)
}

func moveBalance(ctx context.Context, tx execer, m Movement) (balanceAfter app.Money, ledgerID int64, err error) {
	if m.Amount == 0 {
		return 0, 0, app.ErrValidation("amount_zero", "amount")
	}
	if !m.Amount.InAmountRange() {
		return 0, 0, app.ErrAmountOutOfRange("amount")
	}
	var bal int64
	var limit sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT balance, debt_limit FROM users WHERE id = ?`, m.UserID).Scan(&bal, &limit)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, app.ErrNotFound()
	}
	if err != nil {
		return 0, 0, err
	}
	// The checked sum: beyond ±app.MaxBalance it is 409
	// balance_out_of_range, unless a debit first breaks the credit floor.
	sum, rangeErr := app.Money(bal).Add(m.Amount)
	next := int64(sum)
	if m.Amount < 0 && ((m.CheckCredit && limit.Valid) || m.NoOverdraw) {
		floor := -int64(app.MaxBalance)
		if m.CheckCredit && limit.Valid {
			floor = -limit.Int64
		}
		if m.NoOverdraw {
			floor = max(floor, 0)
		}
		if rangeErr != nil || next < floor {
			e := app.ErrConflict("insufficient_balance").With("balance", app.Money(bal))
			if limit.Valid {
				e = e.With("debt_limit", app.Money(limit.Int64))
			}
			return app.Money(bal), 0, e
		}
	}
	if rangeErr != nil {
		return app.Money(bal), 0, app.ErrBalanceOutOfRange().With("balance", app.Money(bal))
	}
	now := nowText()
	if _, err := tx.ExecContext(ctx, `UPDATE users SET balance = ?, updated_at = ? WHERE id = ?`, next, now, m.UserID); err != nil {
		return 0, 0, err
	}
	var actor, ref, rid any
	if m.ActorID != 0 {
		actor = m.ActorID
	}
	if m.RefID != 0 {
		ref = m.RefID
	}
	if m.RequestID != "" {
		rid = m.RequestID
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO user_ledger(user_id, kind, amount, balance_after, actor_id, ref_type, ref_id, request_id, invoice_no, note, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?)`, m.UserID, m.Kind, int64(m.Amount), next, actor, m.RefType, ref, rid, m.InvoiceNo, m.Note, now)
	if err != nil {
		return 0, 0, err
	}
	ledgerID, _ = r.LastInsertId()
	return app.Money(next), ledgerID, nil
}

// CreditBalance credits amount (> 0) to a subscriber's balance in tx — a
// refill card, a gateway payment — and writes the ledger row (kind, and
// refType/refID naming the source, e.g. "card_redemption", 42). It returns
// the new balance and the ledger row id. It emits no event.
func CreditBalance(ctx context.Context, tx *sql.Tx, t *app.Tenant, actorID, userID int64, amount app.Money, kind, refType string, refID int64) (app.Money, int64, error) {
	if amount <= 0 {
		return 0, 0, app.ErrValidation("amount_must_be_positive", "amount")
	}
	if kind == "" {
		kind = "credit"
	}
	return MoveBalance(ctx, tx, Movement{UserID: userID, Amount: amount, Kind: kind, ActorID: actorID, RefType: refType, RefID: refID})
}

// Charge says who pays an activation or add-on.
type Charge string

const (
	// ChargeNone applies the effect for free (a voucher card already paid).
	ChargeNone Charge = "none"
	// ChargeAuto follows the tenant setting activation_payer: "subscriber"
	// (default) charges the subscriber's balance within its debt_limit;
	// "reseller" charges the acting manager's wallet (app.MoveManagerWallet)
	// — unless the actor is the tenant owner (root), who is the house and
	// pays nothing to itself: the subscriber pays then.
	ChargeAuto Charge = "auto"
	// ChargeSubscriber charges the subscriber's balance within its debt_limit.
	ChargeSubscriber Charge = "subscriber"
	// ChargeReseller charges the wallet of PayerManagerID (default the actor).
	ChargeReseller Charge = "reseller"
)

// ActivationOptions tunes ApplyActivation.
type ActivationOptions struct {
	Charge         Charge     // "" = ChargeNone
	PayerManagerID int64      // ChargeReseller: whose wallet; 0 = actorID
	Price          *app.Money // nil = the plan's price
	RefType        string     // what caused it, e.g. "card_redemption"
	RefID          int64
	RequestID      string
	Note           string
}

// ActivationResult is the outcome of an activation (and of POST
// /users/{id}/activation, which adds replay).
type ActivationResult struct {
	ActivationID       int64     `json:"activation_id"`
	UserID             int64     `json:"user_id"`
	ProfileID          int64     `json:"profile_id"`
	ProfileName        string    `json:"profile_name"`
	Price              app.Money `json:"price"`
	PaidBy             string    `json:"paid_by"` // subscriber, reseller, none
	PayerManagerID     *int64    `json:"payer_manager_id"`
	PreviousExpiration app.Time  `json:"previous_expiration"`
	Expiration         app.Time  `json:"expiration"`
	BytesLimit         int64     `json:"bytes_limit"`
	SecondsLimit       int64     `json:"seconds_limit"`
	Balance            app.Money `json:"balance"`
	Debt               app.Money `json:"debt"`
	LedgerID           *int64    `json:"ledger_id"`
	PointsAwarded      int64     `json:"points_awarded"`
	Replay             bool      `json:"replay"`
}

// payer resolves who pays under charge c for an actor.
func payer(ctx context.Context, q app.Querier, c Charge, actorID, payerManagerID int64) (kind string, managerID int64, err error) {
	switch c {
	case ChargeNone, "":
		return "none", 0, nil
	case ChargeSubscriber:
		return "subscriber", 0, nil
	case ChargeReseller:
		if payerManagerID == 0 {
			payerManagerID = actorID
		}
		return "reseller", payerManagerID, nil
	}
	p, err := SettingActivationPayer.Get(ctx, q)
	if err != nil {
		return "", 0, err
	}
	if p != "reseller" || actorID == 0 {
		return "subscriber", 0, nil
	}
	var parent sql.NullInt64
	err = q.QueryRowContext(ctx, `SELECT parent_id FROM managers WHERE id = ?`, actorID).Scan(&parent)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !parent.Valid) {
		return "subscriber", 0, nil // the owner (root) is the house
	}
	if err != nil {
		return "", 0, err
	}
	return "reseller", actorID, nil
}

// charge takes price from the payer: the subscriber's balance (ledger row)
// or a manager's wallet (journal row). It returns the ledger or journal id.
func charge(ctx context.Context, tx *sql.Tx, kind string, managerID, userID int64, price app.Money, ledgerKind string, actorID int64, refType string, refID int64, requestID, note string) (ledgerID, journalID int64, err error) {
	if price == 0 || kind == "none" {
		return 0, 0, nil
	}
	switch kind {
	case "subscriber":
		_, ledgerID, err = MoveBalance(ctx, tx, Movement{UserID: userID, Amount: -price, Kind: ledgerKind, ActorID: actorID,
			RefType: refType, RefID: refID, RequestID: requestID, Note: note, CheckCredit: true})
		return ledgerID, 0, err
	case "reseller":
		_, journalID, err = identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: managerID, Amount: -price, Kind: ledgerKind,
			ActorID: actorID, RefType: refType, RefID: refID, RequestID: requestID, Note: note})
		if e := app.AsError(err); e != nil && e.Reason == "insufficient_balance" {
			_ = e.With("payer", "reseller") // adds the detail to e in place; err carries e
		}
		return 0, journalID, err
	}
	return 0, 0, nil
}

// ApplyActivation activates plan profileID (0 = the subscriber's bound
// plan) for userID in tx: it charges the price as opts.Charge says, binds
// the plan, extends the expiration by the plan's duration from
// max(now, expiration), resets the period's quota to the plan's limits,
// records the activation (so it can be refunded), and emits user.activated.
// A disabled plan is 409 profile_disabled; a subscriber without plan 400
// profile_required; a deleted one 409 user_deleted; a charge beyond the
// credit 409 insufficient_balance (nothing is written then).
func ApplyActivation(ctx context.Context, tx *sql.Tx, t *app.Tenant, actorID, userID, profileID int64, opts ActivationOptions) (*ActivationResult, error) {
	u, err := readURow(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	if err := u.live(); err != nil {
		return nil, err
	}
	if profileID == 0 {
		if !u.ProfileID.Valid {
			return nil, app.ErrValidation("profile_required", "profile_id")
		}
		profileID = u.ProfileID.Int64
	}
	plan, err := readPlan(ctx, tx, profileID)
	if err != nil {
		return nil, err
	}
	if !plan.Enabled {
		return nil, app.ErrConflict("profile_disabled").With("field", "profile_id")
	}
	price := app.Money(plan.Price)
	if opts.Price != nil {
		price = *opts.Price
	}
	if price < 0 {
		return nil, app.ErrValidation("invalid_price", "price")
	}
	payKind, payMgr, err := payer(ctx, tx, opts.Charge, actorID, opts.PayerManagerID)
	if err != nil {
		return nil, err
	}
	if price == 0 {
		payKind, payMgr = "none", 0
	}
	now := t.Now()
	base := later(now, u.Expiration)
	added := time.Duration(plan.DurationDays) * 24 * time.Hour
	newExp := app.T(base.Add(added))
	nowS := nowText()
	var actor, mgr, ref any
	if actorID != 0 {
		actor = actorID
	}
	if payMgr != 0 {
		mgr = payMgr
	}
	if opts.RefID != 0 {
		ref = opts.RefID
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO user_activations(user_id, profile_id, price, payer, payer_manager_id, added_seconds, old_expiration, new_expiration,
		old_profile_id, old_bytes_limit, old_seconds_limit, old_used_bytes, old_used_seconds, actor_id, ref_type, ref_id, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, userID, plan.ID, int64(price), payKind, mgr, int64(added/time.Second),
		u.Expiration, newExp, nullInt(u.ProfileID), u.BytesLimit, u.SecondsLimit, u.UsedBytes, u.UsedSeconds, actor, opts.RefType, ref, nowS)
	if err != nil {
		return nil, err
	}
	actID, _ := r.LastInsertId()
	ledgerID, journalID, err := charge(ctx, tx, payKind, payMgr, userID, price, "activation", actorID, "user_activation", actID, opts.RequestID, opts.Note)
	if err != nil {
		return nil, err
	}
	if ledgerID != 0 || journalID != 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE user_activations SET ledger_id = ?, journal_id = ? WHERE id = ?`, nullID(ledgerID), nullID(journalID), actID); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET profile_id = ?, expiration = ?, bytes_limit = ?, seconds_limit = ?, used_bytes = 0, used_seconds = 0, updated_at = ? WHERE id = ?`,
		plan.ID, newExp, plan.BytesLimit, plan.SecondsLimit, nowS, userID); err != nil {
		return nil, err
	}
	res := &ActivationResult{ActivationID: actID, UserID: userID, ProfileID: plan.ID, ProfileName: plan.Name, Price: price, PaidBy: payKind,
		PreviousExpiration: u.Expiration, Expiration: newExp, BytesLimit: plan.BytesLimit, SecondsLimit: plan.SecondsLimit}
	if payMgr != 0 {
		res.PayerManagerID = &payMgr
	}
	if ledgerID != 0 {
		res.LedgerID = &ledgerID
	}
	pts, err := SettingPointsPerActivation.Get(ctx, tx)
	if err != nil {
		return nil, err
	}
	if pts > 0 {
		if _, err := addPoints(ctx, tx, userID, pts, "activation", actorID, 0); err != nil {
			return nil, err
		}
		res.PointsAwarded = pts
	}
	var bal int64
	if err := tx.QueryRowContext(ctx, `SELECT balance FROM users WHERE id = ?`, userID).Scan(&bal); err != nil {
		return nil, err
	}
	res.Balance, res.Debt = app.Money(bal), debtOf(bal)
	if err := app.Emit(ctx, tx, "user.activated", map[string]any{"id": userID, "username": u.Username, "profile_id": plan.ID,
		"expiration": newExp, "price": price, "paid_by": payKind, "activation_id": actID}); err != nil {
		return nil, err
	}
	return res, nil
}

func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// addPoints changes a subscriber's reward points with an append-only row.
func addPoints(ctx context.Context, tx *sql.Tx, userID, delta int64, kind string, actorID, ledgerID int64) (int64, error) {
	var cur int64
	if err := tx.QueryRowContext(ctx, `SELECT points_balance FROM users WHERE id = ?`, userID).Scan(&cur); err != nil {
		return 0, err
	}
	next, err := app.AddPoints(cur, delta)
	if err != nil {
		return cur, err
	}
	if next < 0 {
		return cur, app.ErrConflict("insufficient_points").With("points_balance", cur)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET points_balance = ?, updated_at = ? WHERE id = ?`, next, nowText(), userID); err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO user_points(user_id, delta, balance_after, kind, actor_id, ledger_id, created_at) VALUES (?,?,?,?,?,?,?)`,
		userID, delta, next, kind, nullID(actorID), nullID(ledgerID), nowText())
	return next, err
}

// RevertActivation undoes activation activationID of userID in tx, as
// RefundActivation does for the last activation: its price goes back to
// whoever paid it, the time it added is taken off the expiration, and the
// plan and quota limits it replaced come back (usage since is kept and
// added to the usage it had reset). Only the subscriber's latest
// activation can be reverted — 409 activation_superseded otherwise — and
// only once (409 activation_already_refunded). It does not check the
// caller's authority (the caller has) and emits user.updated.
func RevertActivation(ctx context.Context, tx *sql.Tx, actorID, userID, activationID int64, requestID, note string) (*RefundResult, error) {
	u, err := readURow(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	var a struct {
		id, price, added, oldBytes, oldSecs, oldUB, oldUS int64
		payer                                             string
		mgr, oldProfile                                   sql.NullInt64
		refunded                                          sql.NullString
	}
	err = tx.QueryRowContext(ctx, `SELECT id, price, payer, payer_manager_id, added_seconds, old_profile_id, old_bytes_limit, old_seconds_limit,
		old_used_bytes, old_used_seconds, refunded_at FROM user_activations WHERE user_id = ? ORDER BY id DESC LIMIT 1`, u.ID).
		Scan(&a.id, &a.price, &a.payer, &a.mgr, &a.added, &a.oldProfile, &a.oldBytes, &a.oldSecs, &a.oldUB, &a.oldUS, &a.refunded)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrConflict("no_activation")
	}
	if err != nil {
		return nil, err
	}
	if a.id != activationID {
		return nil, app.ErrConflict("activation_superseded")
	}
	if a.refunded.Valid {
		return nil, app.ErrConflict("activation_already_refunded")
	}
	res := &RefundResult{UserID: u.ID, ActivationID: a.id, Refunded: app.Money(a.price), RefundedTo: a.payer, PayerManagerID: ptrOf(a.mgr)}
	if a.price > 0 {
		switch a.payer {
		case "subscriber":
			if _, _, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: app.Money(a.price), Kind: "refund_activation",
				ActorID: actorID, RefType: "user_activation", RefID: a.id, RequestID: requestID, Note: note}); err != nil {
				return nil, err
			}
		case "reseller":
			if _, _, err := identity.MoveManagerWallet(ctx, tx, identity.WalletMove{ManagerID: a.mgr.Int64, Amount: app.Money(a.price),
				Kind: "refund", ActorID: actorID, RefType: "user_activation", RefID: a.id, RequestID: requestID, Note: note}); err != nil {
				return nil, err
			}
		}
	}
	newExp := u.Expiration
	if !newExp.IsZero() {
		newExp = app.T(newExp.Add(-time.Duration(a.added) * time.Second))
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET expiration = ?, profile_id = ?, bytes_limit = ?, seconds_limit = ?,
		used_bytes = used_bytes + ?, used_seconds = used_seconds + ?, updated_at = ? WHERE id = ?`,
		newExp, nullInt(a.oldProfile), a.oldBytes, a.oldSecs, a.oldUB, a.oldUS, nowText(), u.ID); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE user_activations SET refunded_at = ?, refunded_by = ? WHERE id = ?`, nowText(), nullID(actorID), a.id); err != nil {
		return nil, err
	}
	var bal int64
	if err := tx.QueryRowContext(ctx, `SELECT balance FROM users WHERE id = ?`, u.ID).Scan(&bal); err != nil {
		return nil, err
	}
	res.Expiration, res.ProfileID, res.Balance, res.Debt = newExp, ptrOf(a.oldProfile), app.Money(bal), debtOf(bal)
	return res, app.Emit(ctx, tx, "user.updated", map[string]any{"id": u.ID, "username": u.Username, "changed": []string{"revert_activation"}})
}

// NewUser is a subscriber to create.
type NewUser struct {
	Username       string
	Password       string // RADIUS password, stored sealed (recoverable for CHAP/MS-CHAPv2)
	PortalPassword string // hashed; "" = none
	ParentID       int64  // owning manager (required)
	ProfileID      int64  // bound plan, 0 = none (metadata only: no activation)
	GroupID        int64
	Enabled        *bool // nil = true
	Expiration     app.Time
	DebtLimit      *app.Money // nil = unlimited credit
	Email          string
	Firstname      string
	Lastname       string
	Phone          string
	ContractID     string
	NationalID     string
	Address        string
	Notes          string
	StaticIP       string
	MacLockEnabled bool
	MacLockedAddrs []string
	CustomFields   map[string]json.RawMessage // validated against the "user" form
	// OpeningBalance is written as a ledger row of kind "opening" (imports).
	OpeningBalance app.Money
	ActorID        int64
}

// CreateUser creates a subscriber in tx (identity only: no money, no
// quota, no activation, unless OpeningBalance) and emits user.created. It
// validates every field and the licence cap (403 ERR_LICENSE_BLOCKED
// license_locked when max_users subscribers already exist), but not the
// caller's authority over ParentID/ProfileID — the caller checks those.
// A taken username is 409 username_taken.
func CreateUser(ctx context.Context, tx *sql.Tx, t *app.Tenant, in NewUser) (*Created, error) {
	form, err := loadFormFields(ctx, tx, "user")
	if err != nil {
		return nil, err
	}
	return createUser(ctx, tx, tx, t, in, form)
}

// validateNewUser checks the fields of in that need no database.
func validateNewUser(in *NewUser) error {
	in.Username = strings.TrimSpace(in.Username)
	if in.Username == "" {
		return app.ErrValidation("username_required", "username")
	}
	if !ValidUsername(in.Username) {
		return app.ErrValidation("invalid_username", "username")
	}
	if err := checkRadiusPassword(in.Password, "password"); err != nil {
		return err
	}
	if in.PortalPassword != "" {
		if err := app.CheckPasswordStrength(in.PortalPassword, "portal_password"); err != nil {
			return err
		}
	}
	if in.ParentID <= 0 {
		return app.ErrValidation("invalid_parent_id", "parent_id")
	}
	if in.DebtLimit != nil && *in.DebtLimit < 0 {
		return app.ErrValidation("invalid_debt_limit", "debt_limit")
	}
	if in.DebtLimit != nil && !in.DebtLimit.InAmountRange() {
		return app.ErrAmountOutOfRange("debt_limit")
	}
	if !in.OpeningBalance.InAmountRange() {
		return app.ErrAmountOutOfRange("balance")
	}
	in.Email = strings.TrimSpace(in.Email)
	if err := checkEmail(in.Email); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"firstname", in.Firstname}, {"lastname", in.Lastname}, {"phone", in.Phone},
		{"contract_id", in.ContractID}, {"national_id", in.NationalID}, {"address", in.Address}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	if len(in.Notes) > 4000 {
		return app.ErrValidation("too_long", "notes")
	}
	ip, err := normStaticIP(in.StaticIP)
	if err != nil {
		return err
	}
	in.StaticIP = ip
	macs, err := normMACs(in.MacLockedAddrs)
	if err != nil {
		return err
	}
	in.MacLockedAddrs = macs
	return nil
}

// checkCap refuses adding n subscribers past the licence's max_users.
func checkCap(ctx context.Context, q app.Querier, t *app.Tenant, n int64) error {
	if t.MaxUsers == nil {
		return nil
	}
	count, err := app.ReadUsersCount(ctx, q)
	if err != nil {
		return err
	}
	if count+n > *t.MaxUsers {
		return app.ErrLicenseLocked().With("max_users", *t.MaxUsers).With("users_count", count)
	}
	return nil
}

// createUser is CreateUser with x for the statements (a stmtCache on bulk
// paths) and tx for the event.
func createUser(ctx context.Context, tx *sql.Tx, x execer, t *app.Tenant, in NewUser, form []FormField) (*Created, error) {
	if err := validateNewUser(&in); err != nil {
		return nil, err
	}
	custom, err := validateCustom(form, in.CustomFields, nil)
	if err != nil {
		return nil, err
	}
	if err := checkCap(ctx, x, t, 1); err != nil {
		return nil, err
	}
	enabled := true
	if in.Enabled != nil {
		enabled = *in.Enabled
	}
	var profile, group, limit, created any
	if in.ProfileID != 0 {
		profile = in.ProfileID
		if _, err := readPlan(ctx, x, in.ProfileID); err != nil {
			return nil, err
		}
	}
	if in.GroupID != 0 {
		group = in.GroupID
		var one int
		if err := x.QueryRowContext(ctx, `SELECT 1 FROM user_groups WHERE id = ?`, in.GroupID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil, app.ErrValidation("group_not_found", "group_id")
			}
			return nil, err
		}
	}
	if in.DebtLimit != nil {
		limit = int64(*in.DebtLimit)
	}
	if in.ActorID != 0 {
		created = in.ActorID
	}
	portal := ""
	if in.PortalPassword != "" {
		portal = app.HashPassword(in.PortalPassword)
	}
	now := nowText()
	r, err := x.ExecContext(ctx, `INSERT INTO users(username, password_sealed, portal_password_hash, parent_id, profile_id, group_id, enabled, expiration,
		debt_limit, mac_lock_enabled, mac_locked_addrs, static_ip, email, firstname, lastname, phone, contract_id, national_id, address, notes,
		lookup_token, custom_fields, balance, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		in.Username, t.App.Keys.Seal([]byte(in.Password)), portal, in.ParentID, profile, group, enabled, in.Expiration, limit,
		in.MacLockEnabled, jsonText(in.MacLockedAddrs), in.StaticIP, in.Email, in.Firstname, in.Lastname, in.Phone, in.ContractID,
		in.NationalID, in.Address, in.Notes, newLookupToken(), custom, int64(in.OpeningBalance), created, now, now)
	switch {
	case db.IsUnique(err) && in.StaticIP != "" && staticIPTaken(ctx, x, in.StaticIP, 0):
		return nil, app.ErrConflict("static_ip_taken").With("field", "static_ip")
	case db.IsUnique(err), db.IsTriggerAbort(err): // the trigger: a card login
		return nil, app.ErrConflict("username_taken").With("field", "username")
	case db.IsForeignKey(err):
		return nil, app.ErrValidation("invalid_parent_id", "parent_id")
	case err != nil:
		return nil, err
	}
	id, _ := r.LastInsertId()
	bal := int64(in.OpeningBalance)
	if bal != 0 {
		// The opening balance is the first ledger row (no UPDATE of the row
		// just inserted).
		if _, err := x.ExecContext(ctx, `INSERT INTO user_ledger(user_id, kind, amount, balance_after, actor_id, created_at) VALUES (?,?,?,?,?,?)`,
			id, "opening", bal, bal, created, now); err != nil {
			return nil, err
		}
	}
	out := &Created{ID: id, TenantID: t.ID, Username: in.Username, Enabled: enabled, ParentID: in.ParentID,
		Balance: app.Money(bal), Debt: debtOf(bal)}
	if err := out.CreatedAt.Scan(now); err != nil {
		return nil, err
	}
	if in.ProfileID != 0 {
		p := in.ProfileID
		out.ProfileID = &p
	}
	if err := app.Emit(ctx, tx, "user.created", out); err != nil {
		return nil, err
	}
	return out, nil
}

func staticIPTaken(ctx context.Context, q app.Querier, ip string, except int64) bool {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM users WHERE static_ip = ? AND deleted_at IS NULL AND id <> ?`, ip, except).Scan(&one)
	return err == nil
}

// newLookupToken is a subscriber's scan token: 20 random bytes, base64url.
func newLookupToken() string { return app.RandomToken(20) }
