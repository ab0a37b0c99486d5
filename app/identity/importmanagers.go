package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"xr/app"
)

// The primitives of a manager import (app/dataimport: the managers kind
// and the reseller-panel CSV set). The engine reads files and chunks
// transactions; these functions apply CreateManager's rules to one row
// inside the engine's transaction.

// CheckManagerImport validates a new manager as CreateManager does
// (roles are not imported).
func CheckManagerImport(in *ManagerInput) error {
	if in.RoleIDs.Set {
		return app.ErrValidation("use_roles_endpoint", "role_ids")
	}
	return in.validate(true)
}

// WalletOpeningBalance is the journal kind of an imported opening balance.
const WalletOpeningBalance = "opening_balance"

// ImportManager creates a manager in tx under a parent in the caller's
// subtree (400 parent_not_found otherwise; username_taken/email_taken as
// CreateManager), then moves its opening balance through
// MoveManagerWallet: a tenant-wide caller credits it; any other caller pays
// a positive balance from its own wallet (409 insufficient_balance past its
// debt limit), so money moves down the tree and is never created there. A
// negative balance is a debt recorded as a debit of the new wallet (its
// debt limit is raised to cover it).
func ImportManager(ctx context.Context, tx *sql.Tx, act *app.Actor, in ManagerInput, balance app.Money, ref string) (int64, error) {
	if err := act.Require(PermManagersCreate); err != nil {
		return 0, err
	}
	if balance != 0 {
		if err := act.Require(PermManagersDeposit); err != nil {
			return 0, err
		}
	}
	if err := CheckManagerImport(&in); err != nil {
		return 0, err
	}
	parent := act.ManagerID
	if in.ParentManagerID.Set {
		parent = in.ParentManagerID.V
	}
	if ok, err := act.InScope(ctx, tx, parent); err != nil {
		return 0, err
	} else if !ok {
		return 0, app.ErrValidation("parent_not_found", "parent_manager_id")
	}
	if balance < 0 && (!in.DebtLimit.Set || in.DebtLimit.V < -balance) {
		in.DebtLimit = app.Opt[app.Money]{Set: true, V: -balance}
	}
	cf := "{}"
	if in.CustomFields.Set && !in.CustomFields.Null {
		cf = string(in.CustomFields.V)
	}
	id, err := app.InsertManager(ctx, tx, app.ManagerRecord{ParentID: parent, Username: in.Username.V, Email: in.Email.V,
		PasswordHash: app.HashPassword(in.Password.V), Firstname: in.Firstname.V, Lastname: in.Lastname.V, Phone: in.Phone.V,
		DebtLimit: in.DebtLimit.V, DiscountRate: int64(in.DiscountRate.V), CustomFields: cf})
	if err != nil {
		return 0, identityConflict(err)
	}
	if err := patchManagerColumns(ctx, tx, id, ManagerInput{Company: in.Company, Address: in.Address, Notes: in.Notes, Language: in.Language, GroupID: in.GroupID}); err != nil {
		return 0, err
	}
	if balance != 0 {
		if !act.TenantWide && balance > 0 {
			if _, _, err := MoveManagerWallet(ctx, tx, WalletMove{ManagerID: act.ManagerID, Amount: -balance, Kind: "transfer_" + WalletOpeningBalance,
				ActorID: act.ManagerID, RefType: "manager", RefID: id, Note: ref}); err != nil {
				return 0, err
			}
		}
		if _, _, err := MoveManagerWallet(ctx, tx, WalletMove{ManagerID: id, Amount: balance, Kind: WalletOpeningBalance, ActorID: act.ManagerID,
			RefType: "import", Note: ref, NoDebtCheck: true}); err != nil {
			return 0, err
		}
	}
	return id, app.Emit(ctx, tx, "manager.created", map[string]any{"id": id, "parent_manager_id": parent, "username": in.Username.V, "email": in.Email.V})
}

// UpdateImportedManager overwrites the contact fields present in in of an
// existing manager in the caller's subtree (an import's on_duplicate
// update): never its parent, password, balance or roles.
func UpdateImportedManager(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, in ManagerInput) error {
	if err := act.Require(PermManagersUpdate); err != nil {
		return err
	}
	if err := act.RequireScope(ctx, tx, id); err != nil {
		return err
	}
	in.Username, in.Password, in.ParentManagerID, in.RoleIDs = app.Opt[string]{}, app.Opt[string]{}, app.Opt[int64]{}, app.Opt[[]int64]{}
	if err := in.validate(false); err != nil {
		return err
	}
	return patchManagerColumns(ctx, tx, id, in)
}

// FindManagerForImport is the manager holding a username or email (case
// folded): its id and whether it is in the caller's subtree; 0 when none.
func FindManagerForImport(ctx context.Context, q app.Querier, act *app.Actor, key string) (int64, bool, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM managers WHERE username = ? COLLATE NOCASE OR email = ? COLLATE NOCASE ORDER BY id LIMIT 1`, key, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("find manager: %w", err)
	}
	ok, err := act.InScope(ctx, q, id)
	return id, ok, err
}
