package subs

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	"xr/app"
	"xr/app/identity"
	"xr/internal/xrtest"
)

// moneyOp is one step of a random sequence on one subscriber.
type moneyOp struct {
	Kind   int // 0 deposit, 1 withdraw, 2 pay-debt, 3 activation, 4 refund-activation
	Amount app.Money
	Plan   int // activation: index into the plans
}

// randomAmount mixes ordinary amounts, amounts near and beyond the
// maximum, and the wrapping pair (9e15 and 9.2e15 major units).
func randomAmount(r *rand.Rand) app.Money {
	switch r.Intn(8) {
	case 0, 1:
		return app.Money(1 + r.Int63n(1_000_000))
	case 2:
		return app.Money(1 + r.Int63n(int64(app.MaxAmount)))
	case 3:
		return app.MaxAmount - app.Money(r.Int63n(3))
	case 4:
		return app.MaxAmount + app.Money(1+r.Int63n(1000))
	case 5:
		return app.Money(int64(9e18)) // 9e15 major units
	case 6:
		return app.Money(int64(9.2e18))
	}
	return app.Money(1 + r.Int63n(math.MaxInt64-1))
}

type moneySeq []moneyOp

func (moneySeq) Generate(r *rand.Rand, size int) reflect.Value {
	n := 1 + r.Intn(40)
	s := make(moneySeq, n)
	for i := range s {
		s[i] = moneyOp{Kind: r.Intn(5), Amount: randomAmount(r), Plan: r.Intn(3)}
	}
	return reflect.ValueOf(s)
}

// A random sequence of deposits, withdrawals, debt payments, activations
// and refunds keeps the ledger's running balance equal to the cached
// balance, never leaves ±MaxBalance, never wraps, and matches an exact
// model; a refused step writes no ledger row and no idempotency record.
func TestMoneyNeverWrapsProperty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	prices := []app.Money{1500, app.MaxAmount / 2, app.MaxAmount}
	plans := make([]int64, len(prices))
	for i, p := range prices {
		plans[i] = e.plan(fmt.Sprintf("p%d", i), p.String(), 30, 0)
	}
	seq := 0
	outcomes := map[string]int{}
	check := func(ops moneySeq) bool {
		seq++
		uid := e.user(fmt.Sprintf("prop%d", seq), e.owner.ManagerID, func(nu *NewUser) { nu.ProfileID = plans[0] })
		bal := new(big.Int) // the model, exact
		type act struct {
			price    app.Money
			refunded bool
		}
		var last *act
		maxB, minB := big.NewInt(int64(app.MaxBalance)), big.NewInt(-int64(app.MaxBalance))
		for i, op := range ops {
			key := fmt.Sprintf("prop-%d-%d", seq, i)
			rows := e.scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, uid)
			amt := big.NewInt(int64(op.Amount))
			next := new(big.Int)
			var want string // "" = success
			var err error
			switch op.Kind {
			case 0:
				next.Add(bal, amt)
				switch {
				case op.Amount > app.MaxAmount:
					want = "amount_out_of_range"
				case next.Cmp(maxB) > 0:
					want = "balance_out_of_range"
				}
				_, err = Deposit(e.ctx, e.owner, uid, DepositInput{Amount: &op.Amount, RequestID: key})
			case 1:
				next.Sub(bal, amt)
				switch {
				case op.Amount > app.MaxAmount:
					want = "amount_out_of_range"
				case next.Sign() < 0:
					want = "insufficient_balance"
				}
				_, err = Withdraw(e.ctx, e.owner, uid, WithdrawInput{Amount: &op.Amount, RequestID: key})
			case 2:
				next.Add(bal, amt)
				switch {
				case bal.Sign() >= 0:
					want = "no_debt"
				case next.Sign() > 0:
					want = "amount_exceeds_debt"
				}
				_, err = PayDebt(e.ctx, e.owner, uid, PayDebtInput{Amount: &op.Amount, RequestID: key})
			case 3:
				price := prices[op.Plan]
				next.Sub(bal, big.NewInt(int64(price)))
				if next.Cmp(minB) < 0 {
					want = "balance_out_of_range"
				}
				pid := plans[op.Plan]
				_, err = Activate(e.ctx, e.owner, uid, ActivationInput{ProfileID: &pid, RequestID: key})
				if err == nil {
					last = &act{price: price}
				}
			case 4:
				switch {
				case last == nil:
					want = "no_activation"
				case last.refunded:
					want = "activation_already_refunded"
				default:
					next.Add(bal, big.NewInt(int64(last.price)))
					if next.Cmp(maxB) > 0 {
						want = "balance_out_of_range"
					}
				}
				_, err = RefundActivation(e.ctx, e.owner, uid, RefundInput{RequestID: key})
				if err == nil {
					last.refunded = true
				}
			}
			got := ""
			if err != nil {
				if ae := app.AsError(err); ae != nil {
					got = ae.Reason
				} else {
					got = err.Error()
				}
			}
			outcomes[fmt.Sprint(op.Kind, ":", want)]++
			if got != want {
				t.Errorf("seq %d op %d %+v on balance %s: got %q, want %q", seq, i, op, bal, got, want)
				return false
			}
			if want == "" {
				bal.Set(next)
			} else {
				if n := e.scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, uid); n != rows {
					t.Errorf("seq %d op %d refused (%s) but wrote %d ledger rows", seq, i, want, n-rows)
					return false
				}
				if n := e.scalar(`SELECT COUNT(*) FROM idempotency WHERE key = ?`, key); n != 0 {
					t.Errorf("seq %d op %d refused (%s) but stored its key", seq, i, want)
					return false
				}
			}
			cached := e.balance(uid)
			if !bal.IsInt64() || int64(cached) != bal.Int64() || cached > app.MaxBalance || cached < -app.MaxBalance {
				t.Errorf("seq %d op %d: cached balance %d, model %s", seq, i, int64(cached), bal)
				return false
			}
			e.ledgerConsistent(uid)
		}
		return true
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 25, Rand: rand.New(rand.NewSource(rand.Int63()))}); err != nil {
		t.Fatal(err)
	}
	t.Logf("outcomes (kind:reason): %v", outcomes)
}

// The checked paths outside the subscriber wallet: points × value, add-on
// price × quantity, a manager's wallet and its loans.
func TestMoneyLimitsOtherPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	uid := e.user("pts", e.owner.ManagerID, nil)
	e.exec(`INSERT INTO settings(key, value) VALUES ('points_value', '1000000000000') ON CONFLICT(key) DO UPDATE SET value = excluded.value`)
	e.exec(`UPDATE users SET points_balance = 1000 WHERE id = ?`, uid)
	_, err := RedeemPoints(e.ctx, e.owner, uid, RedeemPointsInput{Points: 2, RequestID: "pts-1"})
	xrtest.WantReason(t, err, 400, "amount_out_of_range")
	if r, err := RedeemPoints(e.ctx, e.owner, uid, RedeemPointsInput{Points: 1, RequestID: "pts-2"}); err != nil || r.Balance != app.MaxBalance {
		t.Fatalf("one point at the maximum: %+v %v", r, err)
	}
	_, err = RedeemPoints(e.ctx, e.owner, uid, RedeemPointsInput{Points: 1, RequestID: "pts-3"})
	xrtest.WantReason(t, err, 409, "balance_out_of_range")
	if n := e.scalar(`SELECT points_balance FROM users WHERE id = ?`, uid); n != 999 {
		t.Fatalf("points after a refused redemption: %d", n)
	}
	e.ledgerConsistent(uid)

	// A reseller's wallet: deposits up to the maximum, then refused.
	m := e.manager(e.owner.ManagerID, "rs1")
	if _, err := identity.ManagerWalletOp(e.ctx, e.owner, m, identity.WalletDeposit, identity.WalletInput{Amount: app.MaxAmount, RequestID: "w-1"}); err != nil {
		t.Fatal(err)
	}
	_, err = identity.ManagerWalletOp(e.ctx, e.owner, m, identity.WalletDeposit, identity.WalletInput{Amount: 1, RequestID: "w-2"})
	xrtest.WantReason(t, err, 409, "balance_out_of_range")
	_, err = identity.ManagerWalletOp(e.ctx, e.owner, m, identity.WalletTopup, identity.WalletInput{Amount: app.MaxAmount + 1, RequestID: "w-3"})
	xrtest.WantReason(t, err, 400, "amount_out_of_range")
	if n := e.scalar(`SELECT COUNT(*) FROM manager_journal WHERE manager_id = ?`, m); n != 1 {
		t.Fatalf("journal rows after refusals: %d", n)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM idempotency WHERE key IN ('w-2', 'w-3', 'pts-1', 'pts-3')`); n != 0 {
		t.Fatalf("refused operations stored %d keys", n)
	}
	// The loan ledger is bounded too: a top-up on an emptied wallet past
	// the maximum outstanding debt.
	m2 := e.manager(e.owner.ManagerID, "rs2")
	if _, err := identity.ManagerWalletOp(e.ctx, e.owner, m2, identity.WalletTopup, identity.WalletInput{Amount: app.MaxAmount, RequestID: "l-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.ManagerWalletOp(e.ctx, e.owner, m2, identity.WalletWithdraw, identity.WalletInput{Amount: app.MaxAmount, RequestID: "l-2"}); err != nil {
		t.Fatal(err)
	}
	_, err = identity.ManagerWalletOp(e.ctx, e.owner, m2, identity.WalletTopup, identity.WalletInput{Amount: 1, RequestID: "l-3"})
	xrtest.WantReason(t, err, 409, "balance_out_of_range")
	if n := e.scalar(`SELECT COUNT(*) FROM manager_loans WHERE manager_id = ?`, m2); n != 1 {
		t.Fatalf("loan rows after a refusal: %d", n)
	}
}
