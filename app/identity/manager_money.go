package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"xr/app"
)

// WalletInput is the body of the manager wallet operations.
type WalletInput struct {
	Amount       app.Money `json:"amount"`
	RequestID    string    `json:"request_id"`
	Note         string    `json:"note"`
	IssueInvoice *bool     `json:"issue_invoice"`
}

// WalletResult is the outcome of a wallet operation; a replay returns the
// stored one with Replay true.
type WalletResult struct {
	ManagerID  int64     `json:"manager_id"`
	Kind       string    `json:"kind"`
	Amount     app.Money `json:"amount"`
	Balance    app.Money `json:"balance"`
	Debt       app.Money `json:"debt"`
	JournalID  int64     `json:"journal_id,omitempty"`
	DocumentNo string    `json:"document_no,omitempty"`
	Replay     bool      `json:"replay"`
}

// Wallet operation kinds.
const (
	WalletDeposit  = "deposit"
	WalletWithdraw = "withdraw"
	WalletTopup    = "topup"
	WalletPayDebt  = "pay-debt"
)

// The permission of each kind of wallet operation, loan list and document
// list (an unknown kind needs one nobody holds).
var (
	walletPerms = map[string]app.Perm{WalletDeposit: PermManagersDeposit, WalletTopup: PermManagersDeposit,
		WalletPayDebt: PermManagersDeposit, WalletWithdraw: PermManagersWithdraw}
	loanPerms     = map[string]app.Perm{"": PermManagersJournal, "repayment": PermManagersReceipts}
	documentPerms = map[string]app.Perm{"invoice": PermManagersInvoices, "receipt": PermManagersReceipts}
)

// ManagerWalletOp runs one idempotent wallet operation on manager id:
//   - deposit: credit the wallet (an invoice is issued unless issue_invoice
//     is false); a caller without tenant-wide authority pays it from its
//     own wallet, so money moves down the tree and is never created there;
//   - withdraw: debit the wallet (not below zero) back to such a caller;
//   - topup: credit extended on loan; the outstanding debt grows;
//   - pay-debt: a repayment of that debt; a receipt is issued.
//
// The path id may not be the caller.
func ManagerWalletOp(ctx context.Context, act *app.Actor, id int64, kind string, in WalletInput) (*WalletResult, error) {
	if err := act.Require(walletPerms[kind]); err != nil {
		return nil, err
	}
	if err := app.ValidateRequestID(in.RequestID, true); err != nil {
		return nil, err
	}
	if in.Amount <= 0 {
		return nil, app.ErrValidation("amount_must_be_positive", "amount")
	}
	if !in.Amount.InAmountRange() {
		return nil, app.ErrAmountOutOfRange("amount")
	}
	if id == act.ManagerID {
		return nil, app.ErrForbidden("own_wallet_forbidden")
	}
	t := act.Tenant
	var out WalletResult
	var replay bool
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		var err error
		out, replay, err = app.Idempotent(ctx, tx, app.Idem{Key: in.RequestID, Subject: fmt.Sprintf("managers/%d/wallet/%s", id, kind), Input: in},
			func() (WalletResult, error) { return walletEffect(ctx, tx, act, id, kind, in) })
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Replay = replay
	return &out, nil
}

func walletEffect(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, kind string, in WalletInput) (WalletResult, error) {
	res := WalletResult{ManagerID: id, Kind: kind, Amount: in.Amount}
	move := WalletMove{ManagerID: id, ActorID: act.ManagerID, Note: in.Note, RequestID: in.RequestID, Kind: kind}
	// Money a non-admin caller hands down comes out of its own wallet.
	counter := func(amount app.Money) error {
		if act.TenantWide {
			return nil
		}
		_, _, err := MoveManagerWallet(ctx, tx, WalletMove{ManagerID: act.ManagerID, Amount: amount, Kind: "transfer_" + kind,
			ActorID: act.ManagerID, RefType: "manager", RefID: id, Note: in.Note, RequestID: in.RequestID})
		return err
	}
	var err error
	switch kind {
	case WalletDeposit, WalletTopup:
		if kind == WalletDeposit {
			if err := counter(-in.Amount); err != nil {
				return res, err
			}
		}
		move.Amount = in.Amount
		if res.Balance, res.JournalID, err = MoveManagerWallet(ctx, tx, move); err != nil {
			return res, err
		}
		if kind == WalletTopup {
			if _, err := addLoan(ctx, tx, act, id, "loan", in.Amount, res.JournalID, in); err != nil {
				return res, err
			}
		}
		if in.IssueInvoice == nil || *in.IssueInvoice {
			if res.DocumentNo, err = issueDocument(ctx, tx, act, id, "invoice", in.Amount, res.JournalID, 0); err != nil {
				return res, err
			}
		}
	case WalletWithdraw:
		var bal int64
		if err := tx.QueryRowContext(ctx, `SELECT balance FROM managers WHERE id = ?`, id).Scan(&bal); err != nil {
			return res, err
		}
		if int64(in.Amount) > bal {
			return res, app.ErrConflict("insufficient_balance").With("balance", app.Money(bal))
		}
		move.Amount = -in.Amount
		if res.Balance, res.JournalID, err = MoveManagerWallet(ctx, tx, move); err != nil {
			return res, err
		}
		if err := counter(in.Amount); err != nil {
			return res, err
		}
	case WalletPayDebt:
		debt, err := outstandingDebt(ctx, tx, id)
		if err != nil {
			return res, err
		}
		if in.Amount > debt {
			return res, app.ErrConflict("amount_exceeds_debt").With("debt", debt)
		}
		loanID, err := addLoan(ctx, tx, act, id, "repayment", in.Amount, 0, in)
		if err != nil {
			return res, err
		}
		if res.DocumentNo, err = issueDocument(ctx, tx, act, id, "receipt", in.Amount, 0, loanID); err != nil {
			return res, err
		}
		var bal int64
		if err := tx.QueryRowContext(ctx, `SELECT balance FROM managers WHERE id = ?`, id).Scan(&bal); err != nil {
			return res, err
		}
		res.Balance = app.Money(bal)
	default:
		return res, app.ErrValidation("unknown_operation", "kind")
	}
	res.Debt, err = outstandingDebt(ctx, tx, id)
	return res, err
}

func outstandingDebt(ctx context.Context, q app.Querier, id int64) (app.Money, error) {
	var d int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE((SELECT outstanding_after FROM manager_loans WHERE manager_id = ? ORDER BY id DESC LIMIT 1), 0)`, id).Scan(&d)
	return app.Money(d), err
}

func addLoan(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, kind string, amount app.Money, journalID int64, in WalletInput) (int64, error) {
	cur, err := outstandingDebt(ctx, tx, id)
	if err != nil {
		return 0, err
	}
	var next app.Money
	if kind == "repayment" {
		next, err = cur.Sub(amount)
	} else {
		next, err = cur.Add(amount)
	}
	if err != nil {
		return 0, app.AsError(err).With("debt", cur)
	}
	var j any
	if journalID != 0 {
		j = journalID
	}
	r, err := tx.ExecContext(ctx, `INSERT INTO manager_loans(manager_id, kind, amount, outstanding_after, actor_id, journal_id, request_id, note, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
		id, kind, int64(amount), int64(next), act.ManagerID, j, in.RequestID, in.Note, act.Tenant.NowText())
	if err != nil {
		return 0, err
	}
	return r.LastInsertId()
}

func issueDocument(ctx context.Context, tx *sql.Tx, act *app.Actor, id int64, kind string, amount app.Money, journalID, loanID int64) (string, error) {
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM manager_documents`).Scan(&next); err != nil {
		return "", err
	}
	prefix := map[string]string{"invoice": "INV", "receipt": "RCT"}[kind]
	number := fmt.Sprintf("%s-%06d", prefix, next)
	var j, l any
	if journalID != 0 {
		j = journalID
	}
	if loanID != 0 {
		l = loanID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO manager_documents(id, manager_id, kind, number, amount, journal_id, loan_id, actor_id, created_at) VALUES (?,?,?,?,?,?,?,?,?)`,
		next, id, kind, number, int64(amount), j, l, act.ManagerID, act.Tenant.NowText())
	return number, err
}

// JournalEntry is a row of GET /managers/{id}/journal.
type JournalEntry struct {
	ID           int64     `json:"id"`
	Kind         string    `json:"kind"`
	Amount       app.Money `json:"amount"`
	BalanceAfter app.Money `json:"balance_after"`
	ActorID      *int64    `json:"actor_id"`
	RefType      string    `json:"ref_type"`
	RefID        *int64    `json:"ref_id"`
	DocumentNo   string    `json:"document_no"`
	Note         string    `json:"note"`
	RequestID    *string   `json:"request_id"`
	CreatedAt    app.Time  `json:"created_at"`
}

// JournalSpec is the journal's list allow-list.
var JournalSpec = app.ListSpec{Sorts: map[string]string{"id": "id", "created_at": "id"}, DefaultSort: "id",
	Filters: map[string]app.FilterKind{"kind": app.FilterString, "created_from": app.FilterTime, "created_to": app.FilterTime}}

// ManagerJournal lists every movement of a wallet, newest first, with the
// running balance: the authoritative record.
func ManagerJournal(ctx context.Context, act *app.Actor, id int64, q app.ListQuery) (app.Page[JournalEntry], error) {
	if err := act.Require(PermManagersJournal); err != nil {
		return app.Page[JournalEntry]{}, err
	}
	var page app.Page[JournalEntry]
	t := act.Tenant
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return page, err
	}
	where, args := "manager_id = ?", []any{id}
	if v, ok := q.Str("kind"); ok {
		where += " AND kind = ?"
		args = append(args, v)
	}
	if v, ok := q.TimeF("created_from"); ok {
		where += " AND created_at >= ?"
		args = append(args, v)
	}
	if v, ok := q.TimeF("created_to"); ok {
		where += " AND created_at <= ?"
		args = append(args, v)
	}
	return app.QueryPage(ctx, t, q, `id, kind, amount, balance_after, actor_id, ref_type, ref_id, document_no, note, request_id, created_at`,
		`FROM manager_journal WHERE `+where, args, "id", func(rows *sql.Rows) (JournalEntry, error) {
			var e JournalEntry
			var amt, bal int64
			var actor, ref sql.NullInt64
			var rid sql.NullString
			err := rows.Scan(&e.ID, &e.Kind, &amt, &bal, &actor, &e.RefType, &ref, &e.DocumentNo, &e.Note, &rid, &e.CreatedAt)
			e.Amount, e.BalanceAfter = app.Money(amt), app.Money(bal)
			e.ActorID, e.RefID, e.RequestID = nullInt(actor), nullInt(ref), nullStrPtr(rid)
			return e, err
		})
}

// DebtInfo is GET /managers/{id}/debt.
type DebtInfo struct {
	ManagerID       int64     `json:"manager_id"`
	Debt            app.Money `json:"debt"`
	Balance         app.Money `json:"balance"`
	DebtLimit       app.Money `json:"debt_limit"`
	AvailableCredit app.Money `json:"available_credit"`
}

// ManagerDebt reads the outstanding debt from the loan ledger.
func ManagerDebt(ctx context.Context, act *app.Actor, id int64) (*DebtInfo, error) {
	if err := act.Require(PermManagersJournal); err != nil {
		return nil, err
	}
	m, err := getManager(ctx, act, id)
	if err != nil {
		return nil, err
	}
	d, err := outstandingDebt(ctx, act.Tenant.DB.R, id)
	if err != nil {
		return nil, err
	}
	return &DebtInfo{ManagerID: id, Debt: d, Balance: m.Balance, DebtLimit: m.DebtLimit, AvailableCredit: m.Balance + m.DebtLimit}, nil
}

// LoanEntry is a row of the loan ledger.
type LoanEntry struct {
	ID               int64     `json:"id"`
	Kind             string    `json:"kind"`
	Amount           app.Money `json:"amount"`
	OutstandingAfter app.Money `json:"outstanding_after"`
	ActorID          *int64    `json:"actor_id"`
	Note             string    `json:"note"`
	CreatedAt        app.Time  `json:"created_at"`
}

// LoanSpec is the loans/payments list allow-list.
var LoanSpec = app.ListSpec{Sorts: map[string]string{"id": "id", "created_at": "id"}, DefaultSort: "id"}

// ManagerLoans lists loans and repayments (kind "" for both).
func ManagerLoans(ctx context.Context, act *app.Actor, id int64, kind string, q app.ListQuery) (app.Page[LoanEntry], error) {
	var page app.Page[LoanEntry]
	if err := act.Require(loanPerms[kind]); err != nil {
		return page, err
	}
	t := act.Tenant
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return page, err
	}
	where, args := "manager_id = ?", []any{id}
	if kind != "" {
		where += " AND kind = ?"
		args = append(args, kind)
	}
	return app.QueryPage(ctx, t, q, `id, kind, amount, outstanding_after, actor_id, note, created_at`, `FROM manager_loans WHERE `+where, args, "id",
		func(rows *sql.Rows) (LoanEntry, error) {
			var e LoanEntry
			var amt, out int64
			var actor sql.NullInt64
			err := rows.Scan(&e.ID, &e.Kind, &amt, &out, &actor, &e.Note, &e.CreatedAt)
			e.Amount, e.OutstandingAfter, e.ActorID = app.Money(amt), app.Money(out), nullInt(actor)
			return e, err
		})
}

// Document is an invoice or a receipt.
type Document struct {
	ID        int64     `json:"id"`
	Kind      string    `json:"kind"`
	Number    string    `json:"number"`
	Amount    app.Money `json:"amount"`
	JournalID *int64    `json:"journal_id"`
	ActorID   *int64    `json:"actor_id"`
	CreatedAt app.Time  `json:"created_at"`
}

// ManagerDocuments lists a manager's invoices or receipts, newest first.
func ManagerDocuments(ctx context.Context, act *app.Actor, id int64, kind string, q app.ListQuery) (app.Page[Document], error) {
	var page app.Page[Document]
	if err := act.Require(documentPerms[kind]); err != nil {
		return page, err
	}
	t := act.Tenant
	if err := act.RequireScope(ctx, t.DB.R, id); err != nil {
		return page, err
	}
	return app.QueryPage(ctx, t, q, `id, kind, number, amount, journal_id, actor_id, created_at`, `FROM manager_documents WHERE manager_id = ? AND kind = ?`,
		[]any{id, kind}, "id", func(rows *sql.Rows) (Document, error) {
			var d Document
			var amt int64
			var j, a sql.NullInt64
			err := rows.Scan(&d.ID, &d.Kind, &d.Number, &amt, &j, &a, &d.CreatedAt)
			d.Amount, d.JournalID, d.ActorID = app.Money(amt), nullInt(j), nullInt(a)
			return d, err
		})
}

// Overview is GET /managers/{id}/overview.
type Overview struct {
	Manager         *Manager  `json:"manager"`
	Balance         app.Money `json:"balance"`
	Debt            app.Money `json:"debt"`
	DebtLimit       app.Money `json:"debt_limit"`
	AvailableCredit app.Money `json:"available_credit"`
	PointsBalance   int64     `json:"points_balance"`
	UsersCount      int64     `json:"users_count"`
	SubManagers     int64     `json:"sub_managers_count"`
	LastMovementAt  app.Time  `json:"last_movement_at"`
}

// DebtInfo is the overview's part that GET /managers/{id}/debt answers.
func (o *Overview) DebtInfo() *DebtInfo {
	return &DebtInfo{ManagerID: o.Manager.ID, Debt: o.Debt, Balance: o.Balance, DebtLimit: o.DebtLimit, AvailableCredit: o.AvailableCredit}
}

// ManagerOverview summarises a manager's wallet and tree.
func ManagerOverview(ctx context.Context, act *app.Actor, id int64) (*Overview, error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return nil, err
	}
	m, err := getManager(ctx, act, id)
	if err != nil {
		return nil, err
	}
	r := act.Tenant.DB.R
	o := &Overview{Manager: m, Balance: m.Balance, DebtLimit: m.DebtLimit, AvailableCredit: m.Balance + m.DebtLimit, PointsBalance: m.PointsBalance}
	if o.Debt, err = outstandingDebt(ctx, r, id); err != nil {
		return nil, err
	}
	if err := r.QueryRowContext(ctx, `SELECT COUNT(*) FROM manager_tree WHERE ancestor_id = ? AND depth > 0`, id).Scan(&o.SubManagers); err != nil {
		return nil, err
	}
	if err := r.QueryRowContext(ctx, `SELECT `+usersCountExpr("?"), id).Scan(&o.UsersCount); err != nil {
		return nil, err
	}
	if err := r.QueryRowContext(ctx, `SELECT MAX(created_at) FROM manager_journal WHERE manager_id = ?`, id).Scan(&o.LastMovementAt); err != nil {
		return nil, err
	}
	return o, nil
}

// Profile is GET /managers/{id}/profile.
type Profile struct {
	Manager *Manager `json:"manager"`
	Parent  *struct {
		ID       int64   `json:"id"`
		Username *string `json:"username"`
	} `json:"parent"`
	Roles     []string `json:"roles"`
	GroupName *string  `json:"group_name"`
}

// ManagerProfile reads a manager with its parent, roles and group.
func ManagerProfile(ctx context.Context, act *app.Actor, id int64) (*Profile, error) {
	if err := act.Require(PermManagersIndex); err != nil {
		return nil, err
	}
	m, err := getManager(ctx, act, id)
	if err != nil {
		return nil, err
	}
	r := act.Tenant.DB.R
	p := &Profile{Manager: m, Roles: []string{}}
	if m.ParentManagerID != nil {
		p.Parent = &struct {
			ID       int64   `json:"id"`
			Username *string `json:"username"`
		}{ID: *m.ParentManagerID}
		var u sql.NullString
		if err := r.QueryRowContext(ctx, `SELECT username FROM managers WHERE id = ?`, *m.ParentManagerID).Scan(&u); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if u.Valid {
			p.Parent.Username = &u.String
		}
	}
	rows, err := r.QueryContext(ctx, `SELECT r.name FROM manager_roles mr JOIN roles r ON r.id = mr.role_id WHERE mr.manager_id = ? ORDER BY r.name`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		p.Roles = append(p.Roles, n)
	}
	if m.GroupID != nil {
		var g string
		if r.QueryRowContext(ctx, `SELECT name FROM manager_groups WHERE id = ?`, *m.GroupID).Scan(&g) == nil {
			p.GroupName = &g
		}
	}
	return p, rows.Err()
}

// PointsInput adds or deducts reward points.
type PointsInput struct {
	Points int64  `json:"points"`
	Note   string `json:"note"`
}

// MoveManagerPoints adds (sign +1) or deducts (sign -1) reward points.
func MoveManagerPoints(ctx context.Context, act *app.Actor, id int64, sign int64, in PointsInput) (int64, error) {
	if err := act.Require(PermManagersRewardPoints); err != nil {
		return 0, err
	}
	if in.Points <= 0 {
		return 0, app.ErrValidation("points_must_be_positive", "points")
	}
	if in.Points > app.MaxPoints {
		return 0, app.ErrValidation("out_of_range", "points")
	}
	var after int64
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := act.RequireScope(ctx, tx, id); err != nil {
			return err
		}
		var cur int64
		if err := tx.QueryRowContext(ctx, `SELECT points_balance FROM managers WHERE id = ?`, id).Scan(&cur); err != nil {
			return err
		}
		var err error
		if after, err = app.AddPoints(cur, sign*in.Points); err != nil {
			return err
		}
		if after < 0 {
			return app.ErrConflict("insufficient_points")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE managers SET points_balance = ?, updated_at = ? WHERE id = ?`, after, act.Tenant.NowText(), id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO manager_points(manager_id, delta, balance_after, actor_id, note, created_at) VALUES (?,?,?,?,?,?)`,
			id, sign*in.Points, after, act.ManagerID, in.Note, act.Tenant.NowText())
		return err
	})
	return after, err
}

func nullInt(v sql.NullInt64) *int64 {
	if v.Valid {
		return &v.Int64
	}
	return nil
}

func nullStrPtr(v sql.NullString) *string {
	if v.Valid {
		return &v.String
	}
	return nil
}
