package payments

import (
	"context"
	"database/sql"
	"net/http"

	"xr/app"
	"xr/app/reports"
	"xr/app/subs"
)

// Staff rows: one payment with its log, and the manual confirmation or
// rejection of a payment (a bank transfer that arrived, or a payment held
// for review). The list is the reports row gateway-txns.

// Detail is GET /admin/payments/{id}: the payment and its log.
type Detail struct {
	Payment
	Events []Event `json:"events"`
}

// readScoped reads a payment the caller may see: one of a subscriber in
// its subtree ("_all" permission: any); a shop buyer's payment (no
// subscriber) only tenant-wide. Anything else answers like a missing one.
func readScoped(ctx context.Context, act *app.Actor, q app.Querier, id int64) (*Payment, error) {
	cond, args := act.ScopeSQL("manager_id")
	if act.Can(reports.PermReportGatewayTransactionsAll) {
		cond, args = "1=1", nil
	}
	return readPayment(ctx, q, "id = ? AND "+cond, append([]any{id}, args...)...)
}

// GetDetail answers one payment for staff.
func GetDetail(ctx context.Context, act *app.Actor, id int64) (*Detail, error) {
	if err := act.Require(reports.PermReportGatewayTransactions, reports.PermReportGatewayTransactionsAll); err != nil {
		return nil, err
	}
	t := act.Tenant
	p, err := readScoped(ctx, act, t.DB.R, id)
	if err != nil {
		return nil, err
	}
	ev, err := paymentEvents(ctx, t.DB.R, id)
	if err != nil {
		return nil, err
	}
	return &Detail{Payment: *p, Events: ev}, nil
}

// DecisionInput is the body of confirm and reject. Confirm may state the
// total received; it must equal the payment's total (a different amount is
// rejected and paid again, never credited partly).
type DecisionInput struct {
	ReceivedTotal *app.Money `json:"received_total"`
	Note          string     `json:"note"`
}

// Confirm is POST /admin/payments/{id}/confirm: staff saw the money (a
// manual payment still pending, or a payment held for review): it succeeds
// and is credited, once. Needs prm_users_deposit and the payment in scope.
func Confirm(ctx context.Context, act *app.Actor, id int64, in DecisionInput) (*Detail, error) {
	return decide(ctx, act, id, in, true)
}

// Reject is POST /admin/payments/{id}/reject: the money never came (or a
// held payment is refused): it fails and releases what it reserved.
func Reject(ctx context.Context, act *app.Actor, id int64, in DecisionInput) (*Detail, error) {
	return decide(ctx, act, id, in, false)
}

func decide(ctx context.Context, act *app.Actor, id int64, in DecisionInput, confirm bool) (*Detail, error) {
	if err := act.Require(subs.PermUsersDeposit); err != nil {
		return nil, err
	}
	if len(in.Note) > 500 {
		return nil, app.ErrValidation("too_long", "note")
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		p, err := readScoped(ctx, act, tx, id)
		if err != nil {
			return err
		}
		switch {
		case p.State == StateReview:
		case p.State == StatePending && p.Gateway == "manual":
		case confirm && p.State == StateSucceeded, !confirm && p.State == StateFailed:
			return nil // already decided this way: idempotent
		default:
			return app.ErrConflict("payment_not_open").With("state", p.State)
		}
		if !confirm {
			return transition(ctx, tx, t, p, StateFailed, "rejected", "staff", "", act.ManagerID, in.Note)
		}
		if in.ReceivedTotal != nil && *in.ReceivedTotal != p.Total {
			return app.ErrConflict("amount_mismatch").With("total", p.Total)
		}
		return transition(ctx, tx, t, p, StateSucceeded, "", "staff", "", act.ManagerID, in.Note)
	})
	if err != nil {
		return nil, err
	}
	return GetDetail(ctx, act, id)
}

// ReceiveNotice is POST /payments/webhooks/{gateway} (public, on the
// tenant host): the provider's own verification decides; a notice xr does
// not act on is acknowledged.
func ReceiveNotice(ctx context.Context, t *app.Tenant, code string, body []byte, header http.Header) error {
	pr, ok := providerOf(t.App, code)
	if !ok {
		return app.ErrNotFound()
	}
	rc, ok := pr.(Receiver)
	if !ok {
		return app.ErrNotFound()
	}
	g, secrets, err := readGateway(ctx, t, t.DB.R, code)
	if err != nil {
		return err
	}
	n, err := rc.ParseNotice(envFor(t, g, secrets, ""), body, header)
	if err != nil || n == nil {
		return err
	}
	err = Settle(ctx, t, *n)
	if e := app.AsError(err); e != nil && e.Code == app.CodeNotFound {
		return nil // not one of ours (another integration on the same account)
	}
	return err
}
