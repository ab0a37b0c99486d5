package web_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"

	"xr/app/identity"
	"xr/internal/webtest"
)

func idBalance(t testing.TB, k *webtest.Kit, tok string, id int64) float64 {
	t.Helper()
	r := k.Do("GET", "acme", idP("/managers/%d", id), tok, nil)
	if r.Status != 200 {
		t.Fatalf("manager %d: %d %s", id, r.Status, r.Body)
	}
	return r.Data()["balance"].(float64)
}

func TestIdentityWalletDepositRules(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	owner := webtest.OwnerID(k, "acme")
	tok := idSession(k, "acme", "owner")
	m := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	dep := idP("/managers/%d/wallet/deposit", m)

	for _, c := range []struct {
		body   map[string]any
		reason string
	}{
		{map[string]any{"amount": 10}, "request_id_required"},
		{map[string]any{"amount": 10, "request_id": ""}, "request_id_required"},
		{map[string]any{"amount": 10, "request_id": strings.Repeat("x", 256)}, "request_id_too_long"},
		{map[string]any{"amount": 10, "request_id": "a:b"}, "request_id_reserved"},
		{map[string]any{"amount": 10, "request_id": "a|b"}, "request_id_reserved"},
		{map[string]any{"amount": 10, "request_id": "xr-123"}, "request_id_reserved"},
	} {
		r := k.Do("POST", "acme", dep, tok, c.body)
		if r.Status != 400 || r.Code() != "ERR_VALIDATION" || r.Reason() != c.reason || r.Field() != "request_id" {
			t.Fatalf("%v: %d %s", c.body, r.Status, r.Body)
		}
	}
	for _, amount := range []any{0, -5, 1.0001} {
		if r := k.Do("POST", "acme", dep, tok, map[string]any{"amount": amount, "request_id": "amt"}); r.Status != 400 {
			t.Fatalf("amount %v: %d %s", amount, r.Status, r.Body)
		}
	}
	// 255 characters is fine.
	if r := k.Do("POST", "acme", dep, tok, map[string]any{"amount": 1, "request_id": strings.Repeat("y", 255)}); r.Status != 200 {
		t.Fatalf("255-char key: %d %s", r.Status, r.Body)
	}
	// The caller's own wallet.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/wallet/deposit", owner), tok, map[string]any{"amount": 1, "request_id": "own"}), 403, "ERR_FORBIDDEN", "own_wallet_forbidden")
	rt := idSession(k, "acme", "res")
	webtest.ExpectErr(t, k.Do("POST", "acme", dep, rt, map[string]any{"amount": 1, "request_id": "own2"}), 403, "ERR_FORBIDDEN", "own_wallet_forbidden")
	if got := idBalance(t, k, tok, m); got != 1 {
		t.Fatalf("balance %v after refusals", got)
	}
}

func TestIdentityWalletIdempotencyAndInvoices(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	m := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	dep := idP("/managers/%d/wallet/deposit", m)
	invoices := func() int {
		r := k.Do("GET", "acme", idP("/managers/%d/invoices", m), tok, nil)
		if r.Status != 200 {
			t.Fatalf("invoices: %d %s", r.Status, r.Body)
		}
		return int(r.Meta()["total"].(float64))
	}

	r1 := k.Do("POST", "acme", dep, tok, map[string]any{"amount": 10.5, "request_id": "dep-1", "note": "first"})
	if r1.Status != 200 || r1.Data()["replay"] != false || r1.Data()["balance"] != 10.5 || r1.Data()["amount"] != 10.5 {
		t.Fatalf("deposit: %d %s", r1.Status, r1.Body)
	}
	doc, _ := r1.Data()["document_no"].(string)
	if !strings.HasPrefix(doc, "INV-") || invoices() != 1 {
		t.Fatalf("no invoice by default: %s", r1.Body)
	}
	// Replay: 200, replay true, the same outcome, credited once.
	r2 := k.Do("POST", "acme", dep, tok, map[string]any{"amount": 10.5, "request_id": "dep-1", "note": "first"})
	if r2.Status != 200 || r2.Data()["replay"] != true {
		t.Fatalf("replay: %d %s", r2.Status, r2.Body)
	}
	a, b := r1.Data(), r2.Data()
	delete(a, "replay")
	delete(b, "replay")
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("replay outcome differs:\n%v\n%v", a, b)
	}
	if got := idBalance(t, k, tok, m); got != 10.5 || invoices() != 1 {
		t.Fatalf("balance %v / invoices %d after replay", got, invoices())
	}
	// The same key on another subject: 409, nothing moves.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/wallet/withdraw", m), tok, map[string]any{"amount": 1, "request_id": "dep-1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	other := webtest.CreateManager(k, "acme", 0, "other")
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/wallet/deposit", other), tok, map[string]any{"amount": 1, "request_id": "dep-1"}), 409, "ERR_CONFLICT", "request_id_conflict")
	if got := idBalance(t, k, tok, m); got != 10.5 {
		t.Fatalf("balance %v after conflict", got)
	}
	// issue_invoice false: no document.
	r := k.Do("POST", "acme", dep, tok, map[string]any{"amount": 2, "request_id": "dep-2", "issue_invoice": false})
	if r.Status != 200 || r.Data()["document_no"] != nil && r.Data()["document_no"] != "" || invoices() != 1 {
		t.Fatalf("issue_invoice false: %s (invoices %d)", r.Body, invoices())
	}
	if r := k.Do("POST", "acme", dep, tok, map[string]any{"amount": 2, "request_id": "dep-3", "issue_invoice": true}); r.Status != 200 || invoices() != 2 {
		t.Fatalf("issue_invoice true: %s", r.Body)
	}
	if got := idBalance(t, k, tok, m); got != 14.5 {
		t.Fatalf("balance %v", got)
	}
}

func TestIdentityWalletWithdrawDebtAndLedgers(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	m := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	post := func(op string, body map[string]any) webtest.Resp {
		t.Helper()
		return k.Do("POST", "acme", idP("/managers/%d/wallet/%s", m, op), tok, body)
	}
	journal := func() []map[string]any {
		t.Helper()
		r := k.Do("GET", "acme", idP("/managers/%d/journal?page_size=200", m), tok, nil)
		if r.Status != 200 {
			t.Fatalf("journal: %d %s", r.Status, r.Body)
		}
		var out []map[string]any
		for _, v := range r.List() {
			out = append(out, v.(map[string]any))
		}
		return out
	}

	if r := post("deposit", map[string]any{"amount": 20, "request_id": "w-1"}); r.Status != 200 {
		t.Fatalf("deposit: %d %s", r.Status, r.Body)
	}
	n := len(journal())
	// Beyond the balance: 409 and nothing stored (the key stays free).
	r := post("withdraw", map[string]any{"amount": 25, "request_id": "w-2"})
	webtest.ExpectErr(t, r, 409, "ERR_CONFLICT", "insufficient_balance")
	if len(journal()) != n || idBalance(t, k, tok, m) != 20 {
		t.Fatal("a refused withdraw moved money")
	}
	if r := post("withdraw", map[string]any{"amount": 5, "request_id": "w-2"}); r.Status != 200 || r.Data()["replay"] != false || r.Data()["balance"] != float64(15) {
		t.Fatalf("withdraw with the freed key: %d %s", r.Status, r.Body)
	}
	if r := post("withdraw", map[string]any{"amount": 5, "request_id": "w-2"}); r.Data()["replay"] != true || idBalance(t, k, tok, m) != 15 {
		t.Fatalf("withdraw replay: %d %s", r.Status, r.Body)
	}

	// Topup on loan: the debt comes from the loan ledger.
	if r := post("topup", map[string]any{"amount": 50, "request_id": "w-3"}); r.Status != 200 || r.Data()["debt"] != float64(50) || r.Data()["balance"] != float64(65) {
		t.Fatalf("topup: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "acme", idP("/managers/%d/debt", m), tok, nil); r.Status != 200 || r.Data()["debt"] != float64(50) {
		t.Fatalf("debt: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, post("pay-debt", map[string]any{"amount": 60, "request_id": "w-4"}), 409, "ERR_CONFLICT", "amount_exceeds_debt")
	r = post("pay-debt", map[string]any{"amount": 20, "request_id": "w-4"})
	if r.Status != 200 || r.Data()["debt"] != float64(30) || !strings.HasPrefix(r.Data()["document_no"].(string), "RCT-") {
		t.Fatalf("pay-debt: %d %s", r.Status, r.Body)
	}
	if r := post("pay-debt", map[string]any{"amount": 20, "request_id": "w-4"}); r.Data()["replay"] != true || r.Data()["debt"] != float64(30) {
		t.Fatalf("pay-debt replay: %s", r.Body)
	}
	if r := k.Do("GET", "acme", idP("/managers/%d/debt", m), tok, nil); r.Data()["debt"] != float64(30) {
		t.Fatalf("debt after repayment: %s", r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/loans", m), tok, nil)
	if r.Status != 200 || len(r.List()) != 2 || r.List()[0].(map[string]any)["kind"] != "repayment" || r.List()[1].(map[string]any)["kind"] != "loan" {
		t.Fatalf("loans: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/receipts", m), tok, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["amount"] != float64(20) {
		t.Fatalf("receipts: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/payments", m), tok, nil)
	if r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["kind"] != "repayment" || r.List()[0].(map[string]any)["outstanding_after"] != float64(30) {
		t.Fatalf("payments: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/invoices", m), tok, nil)
	if r.Status != 200 || len(r.List()) != 2 { // the deposit and the topup
		t.Fatalf("invoices: %d %s", r.Status, r.Body)
	}

	// The journal: every movement, newest first, running balance.
	j := journal()
	if len(j) != 3 {
		t.Fatalf("journal has %d rows: %v", len(j), j)
	}
	kinds := []string{}
	for _, e := range j {
		kinds = append(kinds, e["kind"].(string))
	}
	if !reflect.DeepEqual(kinds, []string{"topup", "withdraw", "deposit"}) {
		t.Fatalf("journal order %v", kinds)
	}
	running := 0.0
	for i := len(j) - 1; i >= 0; i-- {
		running += j[i]["amount"].(float64)
		if math.Abs(j[i]["balance_after"].(float64)-running) > 1e-9 {
			t.Fatalf("row %d balance_after %v, running %v", i, j[i]["balance_after"], running)
		}
		if i > 0 && j[i]["id"].(float64) >= j[i-1]["id"].(float64) {
			t.Fatal("journal not newest first")
		}
	}
	if bal := idBalance(t, k, tok, m); bal != running || bal != 65 {
		t.Fatalf("balance %v, journal ends at %v", bal, running)
	}
	// Overview and profile agree.
	r = k.Do("GET", "acme", idP("/managers/%d/overview", m), tok, nil)
	if r.Status != 200 || r.Data()["balance"] != float64(65) || r.Data()["debt"] != float64(30) {
		t.Fatalf("overview: %d %s", r.Status, r.Body)
	}
	r = k.Do("GET", "acme", idP("/managers/%d/profile", m), tok, nil)
	if r.Status != 200 || !reflect.DeepEqual(webtest.Strings(r.Data()["roles"]), []string{"reseller"}) || r.Data()["parent"].(map[string]any)["username"] != "owner" {
		t.Fatalf("profile: %d %s", r.Status, r.Body)
	}
}

func TestIdentityWalletConcurrentDeposits(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	m := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	dep := idP("/managers/%d/wallet/deposit", m)

	// 50 distinct intents: the exact sum.
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := idDo(k, "POST", "acme", dep, tok, map[string]any{"amount": 1.5, "request_id": fmt.Sprintf("c-%d", i), "issue_invoice": false})
			if err != nil || r.Status != 200 || r.Data()["replay"] != false {
				errs <- fmt.Sprintf("deposit %d: %v %d %s", i, err, r.Status, r.Body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := idBalance(t, k, tok, m); got != 75 {
		t.Fatalf("balance %v, want 75", got)
	}

	// 50 concurrent retries of one intent: applied once.
	var mu sync.Mutex
	fresh, replays := 0, 0
	balances := map[float64]int{}
	errs = make(chan string, 100)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := idDo(k, "POST", "acme", dep, tok, map[string]any{"amount": 7, "request_id": "one-intent"})
			if err != nil || r.Status != 200 {
				errs <- fmt.Sprintf("retry: %v %d %s", err, r.Status, r.Body)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if r.Data()["replay"] == true {
				replays++
			} else {
				fresh++
			}
			balances[r.Data()["balance"].(float64)]++
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if fresh != 1 || replays != 49 || len(balances) != 1 || balances[82] != 50 {
		t.Fatalf("fresh %d replays %d balances %v", fresh, replays, balances)
	}
	if got := idBalance(t, k, tok, m); got != 82 {
		t.Fatalf("balance %v, want 82", got)
	}
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM manager_journal WHERE manager_id = ?`, m); n != 51 {
		t.Fatalf("%d journal rows, want 51", n)
	}
}

func TestIdentityWalletResellerPaysFromOwnWallet(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	res := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	child := webtest.CreateManager(k, "acme", res, "child1")
	rt := idSession(k, "acme", "res")
	dep := idP("/managers/%d/wallet/deposit", child)

	// The reseller has nothing: refused, nothing moves on either side.
	webtest.ExpectErr(t, k.Do("POST", "acme", dep, rt, map[string]any{"amount": 30, "request_id": "r-1"}), 409, "ERR_CONFLICT", "insufficient_balance")
	if idBalance(t, k, tok, child) != 0 || idBalance(t, k, tok, res) != 0 {
		t.Fatal("a refused reseller deposit moved money")
	}
	if r := k.Do("POST", "acme", idP("/managers/%d/wallet/deposit", res), tok, map[string]any{"amount": 100, "request_id": "r-2"}); r.Status != 200 {
		t.Fatalf("owner funds reseller: %d %s", r.Status, r.Body)
	}
	r := k.Do("POST", "acme", dep, rt, map[string]any{"amount": 30, "request_id": "r-1"})
	if r.Status != 200 || r.Data()["balance"] != float64(30) {
		t.Fatalf("reseller deposit: %d %s", r.Status, r.Body)
	}
	if got := idBalance(t, k, tok, res); got != 70 {
		t.Fatalf("reseller balance %v, want 70", got)
	}
	// A replay does not charge the reseller again.
	if r := k.Do("POST", "acme", dep, rt, map[string]any{"amount": 30, "request_id": "r-1"}); r.Data()["replay"] != true {
		t.Fatalf("replay: %s", r.Body)
	}
	if idBalance(t, k, tok, res) != 70 || idBalance(t, k, tok, child) != 30 {
		t.Fatal("replay charged again")
	}
	// The reseller's journal shows the transfer.
	r = k.Do("GET", "acme", idP("/managers/%d/journal", res), tok, nil)
	if len(r.List()) != 2 || r.List()[0].(map[string]any)["amount"] != float64(-30) {
		t.Fatalf("reseller journal: %s", r.Body)
	}
	// Beyond its balance: refused again.
	webtest.ExpectErr(t, k.Do("POST", "acme", dep, rt, map[string]any{"amount": 70.001, "request_id": "r-3"}), 409, "ERR_CONFLICT", "insufficient_balance")
	// Its debt limit extends what it may hand down.
	k.Do("PATCH", "acme", idP("/managers/%d", res), tok, map[string]any{"debt_limit": 10})
	if r := k.Do("POST", "acme", dep, rt, map[string]any{"amount": 75, "request_id": "r-3"}); r.Status != 200 {
		t.Fatalf("within the debt limit: %d %s", r.Status, r.Body)
	}
	if got := idBalance(t, k, tok, res); got != -5 {
		t.Fatalf("reseller balance %v, want -5", got)
	}
	// A withdraw by the reseller returns the money to it (given the code).
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/wallet/withdraw", child), rt, map[string]any{"amount": 5, "request_id": "r-4"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	wd := webtest.CreateRole(k, "acme", "wd", "prm_managers_withdraw")
	if _, err := identity.SetManagerRoles(webtest.Background, k.System("acme"), res, []int64{webtest.RoleID(k, "acme", "reseller"), wd}); err != nil {
		t.Fatal(err)
	}
	if r := k.Do("POST", "acme", idP("/managers/%d/wallet/withdraw", child), rt, map[string]any{"amount": 5, "request_id": "r-4"}); r.Status != 200 || r.Data()["balance"] != float64(100) {
		t.Fatalf("reseller withdraw: %d %s", r.Status, r.Body)
	}
	if got := idBalance(t, k, tok, res); got != 0 {
		t.Fatalf("withdraw did not return to the reseller: %v", got)
	}
}

func TestIdentityWalletPoints(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := idSession(k, "acme", "owner")
	m := webtest.CreateManager(k, "acme", 0, "res", "reseller")
	r := k.Do("POST", "acme", idP("/managers/%d/points/add", m), tok, map[string]any{"points": 10, "note": "promo"})
	if r.Status != 200 || r.Data()["points_balance"] != float64(10) {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/points/deduct", m), tok, map[string]any{"points": 15}), 409, "ERR_CONFLICT", "insufficient_points")
	if r := k.Do("POST", "acme", idP("/managers/%d/points/deduct", m), tok, map[string]any{"points": 4}); r.Status != 200 || r.Data()["points_balance"] != float64(6) {
		t.Fatalf("deduct: %d %s", r.Status, r.Body)
	}
	for _, p := range []any{0, -1} {
		if r := k.Do("POST", "acme", idP("/managers/%d/points/add", m), tok, map[string]any{"points": p}); r.Status != 400 {
			t.Fatalf("points %v: %d %s", p, r.Status, r.Body)
		}
	}
	if r := k.Do("GET", "acme", idP("/managers/%d", m), tok, nil); r.Data()["points_balance"] != float64(6) {
		t.Fatalf("record: %s", r.Body)
	}
	// The reseller lacks prm_managers_reward_points.
	webtest.ExpectErr(t, k.Do("POST", "acme", idP("/managers/%d/points/add", m), idSession(k, "acme", "res"), map[string]any{"points": 1}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
}
