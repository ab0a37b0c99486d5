package cards

// Series and card rules that once departed from the spec or issue 6: a
// transferred series, a replayed transfer outside scope, a card login.

import (
	"database/sql"
	"strings"
	"testing"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// A series transfer is a transfer: once a series has changed hands, it can
// no longer be deleted — else deleting it refunds the first owner's charge
// to the new owner (money that never was the new owner's).
func TestSeriesTransferThenDeleteRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.manager(0, "r")
	agent := e.manager(0, "agent")
	e.exec(`UPDATE managers SET balance = 1000000 WHERE id = ?`, r)
	b := e.series(e.owner, CreateInput{Quantity: 3, FaceValue: xrtest.MoneyPtr("10"), OwnerManagerID: r, UnitPrice: xrtest.MoneyPtr("5")})
	if b.Charged != xrtest.Money("15") {
		t.Fatalf("charged %s", b.Charged)
	}
	// Every card revoked by the suspension: the series moves without cards.
	if _, err := SuspendBatch(e.ctx, e.owner, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := TransferSeries(e.ctx, e.owner, b.ID, SeriesTransferInput{ToManagerID: agent, RequestID: e.key()}); err != nil {
		t.Fatal(err)
	}
	_, err := DeleteBatch(e.ctx, e.owner, b.ID)
	xrtest.WantReason(t, err, 409, "card_batch_in_use")
	if a := e.scalar(`SELECT balance FROM managers WHERE id = ?`, agent); a != 0 {
		t.Fatalf("the new owner was refunded the first owner's charge: wallet %d", a)
	}
	e.stockOK(b.ID)
}

// A transfer (series transfer, revert) replayed by a caller outside the
// subtree answers the 404 of an unknown record, not the stored outcome: the
// key never reveals a record outside the scope.
func TestTransferReplayOutsideScopeIs404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.manager(0, "r1")
	a1 := e.manager(r1, "a1")
	r2 := e.manager(0, "r2")
	b := e.series(xrtest.Reseller(e.ten, r1), CreateInput{Quantity: 2})
	tr, err := TransferSeries(e.ctx, xrtest.Reseller(e.ten, r1), b.ID, SeriesTransferInput{ToManagerID: a1, RequestID: "st-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = TransferSeries(e.ctx, xrtest.Reseller(e.ten, r2), b.ID, SeriesTransferInput{ToManagerID: a1, RequestID: "st-1"})
	xrtest.WantReason(t, err, 404, "not_found")
	if _, err := RevertTransfer(e.ctx, xrtest.Reseller(e.ten, r1), tr.ID, RevertInput{RequestID: "rv-1"}); err != nil {
		t.Fatal(err)
	}
	_, err = RevertTransfer(e.ctx, xrtest.Reseller(e.ten, r2), tr.ID, RevertInput{RequestID: "rv-1"})
	xrtest.WantReason(t, err, 404, "not_found")
	// Inside the scope the replays still answer the original outcome.
	if rep, err := TransferSeries(e.ctx, xrtest.Reseller(e.ten, r1), b.ID, SeriesTransferInput{ToManagerID: a1, RequestID: "st-1"}); err != nil || !rep.Replay || rep.ID != tr.ID {
		t.Fatalf("replay in scope: %+v %v", rep, err)
	}
}

// A subscriber may not take (or rename to) a prepaid card's login: the
// card would be shadowed over RADIUS.
func TestSubscriberCannotTakeACardLogin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Day", xrtest.Money("1"), 1, 0, 0)
	b := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 1, PlanProfileID: plan})
	login := e.str(`SELECT username FROM cards WHERE batch_id = ?`, b.ID)
	err := e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, err := subs.CreateUser(e.ctx, tx, e.ten, subs.NewUser{Username: strings.ToUpper(login), Password: "pw-12345", ParentID: 1})
		return err
	})
	if ae := app.AsError(err); ae == nil || ae.Reason != "username_taken" {
		t.Fatalf("create with a card login: %v", err)
	}
	if e.scalar(`SELECT COUNT(*) FROM users`) != 0 {
		t.Fatal("a subscriber was stored")
	}
}
