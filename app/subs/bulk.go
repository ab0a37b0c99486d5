package subs

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"xr/app"
)

// Bulk operations on subscribers. Every id is authorised on its own, in
// its own transaction: a missing id fails with not_found, one outside the
// caller's subtree with not_authorized, a refused one with error and the
// refusal's reason as message. The call answers 200 with the bulk shape.
// Money operations take a request_id and are idempotent per row: the row
// key is request_id|id (a client key can never contain "|").

// bulkRows runs fn on each id's subscriber (scope-checked, not deleted) in
// its own write transaction.
func bulkRows(ctx context.Context, act *app.Actor, ids []int64, fn func(tx *sql.Tx, u *urow) error) app.BulkResult {
	t := act.Tenant
	res := app.RunBulk(ctx, ids, func(ctx context.Context, id int64) error {
		return t.Write(ctx, func(tx *sql.Tx) error {
			u, err := loadUser(ctx, tx, act, id)
			if err != nil {
				return err
			}
			if err := u.live(); err != nil {
				return err
			}
			return fn(tx, u)
		})
	})
	return res
}

func updated(ctx context.Context, tx *sql.Tx, u *urow, what string) error {
	return app.Emit(ctx, tx, "user.updated", map[string]any{"id": u.ID, "username": u.Username, "changed": []string{what}})
}

func validIDs(b *app.BulkIDs) error { return b.Validate() }

// BulkDaysInput is POST /users/bulk-add-days.
type BulkDaysInput struct {
	app.BulkIDs
	Days int64 `json:"days"`
}

// BulkAddDays extends each expiration by days from max(now, expiration).
func BulkAddDays(ctx context.Context, act *app.Actor, in BulkDaysInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersExtend); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if in.Days <= 0 || in.Days > 36600 {
		return app.BulkResult{}, app.ErrValidation("out_of_range", "days")
	}
	return extendBy(ctx, act, in.IDs, time.Duration(in.Days)*24*time.Hour), nil
}

// BulkHoursInput is POST /users/bulk-add-hours.
type BulkHoursInput struct {
	app.BulkIDs
	Hours int64 `json:"hours"`
}

// BulkAddHours extends each expiration by hours from max(now, expiration).
func BulkAddHours(ctx context.Context, act *app.Actor, in BulkHoursInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersExtend); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if in.Hours <= 0 || in.Hours > 36600*24 {
		return app.BulkResult{}, app.ErrValidation("out_of_range", "hours")
	}
	return extendBy(ctx, act, in.IDs, time.Duration(in.Hours)*time.Hour), nil
}

func extendBy(ctx context.Context, act *app.Actor, ids []int64, d time.Duration) app.BulkResult {
	return bulkRows(ctx, act, ids, func(tx *sql.Tx, u *urow) error { return rowExtend(ctx, tx, u, act.Tenant.Now(), d) })
}

// BulkTrafficInput is POST /users/bulk-add-traffic.
type BulkTrafficInput struct {
	app.BulkIDs
	Bytes int64 `json:"bytes"`
}

// BulkAddTraffic adds bytes to each current period's data quota; a
// subscriber without a data limit fails with quota_unlimited.
func BulkAddTraffic(ctx context.Context, act *app.Actor, in BulkTrafficInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersAddTraffic); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if in.Bytes <= 0 {
		return app.BulkResult{}, app.ErrValidation("out_of_range", "bytes")
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowAddTraffic(ctx, tx, u, in.Bytes) }), nil
}

// BulkDelete soft-deletes each subscriber.
func BulkDelete(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermUsersDelete); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeleteUser(ctx, act, id) }), nil
}

// BulkEnable switches each subscriber on.
func BulkEnable(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermUsersEnableDisable); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return setEnabled(ctx, act, id, true) }), nil
}

// BulkDisable switches each subscriber off.
func BulkDisable(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermUsersEnableDisable); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return setEnabled(ctx, act, id, false) }), nil
}

// BulkDisconnect ends the live sessions of each subscriber through the
// RADIUS area (App.DisconnectUser); an id without a live session fails with
// not_online.
func BulkDisconnect(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermUsersLiveTraffic); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in); err != nil {
		return app.BulkResult{}, err
	}
	t := act.Tenant
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error {
		if _, err := loadUser(ctx, t.DB.R, act, id); err != nil {
			return err
		}
		var live int
		if err := t.DB.R.QueryRowContext(ctx, `SELECT COUNT(*) FROM radius_sessions WHERE user_id = ? AND stop_time IS NULL`, id).Scan(&live); err != nil {
			return err
		}
		if live == 0 {
			return app.ErrConflict("not_online")
		}
		// The RADIUS service of this App sends the Disconnect-Requests;
		// without one (no RADIUS here) each online id fails with
		// disconnect_unavailable.
		if !t.App.CanDisconnectUsers() {
			return app.ErrConflict("disconnect_unavailable")
		}
		n, err := t.App.DisconnectUser(ctx, t, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return app.ErrConflict("not_online")
		}
		return nil
	}), nil
}

// BulkMoneyInput is POST /users/bulk-deposit and /bulk-withdraw.
type BulkMoneyInput struct {
	app.BulkIDs
	Amount    *app.Money `json:"amount"`
	RequestID string     `json:"request_id"`
	Note      string     `json:"note"`
}

func (in *BulkMoneyInput) validate() error {
	if err := validIDs(&in.BulkIDs); err != nil {
		return err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return err
	}
	if err := positive(in.Amount); err != nil {
		return err
	}
	return checkNote(in.Note)
}

// bulkMoneyFingerprint is a bulk money request without its ids.
func bulkMoneyFingerprint(in BulkMoneyInput) any {
	in.IDs = nil
	return in
}

func rowKey(key string, id int64) string { return key + "|" + strconv.FormatInt(id, 10) }

// bulkIdem runs op on each id with the per-row key; a replayed row counts
// as updated.
// input is the request without its ids (each row's key is already per id,
// and a retry of the failed rows only is the same instruction).
func bulkIdem[T any](ctx context.Context, act *app.Actor, ids []int64, key, op string, input any, fn func(tx *sql.Tx, u *urow) (T, error)) app.BulkResult {
	return app.RunBulk(ctx, ids, func(ctx context.Context, id int64) error {
		_, _, err := idemOp(ctx, act, id, rowKey(key, id), op, "", input, fn)
		return err
	})
}

// BulkDeposit credits amount to each subscriber (idempotent per row).
func BulkDeposit(ctx context.Context, act *app.Actor, in BulkMoneyInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersDeposit); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.validate(); err != nil {
		return app.BulkResult{}, err
	}
	return bulkIdem(ctx, act, in.IDs, in.RequestID, "bulk-deposit", bulkMoneyFingerprint(in), func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		return credit(ctx, tx, act, u, "deposit", *in.Amount, in.RequestID, in.Note, false)
	}), nil
}

// BulkWithdraw debits amount from each subscriber, never below zero
// (idempotent per row).
func BulkWithdraw(ctx context.Context, act *app.Actor, in BulkMoneyInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersWithdrawal); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.validate(); err != nil {
		return app.BulkResult{}, err
	}
	return bulkIdem(ctx, act, in.IDs, in.RequestID, "bulk-withdraw", bulkMoneyFingerprint(in), func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		return withdraw(ctx, tx, act, u, *in.Amount, "withdraw", in.RequestID, in.Note)
	}), nil
}

// BulkResetBalanceInput is POST /users/bulk-reset-balance; request_id is
// optional (the reset is naturally idempotent; with a key each row's
// ledger movement is recorded once).
type BulkResetBalanceInput struct {
	app.BulkIDs
	RequestID string `json:"request_id"`
	Note      string `json:"note"`
}

// BulkResetBalance sets each balance to zero with a ledger row (a positive
// balance is paid out, a debt is written off).
func BulkResetBalance(ctx context.Context, act *app.Actor, in BulkResetBalanceInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersWithdrawal); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if err := app.ValidateRequestID(in.RequestID, false); err != nil {
		return app.BulkResult{}, err
	}
	if err := checkNote(in.Note); err != nil {
		return app.BulkResult{}, err
	}
	reset := func(tx *sql.Tx, u *urow) (MoneyResult, error) {
		if u.Balance == 0 {
			return moneyResult(act.Tenant.Now(), u.ID, "reset_balance", 0, 0, 0), nil
		}
		bal, lid, err := MoveBalance(ctx, tx, Movement{UserID: u.ID, Amount: app.Money(-u.Balance), Kind: "reset_balance",
			ActorID: act.ManagerID, RequestID: in.RequestID, Note: in.Note})
		if err != nil {
			return MoneyResult{}, err
		}
		return moneyResult(act.Tenant.Now(), u.ID, "reset_balance", app.Money(-u.Balance), bal, lid), updated(ctx, tx, u, "balance")
	}
	if in.RequestID != "" {
		return bulkIdem(ctx, act, in.IDs, in.RequestID, "bulk-reset-balance", map[string]any{"note": in.Note}, reset), nil
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { _, err := reset(tx, u); return err }), nil
}

// BulkResetQuota zeroes each period's used bytes and seconds.
func BulkResetQuota(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermUsersResetQuota); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in); err != nil {
		return app.BulkResult{}, err
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowResetQuota(ctx, tx, u) }), nil
}

// BulkExpirationInput is POST /users/bulk-set-expiration.
type BulkExpirationInput struct {
	app.BulkIDs
	Expiration *app.DateOrTime `json:"expiration"`
}

// BulkSetExpiration sets each expiration.
func BulkSetExpiration(ctx context.Context, act *app.Actor, in BulkExpirationInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersExtend); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if in.Expiration == nil || in.Expiration.IsZero() {
		return app.BulkResult{}, app.ErrValidation("expiration_required", "expiration")
	}
	exp := in.Expiration.Time
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowSetExpiration(ctx, tx, u, exp) }), nil
}

// BulkGroupInput is POST /users/bulk-set-group: group_id null ungroups.
type BulkGroupInput struct {
	app.BulkIDs
	GroupID app.Opt[int64] `json:"group_id"`
}

// BulkSetGroup puts each subscriber in a group (or none).
func BulkSetGroup(ctx context.Context, act *app.Actor, in BulkGroupInput) (app.BulkResult, error) {
	if err := act.Require(PermGroupsAssign); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if !in.GroupID.Set {
		return app.BulkResult{}, app.ErrValidation("group_id_required", "group_id")
	}
	var group any
	if !in.GroupID.Null {
		if err := requireGroup(ctx, act.Tenant.DB.R, in.GroupID.V); err != nil {
			return app.BulkResult{}, err
		}
		group = in.GroupID.V
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowSetGroup(ctx, tx, u, group) }), nil
}

// BulkParentInput is POST /users/bulk-set-parent.
type BulkParentInput struct {
	app.BulkIDs
	ParentID int64 `json:"parent_id"`
}

// BulkSetParent moves each subscriber under a manager of the caller's
// subtree (400 invalid_parent_id otherwise, for the whole call).
func BulkSetParent(ctx context.Context, act *app.Actor, in BulkParentInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersChangeParent); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if in.ParentID <= 0 {
		return app.BulkResult{}, app.ErrValidation("parent_id_required", "parent_id")
	}
	if err := requireParent(ctx, act.Tenant.DB.R, act, in.ParentID); err != nil {
		return app.BulkResult{}, err
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowSetParent(ctx, tx, u, in.ParentID) }), nil
}

// BulkProfileInput is POST /users/bulk-set-profile: binds a plan (metadata
// only: no activation, no money); null unbinds.
type BulkProfileInput struct {
	app.BulkIDs
	ProfileID app.Opt[int64] `json:"profile_id"`
}

// BulkSetProfile binds each subscriber to a plan the caller may assign.
func BulkSetProfile(ctx context.Context, act *app.Actor, in BulkProfileInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersChangeProfile); err != nil {
		return app.BulkResult{}, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return app.BulkResult{}, err
	}
	if !in.ProfileID.Set {
		return app.BulkResult{}, app.ErrValidation("profile_id_required", "profile_id")
	}
	var profile any
	if !in.ProfileID.Null {
		if err := requireAssignable(ctx, act.Tenant.DB.R, act, in.ProfileID.V); err != nil {
			return app.BulkResult{}, err
		}
		profile = in.ProfileID.V
	}
	return bulkRows(ctx, act, in.IDs, func(tx *sql.Tx, u *urow) error { return rowSetProfile(ctx, tx, u, profile) }), nil
}

// BulkExtendInput is POST /users/bulk-extend: an activation of each
// subscriber's plan (or of profile_id), charged like a single activation.
type BulkExtendInput struct {
	app.BulkIDs
	ProfileID *int64 `json:"profile_id"`
	RequestID string `json:"request_id"`
}

func (in *BulkExtendInput) check(ctx context.Context, act *app.Actor) error {
	if err := validIDs(&in.BulkIDs); err != nil {
		return err
	}
	if in.ProfileID != nil {
		if !act.Can(PermUsersChangeProfile) {
			return app.ErrForbidden("")
		}
		return requireAssignable(ctx, act.Tenant.DB.R, act, *in.ProfileID)
	}
	return nil
}

// BulkExtend activates each subscriber (idempotent per row).
func BulkExtend(ctx context.Context, act *app.Actor, in BulkExtendInput) (app.BulkResult, error) {
	if err := act.Require(PermUsersActivate, PermUsersExtend); err != nil {
		return app.BulkResult{}, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.check(ctx, act); err != nil {
		return app.BulkResult{}, err
	}
	var pid int64
	if in.ProfileID != nil {
		pid = *in.ProfileID
	}
	return bulkIdem(ctx, act, in.IDs, in.RequestID, "bulk-extend", map[string]any{"profile_id": in.ProfileID}, func(tx *sql.Tx, u *urow) (ActivationResult, error) {
		r, err := ApplyActivation(ctx, tx, act.Tenant, act.ManagerID, u.ID, pid, ActivationOptions{Charge: ChargeAuto, RequestID: in.RequestID})
		if err != nil {
			return ActivationResult{}, err
		}
		return *r, nil
	}), nil
}

// PreviewRow is one subscriber of a bulk preview.
type PreviewRow struct {
	ID            int64      `json:"id"`
	Username      string     `json:"username"`
	Balance       app.Money  `json:"balance"`
	NewBalance    app.Money  `json:"new_balance"`
	ProfileID     *int64     `json:"profile_id,omitempty"`
	ProfileName   string     `json:"profile_name,omitempty"`
	Price         *app.Money `json:"price,omitempty"`
	PaidBy        string     `json:"paid_by,omitempty"`
	Expiration    app.Time   `json:"expiration"`
	NewExpiration app.Time   `json:"new_expiration"`
	OK            bool       `json:"ok"`
	Reason        string     `json:"reason,omitempty"` // why it would be refused
}

// BulkPreview answers what a bulk money call would do, changing nothing:
// rows that would apply (ok) or be refused (reason), ids that cannot be
// touched at all (failed, bulk reasons), and totals over the ok rows.
type BulkPreview struct {
	Rows   []PreviewRow      `json:"rows"`
	Failed []app.BulkFailure `json:"failed"`
	Count  int               `json:"count"`
	Total  app.Money         `json:"total"`
	// Wallet is the acting reseller's wallet after the ok rows, when the
	// activations would be charged to it.
	WalletBalanceAfter *app.Money `json:"wallet_balance_after,omitempty"`
}

// BulkPreviewInput is the body of the preview routes (request_id ignored).
type BulkPreviewInput struct {
	app.BulkIDs
	Amount    *app.Money `json:"amount"`
	ProfileID *int64     `json:"profile_id"`
}

func preview(ctx context.Context, act *app.Actor, ids []int64, fn func(tx *sql.Tx, u *urow, row *PreviewRow) (app.Money, error)) (*BulkPreview, error) {
	p := &BulkPreview{Rows: []PreviewRow{}}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		res := app.RunBulk(ctx, ids, func(ctx context.Context, id int64) error {
			u, err := loadUser(ctx, tx, act, id)
			if err != nil {
				return err
			}
			row := PreviewRow{ID: u.ID, Username: u.Username, Balance: app.Money(u.Balance), NewBalance: app.Money(u.Balance),
				Expiration: u.Expiration, NewExpiration: u.Expiration, ProfileID: ptrOf(u.ProfileID), OK: true}
			if err := u.live(); err != nil {
				row.OK, row.Reason = false, "user_deleted"
				p.Rows = append(p.Rows, row)
				return nil
			}
			amt, err := fn(tx, u, &row)
			if err != nil {
				return err
			}
			if row.OK {
				p.Count++
				p.Total += amt
			}
			p.Rows = append(p.Rows, row)
			return nil
		})
		p.Failed = res.Failed
		return nil
	})
	return p, err
}

// PreviewDeposit is POST /users/bulk-deposit/preview.
func PreviewDeposit(ctx context.Context, act *app.Actor, in BulkPreviewInput) (*BulkPreview, error) {
	if err := act.Require(PermUsersDeposit); err != nil {
		return nil, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return nil, err
	}
	if err := positive(in.Amount); err != nil {
		return nil, err
	}
	return preview(ctx, act, in.IDs, func(tx *sql.Tx, u *urow, row *PreviewRow) (app.Money, error) {
		next, err := app.Money(u.Balance).Add(*in.Amount)
		if err != nil {
			row.OK, row.Reason = false, "balance_out_of_range"
			return 0, nil
		}
		row.NewBalance = next
		return *in.Amount, nil
	})
}

// PreviewWithdraw is POST /users/bulk-withdraw/preview.
func PreviewWithdraw(ctx context.Context, act *app.Actor, in BulkPreviewInput) (*BulkPreview, error) {
	if err := act.Require(PermUsersWithdrawal); err != nil {
		return nil, err
	}
	if err := validIDs(&in.BulkIDs); err != nil {
		return nil, err
	}
	if err := positive(in.Amount); err != nil {
		return nil, err
	}
	return preview(ctx, act, in.IDs, func(tx *sql.Tx, u *urow, row *PreviewRow) (app.Money, error) {
		if app.Money(u.Balance) < *in.Amount {
			row.OK, row.Reason = false, "insufficient_balance"
			return 0, nil
		}
		row.NewBalance = app.Money(u.Balance) - *in.Amount
		return *in.Amount, nil
	})
}

// PreviewExtend is POST /users/bulk-extend/preview: the price, payer and
// new expiration of each activation, and whether its payer can afford it
// (a reseller's wallet is drawn down row after row).
func PreviewExtend(ctx context.Context, act *app.Actor, in BulkPreviewInput) (*BulkPreview, error) {
	if err := act.Require(PermUsersActivate, PermUsersExtend); err != nil {
		return nil, err
	}
	ext := BulkExtendInput{BulkIDs: in.BulkIDs, ProfileID: in.ProfileID}
	if err := ext.check(ctx, act); err != nil {
		return nil, err
	}
	var wallet, walletFloor int64
	walletRead := false
	now := act.Tenant.Now()
	p, err := preview(ctx, act, in.IDs, func(tx *sql.Tx, u *urow, row *PreviewRow) (app.Money, error) {
		pid := u.ProfileID.Int64
		if in.ProfileID != nil {
			pid = *in.ProfileID
		}
		if pid == 0 {
			row.OK, row.Reason = false, "profile_required"
			return 0, nil
		}
		plan, err := readPlan(ctx, tx, pid)
		if err != nil {
			row.OK, row.Reason = false, "profile_not_found"
			return 0, nil
		}
		price := app.Money(plan.Price)
		row.ProfileID, row.ProfileName, row.Price = &plan.ID, plan.Name, &price
		row.NewExpiration = app.T(later(now, u.Expiration).Add(time.Duration(plan.DurationDays) * 24 * time.Hour))
		if !plan.Enabled {
			row.OK, row.Reason = false, "profile_disabled"
			return 0, nil
		}
		kind, mgr, err := payer(ctx, tx, ChargeAuto, act.ManagerID, 0)
		if err != nil {
			return 0, err
		}
		if price == 0 {
			kind = "none"
		}
		row.PaidBy = kind
		switch kind {
		case "subscriber":
			row.NewBalance = app.Money(u.Balance) - price
			if u.DebtLimit.Valid && u.Balance-int64(price) < -u.DebtLimit.Int64 {
				row.OK, row.Reason, row.NewBalance = false, "insufficient_balance", app.Money(u.Balance)
				return 0, nil
			}
		case "reseller":
			if !walletRead {
				var limit int64
				if err := tx.QueryRowContext(ctx, `SELECT balance, debt_limit FROM managers WHERE id = ?`, mgr).Scan(&wallet, &limit); err != nil {
					return 0, err
				}
				walletFloor, walletRead = -limit, true
			}
			if wallet-int64(price) < walletFloor {
				row.OK, row.Reason = false, "insufficient_balance"
				return 0, nil
			}
			wallet -= int64(price)
		}
		return price, nil
	})
	if p != nil && walletRead {
		w := app.Money(wallet)
		p.WalletBalanceAfter = &w
	}
	return p, err
}
