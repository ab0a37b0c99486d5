package subs

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/identity"
	"xr/internal/xrtest"
)

func TestStatusOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	fut, past := now.Add(time.Hour), now.Add(-time.Hour)
	cases := []struct {
		name string
		in   StatusInput
		want Status
	}{
		{"never activated", StatusInput{Enabled: true}, Status{Enabled: true, Expired: true, HaveQuota: true}},
		{"active", StatusInput{Enabled: true, Expiration: fut}, Status{Enabled: true, HaveQuota: true, CanConnect: true}},
		{"expired", StatusInput{Enabled: true, Expiration: past}, Status{Enabled: true, Expired: true, HaveQuota: true}},
		{"expiring now", StatusInput{Enabled: true, Expiration: now}, Status{Enabled: true, Expired: true, HaveQuota: true}},
		{"disabled", StatusInput{Expiration: fut}, Status{HaveQuota: true}},
		{"deleted", StatusInput{Enabled: true, Deleted: true, Expiration: fut}, Status{Enabled: true, Deleted: true, HaveQuota: true}},
		{"data spent", StatusInput{Enabled: true, Expiration: fut, BytesLimit: 10, UsedBytes: 10}, Status{Enabled: true}},
		{"data spent, fup", StatusInput{Enabled: true, Expiration: fut, BytesLimit: 10, UsedBytes: 11, FUPRateDownKbps: 512},
			Status{Enabled: true, FUP: true, CanConnect: true}},
		{"time spent, fup plan", StatusInput{Enabled: true, Expiration: fut, SecondsLimit: 5, UsedSeconds: 5, FUPRateDownKbps: 512},
			Status{Enabled: true}},
		{"online", StatusInput{Enabled: true, Online: true, Expiration: fut, BytesLimit: 10, UsedBytes: 9},
			Status{Enabled: true, Online: true, HaveQuota: true, CanConnect: true}},
	}
	for _, c := range cases {
		if got := StatusOf(c.in, now); got != c.want {
			t.Errorf("%s: got %+v want %+v", c.name, got, c.want)
		}
	}
}

func TestUsersCountTrigger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := []int64{e.user("a1", e.owner.ManagerID, nil), e.user("a2", e.owner.ManagerID, nil), e.user("a3", e.owner.ManagerID, nil)}
	if n := mustCount(t, e.ten, e.ctx); n != 3 {
		t.Fatalf("users_count %d", n)
	}
	if err := DeleteUser(e.ctx, e.owner, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := DeleteUser(e.ctx, e.owner, ids[0]); err != nil { // a no-op the second time
		t.Fatal(err)
	}
	if n := mustCount(t, e.ten, e.ctx); n != 2 {
		t.Fatalf("after delete: %d", n)
	}
	e.exec(`UPDATE users SET deleted_at = NULL WHERE id = ?`, ids[0])
	if n := mustCount(t, e.ten, e.ctx); n != 3 {
		t.Fatalf("after undelete: %d", n)
	}
	e.exec(`DELETE FROM users WHERE id = ?`, ids[1])
	if n := mustCount(t, e.ten, e.ctx); n != 2 {
		t.Fatalf("after hard delete: %d", n)
	}
	if got := e.scalar(`SELECT COUNT(*) FROM users WHERE deleted_at IS NULL`); got != 2 {
		t.Fatal(got)
	}
}

func TestLicenceCap(t *testing.T) {
	t.Parallel()
	two := int64(2)
	e := newEnvIn(t, t.TempDir(), &two)
	e.user("c1", e.owner.ManagerID, nil)
	e.user("c2", e.owner.ManagerID, nil)
	_, err := Create(e.ctx, e.owner, CreateInput{Username: "c3", Password: "x"})
	xrtest.WantReason(t, err, 403, "license_locked")
	if e.scalar(`SELECT COUNT(*) FROM users`) != 2 {
		t.Fatal("a refused create stored a row")
	}
}

func TestConcurrentIdempotentDeposits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := e.user("rich", e.owner.ManagerID, nil)
	const n = 1000
	amount := xrtest.Money("1.001")
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	var replays sync.Map
	for i := 0; i < n; i++ {
		for rep := 0; rep < 2; rep++ { // every intent sent twice, concurrently
			if rep == 1 && i%2 == 1 {
				continue
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				r, err := Deposit(context.Background(), e.owner, uid, DepositInput{Amount: &amount, RequestID: fmt.Sprintf("dep-%d", i)})
				if err != nil {
					errs <- err
					return
				}
				if r.Replay {
					replays.Store(i, true)
				}
			}(i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := app.Money(int64(amount) * n)
	if got := e.balance(uid); got != want {
		t.Fatalf("balance %s want %s", got, want)
	}
	if c := e.scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, uid); c != n {
		t.Fatalf("%d ledger rows", c)
	}
	nrep := 0
	replays.Range(func(_, _ any) bool { nrep++; return true })
	if nrep != n/2 {
		t.Fatalf("%d replays, want %d", nrep, n/2)
	}
	e.ledgerConsistent(uid)
}

func TestConcurrentMixedOperationsLedger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("p", "2.5", 30, 0)
	limit := xrtest.Money("10")
	uid := e.user("mix", e.owner.ManagerID, func(n *NewUser) { n.ProfileID = plan; n.DebtLimit = &limit })
	var wg sync.WaitGroup
	for i := 0; i < 300; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx := context.Background()
			key := fmt.Sprintf("k%d", i)
			switch i % 4 {
			case 0:
				Deposit(ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("3"), RequestID: key})
			case 1:
				Withdraw(ctx, e.owner, uid, WithdrawInput{Amount: xrtest.MoneyPtr("1.5"), RequestID: key}) // may be refused
			case 2:
				Activate(ctx, e.owner, uid, ActivationInput{RequestID: key}) // may exceed the credit
			case 3:
				PayDebt(ctx, e.owner, uid, PayDebtInput{RequestID: key}) // may find no debt
			}
		}(i)
	}
	wg.Wait()
	e.ledgerConsistent(uid)
	if b := e.balance(uid); b < -limit {
		t.Fatalf("balance %s below the debt limit", b)
	}
	// Every stored outcome has its ledger row and vice versa.
	keys := e.scalar(`SELECT COUNT(*) FROM idempotency WHERE subject LIKE 'users/%'`)
	rows := e.scalar(`SELECT COUNT(DISTINCT request_id) FROM user_ledger WHERE user_id = ?`, uid)
	if keys != rows {
		t.Fatalf("%d idempotency keys, %d ledger request_ids", keys, rows)
	}
}

func TestMoneyRefusalsStoreNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := e.user("poor", e.owner.ManagerID, nil)
	before := e.scalar(`SELECT COUNT(*) FROM idempotency`)
	_, err := Withdraw(e.ctx, e.owner, uid, WithdrawInput{Amount: xrtest.MoneyPtr("1"), RequestID: "w1"})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	_, err = PayDebt(e.ctx, e.owner, uid, PayDebtInput{RequestID: "p1"})
	xrtest.WantReason(t, err, 409, "no_debt")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("0"), RequestID: "d0"})
	xrtest.WantReason(t, err, 400, "amount_must_be_positive")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{RequestID: "d0"})
	xrtest.WantReason(t, err, 400, "amount_required")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("1")})
	xrtest.WantReason(t, err, 400, "request_id_required")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("1"), RequestID: "a:b"})
	xrtest.WantReason(t, err, 400, "request_id_reserved")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("1"), RequestID: strings.Repeat("k", 256)})
	xrtest.WantReason(t, err, 400, "request_id_too_long")
	_, err = Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a1"})
	xrtest.WantReason(t, err, 400, "profile_required")
	if n := e.scalar(`SELECT COUNT(*) FROM idempotency`); n != before {
		t.Fatalf("refusals stored %d keys", n-before)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM user_ledger`); n != 0 {
		t.Fatalf("refusals wrote %d ledger rows", n)
	}
	// A refused key can be used again once the refusal's cause is gone.
	Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("5"), RequestID: "d1"})
	r, err := Withdraw(e.ctx, e.owner, uid, WithdrawInput{Amount: xrtest.MoneyPtr("1"), RequestID: "w1"})
	if err != nil || r.Replay || r.Balance != xrtest.Money("4") {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestActivationExtendsResetsAndRefunds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fixed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e.a.SetClock(func() time.Time { return fixed })
	plan := e.plan("month", "10", 30, 1000)
	zero := xrtest.Money("0")
	uid := e.user("act", e.owner.ManagerID, func(n *NewUser) { n.ProfileID = plan; n.DebtLimit = &zero })
	e.exec(`UPDATE users SET used_bytes = 700, bytes_limit = 800 WHERE id = ?`, uid)

	// No credit: refused, nothing written.
	_, err := Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a1"})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	if e.scalar(`SELECT COUNT(*) FROM user_activations`) != 0 || e.scalar(`SELECT COUNT(*) FROM events WHERE type = 'user.activated'`) != 0 {
		t.Fatal("refused activation left rows")
	}
	Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("25"), RequestID: "d1"})
	r, err := Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a1"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Replay || r.Price != xrtest.Money("10") || r.PaidBy != "subscriber" || r.Balance != xrtest.Money("15") ||
		r.Expiration.Time != fixed.Add(30*24*time.Hour) || !r.PreviousExpiration.IsZero() {
		t.Fatalf("%+v", r)
	}
	if ub, bl := e.scalar(`SELECT used_bytes FROM users WHERE id = ?`, uid), e.scalar(`SELECT bytes_limit FROM users WHERE id = ?`, uid); ub != 0 || bl != 1000 {
		t.Fatalf("quota not reset: used %d limit %d", ub, bl)
	}
	// Replay: stored outcome, nothing charged again.
	r2, err := Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a1"})
	if err != nil || !r2.Replay || r2.ActivationID != r.ActivationID || e.balance(uid) != xrtest.Money("15") {
		t.Fatalf("replay %+v %v", r2, err)
	}
	// The same key elsewhere: the activation's own conflict reason.
	_, err = Activate(e.ctx, e.owner, e.user("other", e.owner.ManagerID, func(n *NewUser) { n.ProfileID = plan }), ActivationInput{RequestID: "a1"})
	xrtest.WantReason(t, err, 409, "activation_request_conflict")
	_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: xrtest.MoneyPtr("1"), RequestID: "a1"})
	xrtest.WantReason(t, err, 409, "request_id_conflict")

	// A second activation extends from the current expiration, not now.
	r3, err := Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a2"})
	if err != nil || r3.Expiration.Time != fixed.Add(60*24*time.Hour) {
		t.Fatalf("%+v %v", r3, err)
	}
	// Refund reverses the last one: money and time.
	e.exec(`UPDATE users SET used_bytes = 50 WHERE id = ?`, uid)
	rf, err := RefundActivation(e.ctx, e.owner, uid, RefundInput{RequestID: "r1"})
	if err != nil || rf.Refunded != xrtest.Money("10") || rf.Balance != xrtest.Money("15") || rf.Expiration.Time != fixed.Add(30*24*time.Hour) {
		t.Fatalf("%+v %v", rf, err)
	}
	_, err = RefundActivation(e.ctx, e.owner, uid, RefundInput{RequestID: "r2"})
	xrtest.WantReason(t, err, 409, "activation_already_refunded")
	e.ledgerConsistent(uid)
}

func TestActivationPaidByReseller(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.exec(`UPDATE settings SET value = '"reseller"' WHERE key = 'activation_payer'`)
	plan := e.plan("month", "10", 30, 0)
	res := e.manager(e.owner.ManagerID, "res")
	act := xrtest.Reseller(e.ten, res)
	uid := e.user("ru", res, func(n *NewUser) { n.ProfileID = plan })
	_, err := Activate(e.ctx, act, uid, ActivationInput{RequestID: "a1"})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	e.ten.Write(e.ctx, func(tx *sql.Tx) error {
		_, _, err := identity.MoveManagerWallet(e.ctx, tx, identity.WalletMove{ManagerID: res, Amount: xrtest.Money("25"), Kind: "deposit"})
		return err
	})
	r, err := Activate(e.ctx, act, uid, ActivationInput{RequestID: "a1"})
	if err != nil || r.PaidBy != "reseller" || r.PayerManagerID == nil || *r.PayerManagerID != res {
		t.Fatalf("%+v %v", r, err)
	}
	if w := e.scalar(`SELECT balance FROM managers WHERE id = ?`, res); w != int64(xrtest.Money("15")) {
		t.Fatalf("wallet %d", w)
	}
	if e.balance(uid) != 0 {
		t.Fatal("subscriber charged")
	}
	// The owner activating: the house does not pay itself; the subscriber pays.
	r2, err := Activate(e.ctx, e.owner, uid, ActivationInput{RequestID: "a2"})
	if err != nil || r2.PaidBy != "subscriber" || e.balance(uid) != xrtest.Money("-10") {
		t.Fatalf("%+v %v", r2, err)
	}
	// Refunding the owner's activation credits the subscriber.
	if _, err := RefundActivation(e.ctx, e.owner, uid, RefundInput{RequestID: "rf"}); err != nil || e.balance(uid) != 0 {
		t.Fatal(err, e.balance(uid))
	}
}

func TestScopeOfSingleAndBulk(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.manager(e.owner.ManagerID, "a")
	b := e.manager(e.owner.ManagerID, "b")
	ua := e.user("ua", a, nil)
	ub := e.user("ub", b, nil)
	act := xrtest.Reseller(e.ten, a)
	if _, err := GetUser(e.ctx, act, ua); err != nil {
		t.Fatal(err)
	}
	_, err := GetUser(e.ctx, act, ub)
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = Deposit(e.ctx, act, ub, DepositInput{Amount: xrtest.MoneyPtr("1"), RequestID: "x"})
	xrtest.WantReason(t, err, 404, "not_found")
	res, _ := BulkDisable(e.ctx, act, app.BulkIDs{IDs: []int64{ua, ub, 99999}})
	if len(res.Updated) != 1 || res.Updated[0] != ua || len(res.Failed) != 2 ||
		res.Failed[0].Reason != "not_authorized" || res.Failed[1].Reason != "not_found" {
		t.Fatalf("%+v", res)
	}
}

func TestBulkDepositIdempotentPerRow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u1, u2 := e.user("b1", e.owner.ManagerID, nil), e.user("b2", e.owner.ManagerID, nil)
	in := BulkMoneyInput{BulkIDs: app.BulkIDs{IDs: []int64{u1, u2}}, Amount: xrtest.MoneyPtr("2"), RequestID: "bulk-1"}
	for i := 0; i < 2; i++ {
		res, err := BulkDeposit(e.ctx, e.owner, in)
		if err != nil || len(res.Updated) != 2 {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if e.balance(u1) != xrtest.Money("2") || e.balance(u2) != xrtest.Money("2") {
		t.Fatal("bulk deposit applied twice")
	}
	// A third subscriber added to the same intent is applied once.
	u3 := e.user("b3", e.owner.ManagerID, nil)
	in.IDs = append(in.IDs, u3)
	BulkDeposit(e.ctx, e.owner, in)
	if e.balance(u1) != xrtest.Money("2") || e.balance(u3) != xrtest.Money("2") {
		t.Fatal("bulk replay")
	}
	w, _ := BulkWithdraw(e.ctx, e.owner, BulkMoneyInput{BulkIDs: app.BulkIDs{IDs: []int64{u1, u2}}, Amount: xrtest.MoneyPtr("3"), RequestID: "bw"})
	if len(w.Updated) != 0 || len(w.Failed) != 2 || w.Failed[0].Reason != "error" || w.Failed[0].Message != "insufficient_balance" {
		t.Fatalf("%+v", w)
	}
}

// mustCount is a subscriber count that failed the test if unreadable.
func mustCount(t *testing.T, ten *app.Tenant, ctx context.Context) int64 {
	t.Helper()
	n, err := ten.CountUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
