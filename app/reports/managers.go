package reports

import (
	"context"
	"database/sql"

	"xr/app"
	"xr/app/identity"
)

// JournalRow is a row of /admin/reports/manager-journal (and, restricted
// to wallet transfers, of money-transfer): one wallet movement of a
// manager in scope, signed (credit > 0), with the running balance.
type JournalRow struct {
	ID           int64     `json:"id"`
	ManagerID    int64     `json:"manager_id"`
	Manager      string    `json:"manager"`
	Kind         string    `json:"kind"`
	Amount       app.Money `json:"amount"`
	BalanceAfter app.Money `json:"balance_after"`
	ActorID      *int64    `json:"actor_id"`
	Actor        string    `json:"actor"`
	RefType      string    `json:"ref_type"`
	RefID        *int64    `json:"ref_id"`
	DocumentNo   string    `json:"document_no"`
	Note         string    `json:"note"`
	CreatedAt    app.Time  `json:"created_at"`
}

// ManagerJournalSpec: filters manager_id, kind, actor_id; q searches the
// note, document number and manager.
var ManagerJournalSpec = spec("created_at", map[string]string{"created_at": "j.created_at", "id": "j.id", "amount": "j.amount", "manager": "m.username"},
	map[string]app.FilterKind{"manager_id": app.FilterInt, "kind": app.FilterString, "actor_id": app.FilterInt})

// ManagerJournal lists wallet movements across the managers in scope.
// Aggregates: entries, credits, debits (positive), net.
func ManagerJournal(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[JournalRow], error) {
	if err := act.Require(identity.PermManagersJournal); err != nil {
		return app.Page[JournalRow]{}, err
	}
	var w where
	w.scope(act, "j.manager_id")
	w.period(q, "j.created_at")
	w.manager(q, "j.manager_id")
	w.eq(q, "kind", "j.kind")
	w.eq(q, "actor_id", "j.actor_id")
	w.like(q, "j.note", "j.document_no", "m.username", "m.email")
	from := `FROM manager_journal j JOIN managers m ON m.id = j.manager_id LEFT JOIN managers am ON am.id = j.actor_id` + w.sql()
	aggs := []agg{count("entries", "COUNT(*)"), money("credits", "SUM(CASE WHEN j.amount > 0 THEN j.amount END)"),
		money("debits", "SUM(CASE WHEN j.amount < 0 THEN -j.amount END)"), money("net", "SUM(j.amount)")}
	return run(ctx, act, q, aggs, journalCols, from, w.args, "j.id", scanJournal)
}

const journalCols = `j.id, j.manager_id, ` + "COALESCE(m.username, m.email, '')" + `, j.kind, j.amount, j.balance_after, j.actor_id, ` +
	"COALESCE(am.username, am.email, '')" + `, j.ref_type, j.ref_id, j.document_no, j.note, j.created_at`

func scanJournal(rows *sql.Rows) (JournalRow, error) {
	var r JournalRow
	var amt, bal int64
	var actor, ref sql.NullInt64
	err := rows.Scan(&r.ID, &r.ManagerID, &r.Manager, &r.Kind, &amt, &bal, &actor, &r.Actor, &r.RefType, &ref, &r.DocumentNo, &r.Note, &r.CreatedAt)
	r.Amount, r.BalanceAfter, r.ActorID, r.RefID = app.Money(amt), app.Money(bal), ptr(actor), ptr(ref)
	return r, err
}

// Transfer is a row of /admin/reports/money-transfer: a wallet movement
// that moved money between managers — deposit / withdraw on the receiving
// wallet, transfer_deposit / transfer_withdraw on the wallet of the
// reseller who handed it down (or took it back). direction is "in" for a
// credit, "out" for a debit; counterpart is the other side (the ref'd
// manager of a transfer_* row, the acting manager of a deposit/withdraw).
// Till sales move money too: pos_sale (the cashier's wallet paying for
// minted cards and top-ups) and pos_void (its refund).
type Transfer struct {
	JournalRow
	Direction     string `json:"direction"`
	CounterpartID *int64 `json:"counterpart_id"`
	Counterpart   string `json:"counterpart"`
}

// MoneyTransferSpec: filters manager_id, counterpart_id, kind.
var MoneyTransferSpec = spec("created_at", map[string]string{"created_at": "j.created_at", "id": "j.id", "amount": "j.amount"},
	map[string]app.FilterKind{"manager_id": app.FilterInt, "counterpart_id": app.FilterInt, "kind": app.FilterString})

// MoneyTransfer lists transfers between wallets. Aggregates: transfers,
// total_in, total_out (positive).
func MoneyTransfer(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Transfer], error) {
	if err := act.Require(PermReportMoneyTransfer); err != nil {
		return app.Page[Transfer]{}, err
	}
	const cp = `(CASE WHEN j.ref_type = 'manager' THEN j.ref_id ELSE j.actor_id END)`
	var w where
	w.add(`(j.kind IN ('deposit', 'withdraw', 'pos_sale', 'pos_void') OR j.kind LIKE 'transfer\_%' ESCAPE '\')`)
	w.scope(act, "j.manager_id")
	w.period(q, "j.created_at")
	w.manager(q, "j.manager_id")
	w.eq(q, "kind", "j.kind")
	w.eq(q, "counterpart_id", cp)
	from := `FROM manager_journal j JOIN managers m ON m.id = j.manager_id LEFT JOIN managers am ON am.id = j.actor_id
		LEFT JOIN managers cm ON cm.id = ` + cp + w.sql()
	aggs := []agg{count("transfers", "COUNT(*)"), money("total_in", "SUM(CASE WHEN j.amount > 0 THEN j.amount END)"),
		money("total_out", "SUM(CASE WHEN j.amount < 0 THEN -j.amount END)")}
	return run(ctx, act, q, aggs, journalCols+`, cm.id, `+mname("cm"), from, w.args, "j.id", func(rows *sql.Rows) (Transfer, error) {
		var r Transfer
		var amt, bal int64
		var actor, ref, cpID sql.NullInt64
		err := rows.Scan(&r.ID, &r.ManagerID, &r.Manager, &r.Kind, &amt, &bal, &actor, &r.Actor, &r.RefType, &ref, &r.DocumentNo, &r.Note, &r.CreatedAt,
			&cpID, &r.Counterpart)
		r.Amount, r.BalanceAfter, r.ActorID, r.RefID, r.CounterpartID = app.Money(amt), app.Money(bal), ptr(actor), ptr(ref), ptr(cpID)
		r.Direction = "in"
		if amt < 0 {
			r.Direction = "out"
		}
		return r, err
	})
}

// DocumentRow is a row of /admin/reports/manager-invoices and
// manager-receipts: an invoice (deposit, top-up) or a receipt (debt
// repayment) issued to a manager in scope.
type DocumentRow struct {
	ID        int64     `json:"id"`
	Number    string    `json:"number"`
	Kind      string    `json:"kind"`
	ManagerID int64     `json:"manager_id"`
	Manager   string    `json:"manager"`
	Amount    app.Money `json:"amount"`
	JournalID *int64    `json:"journal_id"`
	LoanID    *int64    `json:"loan_id"`
	ActorID   *int64    `json:"actor_id"`
	Actor     string    `json:"actor"`
	CreatedAt app.Time  `json:"created_at"`
}

// DocumentsSpec: filter manager_id; q searches the number and manager.
var DocumentsSpec = spec("created_at", map[string]string{"created_at": "d.created_at", "id": "d.id", "amount": "d.amount", "number": "d.number"},
	map[string]app.FilterKind{"manager_id": app.FilterInt})

// ManagerInvoices lists invoices. Aggregates: count, amount.
func ManagerInvoices(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[DocumentRow], error) {
	if err := act.Require(identity.PermManagersInvoices); err != nil {
		return app.Page[DocumentRow]{}, err
	}
	return documents(ctx, act, "invoice", q)
}

// ManagerReceipts lists receipts. Aggregates: count, amount.
func ManagerReceipts(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[DocumentRow], error) {
	if err := act.Require(identity.PermManagersReceipts); err != nil {
		return app.Page[DocumentRow]{}, err
	}
	return documents(ctx, act, "receipt", q)
}

func documents(ctx context.Context, act *app.Actor, kind string, q app.ListQuery) (app.Page[DocumentRow], error) {
	var w where
	w.add("d.kind = ?", kind)
	w.scope(act, "d.manager_id")
	w.period(q, "d.created_at")
	w.manager(q, "d.manager_id")
	w.like(q, "d.number", "m.username", "m.email")
	from := `FROM manager_documents d JOIN managers m ON m.id = d.manager_id LEFT JOIN managers am ON am.id = d.actor_id` + w.sql()
	aggs := []agg{count("count", "COUNT(*)"), money("amount", "SUM(d.amount)")}
	return run(ctx, act, q, aggs, `d.id, d.number, d.kind, d.manager_id, `+mname("m")+`, d.amount, d.journal_id, d.loan_id, d.actor_id, `+mname("am")+`, d.created_at`,
		from, w.args, "d.id", func(rows *sql.Rows) (DocumentRow, error) {
			var r DocumentRow
			var amt int64
			var j, l, a sql.NullInt64
			err := rows.Scan(&r.ID, &r.Number, &r.Kind, &r.ManagerID, &r.Manager, &amt, &j, &l, &a, &r.Actor, &r.CreatedAt)
			r.Amount, r.JournalID, r.LoanID, r.ActorID = app.Money(amt), ptr(j), ptr(l), ptr(a)
			return r, err
		})
}

// Claim is a row of /admin/reports/claims-managers: a manager in scope
// with an outstanding loan (credit extended by top-up) as of filter[to]
// (now when open); loaned and repaid are the loan movements inside the
// period.
type Claim struct {
	ManagerID   int64     `json:"manager_id"`
	Manager     string    `json:"manager"`
	ParentID    *int64    `json:"parent_id"`
	Balance     app.Money `json:"balance"` // current wallet balance
	Outstanding app.Money `json:"outstanding"`
	Loaned      app.Money `json:"loaned"`
	Repaid      app.Money `json:"repaid"`
	LastLoanAt  app.Time  `json:"last_loan_at"`
}

// ClaimsSpec: filter manager_id; q searches the manager.
var ClaimsSpec = spec("last_loan_at", map[string]string{"last_loan_at": "g.last_loan_at", "outstanding": "g.outstanding", "manager": "g.manager"},
	map[string]app.FilterKind{"manager_id": app.FilterInt})

// ClaimsManagers lists outstanding loans per manager. Aggregates:
// managers, outstanding, loaned, repaid.
func ClaimsManagers(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Claim], error) {
	if err := act.Require(PermReportDebts); err != nil {
		return app.Page[Claim]{}, err
	}
	from, to := bounds(q)
	var w where
	w.scope(act, "m.id")
	w.manager(q, "m.id")
	w.like(q, "m.username", "m.email")
	args := append([]any{to, from, to, from, to, to}, w.args...)
	src := `FROM (SELECT m.id AS id, ` + mname("m") + ` AS manager, m.parent_id AS parent_id, m.balance AS balance,
		COALESCE((SELECT l.outstanding_after FROM manager_loans l WHERE l.manager_id = m.id AND l.created_at <= ? ORDER BY l.id DESC LIMIT 1), 0) AS outstanding,
		(SELECT COALESCE(SUM(l.amount), 0) FROM manager_loans l WHERE l.manager_id = m.id AND l.kind = 'loan' AND l.created_at >= ? AND l.created_at <= ?) AS loaned,
		(SELECT COALESCE(SUM(l.amount), 0) FROM manager_loans l WHERE l.manager_id = m.id AND l.kind = 'repayment' AND l.created_at >= ? AND l.created_at <= ?) AS repaid,
		(SELECT MAX(l.created_at) FROM manager_loans l WHERE l.manager_id = m.id AND l.kind = 'loan' AND l.created_at <= ?) AS last_loan_at
		FROM managers m` + w.sql() + `) g WHERE g.outstanding > 0`
	aggs := []agg{count("managers", "COUNT(*)"), money("outstanding", "SUM(g.outstanding)"), money("loaned", "SUM(g.loaned)"), money("repaid", "SUM(g.repaid)")}
	return run(ctx, act, q, aggs, `g.id, g.manager, g.parent_id, g.balance, g.outstanding, g.loaned, g.repaid, g.last_loan_at`, src, args, "g.id",
		func(rows *sql.Rows) (Claim, error) {
			var r Claim
			var parent sql.NullInt64
			var bal, out, loaned, repaid int64
			err := rows.Scan(&r.ManagerID, &r.Manager, &parent, &bal, &out, &loaned, &repaid, &r.LastLoanAt)
			r.ParentID, r.Balance, r.Outstanding, r.Loaned, r.Repaid = ptr(parent), app.Money(bal), app.Money(out), app.Money(loaned), app.Money(repaid)
			return r, err
		})
}

// ManagerDebtor is a row of /admin/reports/debtors-managers: a manager in
// scope that owes money now — a negative wallet balance (spent on its debt
// limit) and/or an outstanding loan. total_owed is their sum. The period
// selects by the date of the manager's last money movement (journal or
// loan), to find fresh or stale debts.
type ManagerDebtor struct {
	ManagerID       int64     `json:"manager_id"`
	Manager         string    `json:"manager"`
	ParentID        *int64    `json:"parent_id"`
	Balance         app.Money `json:"balance"`
	DebtLimit       app.Money `json:"debt_limit"`
	NegativeBalance app.Money `json:"negative_balance"`
	LoanDebt        app.Money `json:"loan_debt"`
	TotalOwed       app.Money `json:"total_owed"`
	LastMovementAt  app.Time  `json:"last_movement_at"`
}

// DebtorsManagersSpec: filter manager_id; q searches the manager.
var DebtorsManagersSpec = spec("last_movement_at", map[string]string{"last_movement_at": "g.last_movement_at", "total_owed": "g.total_owed", "manager": "g.manager"},
	map[string]app.FilterKind{"manager_id": app.FilterInt})

// managerDebtSQL is the per-manager debt projection of the managers in w.
func managerDebtSQL(w where) string {
	return `SELECT m.id AS id, ` + mname("m") + ` AS manager, m.parent_id AS parent_id, m.balance AS balance, m.debt_limit AS debt_limit,
		MAX(0, -m.balance) AS negative_balance,
		COALESCE((SELECT l.outstanding_after FROM manager_loans l WHERE l.manager_id = m.id ORDER BY l.id DESC LIMIT 1), 0) AS loan_debt,
		NULLIF(MAX(COALESCE((SELECT MAX(j.created_at) FROM manager_journal j WHERE j.manager_id = m.id), ''),
			COALESCE((SELECT MAX(l.created_at) FROM manager_loans l WHERE l.manager_id = m.id), '')), '') AS last_movement_at
		FROM managers m` + w.sql()
}

// DebtorsManagers lists indebted managers. Aggregates: managers,
// negative_balance, loan_debt, total_owed.
func DebtorsManagers(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[ManagerDebtor], error) {
	if err := act.Require(PermReportDebts); err != nil {
		return app.Page[ManagerDebtor]{}, err
	}
	var w where
	w.scope(act, "m.id")
	w.manager(q, "m.id")
	w.like(q, "m.username", "m.email")
	var o where
	o.add("(g.negative_balance > 0 OR g.loan_debt > 0)")
	o.period(q, "g.last_movement_at")
	src := `FROM (SELECT d.*, d.negative_balance + d.loan_debt AS total_owed FROM (` + managerDebtSQL(w) + `) d) g` + o.sql()
	aggs := []agg{count("managers", "COUNT(*)"), money("negative_balance", "SUM(g.negative_balance)"), money("loan_debt", "SUM(g.loan_debt)"),
		money("total_owed", "SUM(g.total_owed)")}
	return run(ctx, act, q, aggs, `g.id, g.manager, g.parent_id, g.balance, g.debt_limit, g.negative_balance, g.loan_debt, g.total_owed, g.last_movement_at`,
		src, append(w.args, o.args...), "g.id", func(rows *sql.Rows) (ManagerDebtor, error) {
			var r ManagerDebtor
			var parent sql.NullInt64
			var bal, lim, neg, loan, tot int64
			err := rows.Scan(&r.ManagerID, &r.Manager, &parent, &bal, &lim, &neg, &loan, &tot, &r.LastMovementAt)
			r.ParentID, r.Balance, r.DebtLimit, r.NegativeBalance, r.LoanDebt, r.TotalOwed = ptr(parent), app.Money(bal), app.Money(lim), app.Money(neg), app.Money(loan), app.Money(tot)
			return r, err
		})
}

// UserDebtor is a row of /admin/reports/debtors-users: a live subscriber
// in scope with a negative balance (debt = −balance). The period selects
// by the date of the subscriber's last balance movement.
type UserDebtor struct {
	UserID         int64      `json:"user_id"`
	Username       string     `json:"username"`
	Name           string     `json:"name"`
	Phone          string     `json:"phone"`
	ManagerID      int64      `json:"manager_id"`
	Manager        string     `json:"manager"`
	ProfileID      *int64     `json:"profile_id"`
	Profile        string     `json:"profile"`
	Balance        app.Money  `json:"balance"`
	Debt           app.Money  `json:"debt"`
	DebtLimit      *app.Money `json:"debt_limit"` // null: the tenant default applies
	Enabled        bool       `json:"enabled"`
	Expiration     app.Time   `json:"expiration"`
	LastMovementAt app.Time   `json:"last_movement_at"`
}

// DebtorsUsersSpec: filters manager_id, profile_id; q searches username,
// name and phone.
var DebtorsUsersSpec = spec("last_movement_at", map[string]string{"last_movement_at": "g.last_movement_at", "debt": "g.debt", "username": "g.username"},
	map[string]app.FilterKind{"manager_id": app.FilterInt, "profile_id": app.FilterInt})

// DebtorsUsers lists subscribers in debt. Aggregates: users, debt.
func DebtorsUsers(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[UserDebtor], error) {
	if err := act.Require(PermReportDebts); err != nil {
		return app.Page[UserDebtor]{}, err
	}
	var w where
	w.add("u.deleted_at IS NULL AND u.balance < 0")
	w.scope(act, "u.parent_id")
	w.manager(q, "u.parent_id")
	w.eq(q, "profile_id", "u.profile_id")
	w.like(q, "u.username", "u.firstname", "u.lastname", "u.phone")
	var o where
	o.period(q, "g.last_movement_at")
	src := `FROM (SELECT u.id AS id, u.username AS username, TRIM(u.firstname || ' ' || u.lastname) AS name, u.phone AS phone,
		u.parent_id AS manager_id, ` + mname("m") + ` AS manager, u.profile_id AS profile_id, COALESCE(p.name, '') AS profile,
		u.balance AS balance, -u.balance AS debt, u.debt_limit AS debt_limit, u.enabled AS enabled, u.expiration AS expiration,
		(SELECT MAX(l.created_at) FROM user_ledger l WHERE l.user_id = u.id) AS last_movement_at
		FROM users u LEFT JOIN managers m ON m.id = u.parent_id LEFT JOIN profiles p ON p.id = u.profile_id` + w.sql() + `) g` + o.sql()
	aggs := []agg{count("users", "COUNT(*)"), money("debt", "SUM(g.debt)")}
	return run(ctx, act, q, aggs, `g.id, g.username, g.name, g.phone, g.manager_id, g.manager, g.profile_id, g.profile, g.balance, g.debt, g.debt_limit,
		g.enabled, g.expiration, g.last_movement_at`, src, append(w.args, o.args...), "g.id", func(rows *sql.Rows) (UserDebtor, error) {
		var r UserDebtor
		var pid, lim sql.NullInt64
		var bal, debt int64
		err := rows.Scan(&r.UserID, &r.Username, &r.Name, &r.Phone, &r.ManagerID, &r.Manager, &pid, &r.Profile, &bal, &debt, &lim,
			&r.Enabled, &r.Expiration, &r.LastMovementAt)
		r.ProfileID, r.Balance, r.Debt, r.DebtLimit = ptr(pid), app.Money(bal), app.Money(debt), mptr(lim)
		return r, err
	})
}

// Debt is a row of /admin/reports/debts: every debtor in scope, managers
// (negative balance + outstanding loan) and subscribers (negative
// balance) together. manager_id is the debtor's own id for a manager, the
// owning manager for a subscriber.
type Debt struct {
	Kind           string    `json:"kind"` // manager | user
	ID             int64     `json:"id"`
	Name           string    `json:"name"`
	ManagerID      int64     `json:"manager_id"`
	Balance        app.Money `json:"balance"`
	Owed           app.Money `json:"owed"`
	LastMovementAt app.Time  `json:"last_movement_at"`
}

// DebtsSpec: filters kind (manager|user), manager_id; q searches names.
var DebtsSpec = spec("last_movement_at", map[string]string{"last_movement_at": "g.last_movement_at", "owed": "g.owed", "name": "g.name"},
	map[string]app.FilterKind{"kind": app.FilterString, "manager_id": app.FilterInt})

// Debts lists both kinds of debtors. Aggregates: debtors, managers, users,
// managers_owed, users_owed, total_owed.
func Debts(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[Debt], error) {
	if err := act.Require(PermReportDebts); err != nil {
		return app.Page[Debt]{}, err
	}
	var wm where
	wm.scope(act, "m.id")
	wm.manager(q, "m.id")
	wm.like(q, "m.username", "m.email")
	var wu where
	wu.add("u.deleted_at IS NULL AND u.balance < 0")
	wu.scope(act, "u.parent_id")
	wu.manager(q, "u.parent_id")
	wu.like(q, "u.username", "u.firstname", "u.lastname")
	var o where
	o.add("g.owed > 0")
	o.period(q, "g.last_movement_at")
	o.eq(q, "kind", "g.kind")
	src := `FROM (SELECT 'manager' AS kind, d.id AS id, d.manager AS name, d.id AS manager_id, d.balance AS balance,
			d.negative_balance + d.loan_debt AS owed, d.last_movement_at AS last_movement_at, 'm' || printf('%020d', d.id) AS k
		FROM (` + managerDebtSQL(wm) + `) d
		UNION ALL
		SELECT 'user', u.id, u.username, u.parent_id, u.balance, -u.balance,
			(SELECT MAX(l.created_at) FROM user_ledger l WHERE l.user_id = u.id), 'u' || printf('%020d', u.id)
		FROM users u` + wu.sql() + `) g` + o.sql()
	aggs := []agg{count("debtors", "COUNT(*)"), count("managers", "SUM(g.kind = 'manager')"), count("users", "SUM(g.kind = 'user')"),
		money("managers_owed", "SUM(CASE WHEN g.kind = 'manager' THEN g.owed END)"),
		money("users_owed", "SUM(CASE WHEN g.kind = 'user' THEN g.owed END)"), money("total_owed", "SUM(g.owed)")}
	args := append(append(wm.args, wu.args...), o.args...)
	return run(ctx, act, q, aggs, `g.kind, g.id, g.name, g.manager_id, g.balance, g.owed, g.last_movement_at`, src, args, "g.k",
		func(rows *sql.Rows) (Debt, error) {
			var r Debt
			var bal, owed int64
			err := rows.Scan(&r.Kind, &r.ID, &r.Name, &r.ManagerID, &bal, &owed, &r.LastMovementAt)
			r.Balance, r.Owed = app.Money(bal), app.Money(owed)
			return r, err
		})
}

// GatewayTxn is a row of /admin/reports/gateway-txns: one payment through
// a gateway (app/payments), in any state.
type GatewayTxn struct {
	ID        int64     `json:"id"`
	Gateway   string    `json:"gateway"`
	Reference string    `json:"reference"`
	Purpose   string    `json:"purpose"`
	UserID    *int64    `json:"user_id"`
	Username  *string   `json:"username"`
	ManagerID *int64    `json:"manager_id"`
	Amount    app.Money `json:"amount"`
	Fee       app.Money `json:"fee"`
	Total     app.Money `json:"total"`
	Currency  string    `json:"currency"`
	Status    string    `json:"status"`
	Reason    string    `json:"reason"`
	CreatedAt app.Time  `json:"created_at"`
	SettledAt app.Time  `json:"settled_at"`
}

// GatewayTxnsSpec: filters user_id, manager_id (subtree), status, gateway,
// purpose, the period on created_at, q (reference, username).
var GatewayTxnsSpec = spec("created_at", map[string]string{"created_at": "g.id", "amount": "g.amount"},
	map[string]app.FilterKind{"user_id": app.FilterInt, "manager_id": app.FilterInt, "status": app.FilterString,
		"gateway": app.FilterString, "purpose": app.FilterString})

// GatewayTxns lists payments of subscribers in the caller's subtree
// (prm_report_gateway_transactions_all: every payment, the shop's too).
// Aggregates: count, amount (all listed), succeeded_amount, fees
// (succeeded).
func GatewayTxns(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[GatewayTxn], error) {
	if err := act.Require(PermReportGatewayTransactions, PermReportGatewayTransactionsAll); err != nil {
		return app.Page[GatewayTxn]{}, err
	}
	var w where
	if !act.Can(PermReportGatewayTransactionsAll) {
		w.scope(act, "g.manager_id")
	}
	w.period(q, "g.created_at")
	w.manager(q, "g.manager_id")
	w.eq(q, "user_id", "g.user_id")
	w.eq(q, "status", "g.state")
	w.eq(q, "gateway", "g.gateway")
	w.eq(q, "purpose", "g.purpose")
	w.like(q, "g.reference", "u.username")
	from := `FROM payments g LEFT JOIN users u ON u.id = g.user_id` + w.sql()
	aggs := []agg{count("count", "COUNT(*)"), money("amount", "SUM(g.amount)"),
		money("succeeded_amount", "SUM(CASE WHEN g.state = 'succeeded' THEN g.amount END)"),
		money("fees", "SUM(CASE WHEN g.state = 'succeeded' THEN g.fee END)")}
	return run(ctx, act, q, aggs, `g.id, g.gateway, g.reference, g.purpose, g.user_id, u.username, g.manager_id, g.amount, g.fee, g.total,
		g.currency, g.state, g.reason, g.created_at, g.settled_at`, from, w.args, "g.id", func(rows *sql.Rows) (GatewayTxn, error) {
		var r GatewayTxn
		var uid, mid sql.NullInt64
		var uname sql.NullString
		var amt, fee, total int64
		err := rows.Scan(&r.ID, &r.Gateway, &r.Reference, &r.Purpose, &uid, &uname, &mid, &amt, &fee, &total, &r.Currency, &r.Status,
			&r.Reason, &r.CreatedAt, &r.SettledAt)
		r.Amount, r.Fee, r.Total, r.UserID, r.ManagerID = app.Money(amt), app.Money(fee), app.Money(total), ptr(uid), ptr(mid)
		if uname.Valid {
			r.Username = &uname.String
		}
		return r, err
	})
}
