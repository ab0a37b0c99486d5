package cards

import (
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/xrtest"
)

func TestRequiredCodeLength(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		charset string
		live    int64
		want    int
	}{
		{"numeric", 1, 6},          // 10^6 ≥ 1e6
		{"numeric", 10, 7},         // 10^7 ≥ 1e7
		{"numeric", 100_000, 11},   // 10^11 ≥ 1e11
		{"numeric", 1_000_000, 12}, // 10^12
		{"alnum_no_ambig", 1_000_000, 8},
		{"alpha", 100_000, 8}, // 26^8 ≈ 2.1e11 ≥ 1e11
		{"alnum", 100_000, 8}, // 36^7 ≈ 7.8e10 < 1e11
	} {
		if got := RequiredCodeLength(c.charset, c.live); got != c.want {
			t.Errorf("%s with %d live: %d, want %d", c.charset, c.live, got, c.want)
		}
	}
	if len(charsets["alnum_no_ambig"]) != 32 || strings.ContainsAny(charsets["alnum_no_ambig"], "0O1Il") {
		t.Fatalf("alnum_no_ambig: %q", charsets["alnum_no_ambig"])
	}
	if got := NormalizeCode(" xr:c:ab-cd 12 "); got != "ABCD12" {
		t.Fatalf("normalise: %q", got)
	}
}

func TestGenerateSeries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Type: "refill", Quantity: 40, CodeCharset: "alnum_no_ambig", CodeLength: 6})
	// The live pool of 40 cards needs 32^L ≥ 4e7: L = 6 (32^6 ≈ 1.07e9).
	if b.CodeLength != 6 || b.Quantity != 40 || b.Processed != 40 || b.Unused != 40 || b.Available != 40 || b.Used != 0 || !b.HasCards {
		t.Fatalf("series: %+v", b)
	}
	seen := map[string]bool{}
	for _, c := range e.codes(b.ID) {
		if len(c) != 6 || strings.Trim(c, charsets["alnum_no_ambig"]) != "" || seen[c] {
			t.Fatalf("bad or duplicate code %q", c)
		}
		seen[c] = true
	}
	if s := e.str(`SELECT serial FROM cards WHERE batch_id = ? AND seq = 7`, b.ID); s != strings.TrimSpace(s) || !strings.HasSuffix(s, "-000007") {
		t.Fatalf("serial %q", s)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM events WHERE type = 'card_batch.ready'`); n != 1 {
		t.Fatalf("card_batch.ready events: %d", n)
	}
	// A short requested length is raised when the pool needs more.
	b2 := e.series(e.owner, CreateInput{Type: "refill", Quantity: 10, CodeCharset: "numeric", CodeLength: 6})
	if b2.CodeLength != RequiredCodeLength("numeric", 50) || b2.RequestedCodeLength != 6 {
		t.Fatalf("raised length: %d (requested %d)", b2.CodeLength, b2.RequestedCodeLength)
	}
	// Prepaid: a login and password per card.
	plan := e.plan("Day", xrtest.Money("1"), 1, 0, 0)
	p := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 5, PlanProfileID: plan})
	if p.CardMode != ModeVoucher || e.scalar(`SELECT COUNT(*) FROM cards WHERE batch_id = ? AND length(username) = 10 AND length(password) = 8`, p.ID) != 5 {
		t.Fatalf("prepaid logins missing: %+v", p)
	}
	// Re-running the generation is a no-op.
	if _, err := Generate(e.ctx, e.ten, p.ID, nil); err != nil || e.scalar(`SELECT COUNT(*) FROM cards WHERE batch_id = ?`, p.ID) != 5 {
		t.Fatalf("regenerate run: %v", err)
	}
}

func TestCreateValidationReplayConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("P", xrtest.Money("5"), 30, 0, 0)
	base := CreateInput{Type: "refill", Quantity: 5, FaceValue: xrtest.MoneyPtr("10"), Expiration: future, RequestID: "r1"}
	for _, c := range []struct {
		mod    func(*CreateInput)
		reason string
	}{
		{func(in *CreateInput) { in.RequestID = "" }, "request_id_required"},
		{func(in *CreateInput) { in.Type = "" }, "type_required"},
		{func(in *CreateInput) { in.Quantity = 0 }, "invalid_quantity"},
		{func(in *CreateInput) { in.Quantity = MaxQuantity + 1 }, "quantity_too_large"},
		{func(in *CreateInput) { in.FaceValue = nil }, "face_value_required"},
		{func(in *CreateInput) { in.Expiration = "31/12/2030" }, "invalid_expiration"},
		{func(in *CreateInput) { in.Expiration = "2001-01-01" }, "invalid_expiration"},
		{func(in *CreateInput) { in.Expiration = "2001-01-01 10:00:00" }, "invalid_expiration"},
		{func(in *CreateInput) { in.Expiration = "" }, "expiration_required"},
		{func(in *CreateInput) { in.Type = "prepaid" }, "plan_profile_id_required"},
		{func(in *CreateInput) { in.AutoActivate = true }, "plan_profile_id_required"},
		{func(in *CreateInput) { in.CodeLength = 3 }, "invalid_code_length"},
		{func(in *CreateInput) { in.PlanProfileID = 999 }, "plan_not_assignable"},
		{func(in *CreateInput) { in.OwnerManagerID = 999 }, "invalid_owner_manager_id"},
	} {
		in := base
		c.mod(&in)
		_, err := CreateBatch(e.ctx, e.owner, in)
		xrtest.WantReason(t, err, 400, c.reason)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM card_batches`); n != 0 {
		t.Fatalf("refused requests stored %d series", n)
	}
	in := base
	in.PlanProfileID = plan
	first, err := CreateBatch(e.ctx, e.owner, in)
	if err != nil || first.Replay || first.Status != "generating" || first.Mode != ModeRefill {
		t.Fatalf("fresh: %+v %v", first, err)
	}
	again, err := CreateBatch(e.ctx, e.owner, in)
	if err != nil || !again.Replay || again.BatchID != first.BatchID || again.Status != "generating" {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM card_batches`); n != 1 {
		t.Fatalf("replay created a series: %d", n)
	}
	// The same key by another manager is a conflict.
	r := e.manager(0, "res1")
	_, err = CreateBatch(e.ctx, xrtest.Reseller(e.ten, r), in)
	xrtest.WantReason(t, err, 409, "request_id_conflict")
	// A date-only expiration means the end of that day.
	in.RequestID, in.Expiration = "r2", future
	res, _ := CreateBatch(e.ctx, e.owner, in)
	if got := e.str(`SELECT expiration FROM card_batches WHERE id = ?`, res.BatchID); got != future+" 23:59:59" {
		t.Fatalf("date-only expiration stored as %q", got)
	}
}

func TestRedeemRefillReplayConflictAndRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 6, FaceValue: xrtest.MoneyPtr("12.5")})
	codes := e.codes(b.ID)
	u := e.user("alice", e.owner.ManagerID)

	// Typed with spaces, dashes and lower case.
	typed := strings.ToLower(codes[0][:3] + "-" + codes[0][3:6] + " " + codes[0][6:])
	res, err := Redeem(e.ctx, e.owner, RedeemInput{Code: typed, UserID: u, RequestID: "red-1"})
	if err != nil || res.Mode != ModeRefill || res.EffectApplied.Type != "balance" || res.EffectApplied.Amount != xrtest.Money("12.5") ||
		res.NewBalance == nil || *res.NewBalance != xrtest.Money("12.5") || *res.UserID != u {
		t.Fatalf("redeem: %+v %v", res, err)
	}
	// Replay: same card_id, mode, effect_applied, and no new_balance; nothing applied twice.
	rep, err := Redeem(e.ctx, e.owner, RedeemInput{Code: codes[0], UserID: u, RequestID: "red-1"})
	if err != nil || rep.CardID != res.CardID || rep.Mode != res.Mode || rep.EffectApplied != res.EffectApplied || rep.NewBalance != nil {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	if e.balance(u) != xrtest.Money("12.5") || e.scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, u) != 1 {
		t.Fatalf("replay applied again: balance %s", e.balance(u))
	}
	// The same key on another card is a conflict.
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[1], UserID: u, RequestID: "red-1"})
	xrtest.WantReason(t, err, 409, "request_id_conflict")
	// Consumed.
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[0], UserID: u, RequestID: "red-2"})
	xrtest.WantReason(t, err, 409, "card_consumed")
	// Revoked (terminal).
	if _, err := RevokeCard(e.ctx, e.owner, e.cardID(codes[1])); err != nil {
		t.Fatal(err)
	}
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[1], UserID: u, RequestID: "red-3"})
	xrtest.WantReason(t, err, 409, "card_revoked")
	// Expired (expiry applied at read: the state stays unused).
	e.exec(`UPDATE cards SET expires_at = '2001-01-01 00:00:00' WHERE code = ?`, codes[2])
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[2], UserID: u, RequestID: "red-4"})
	xrtest.WantReason(t, err, 409, "card_expired")
	if st := e.str(`SELECT state FROM cards WHERE code = ?`, codes[2]); st != StateUnused {
		t.Fatalf("expired card state %s", st)
	}
	// Suspended series.
	if _, err := SuspendBatch(e.ctx, e.owner, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[3], UserID: u, RequestID: "red-5"})
	xrtest.WantReason(t, err, 409, "card_batch_suspended")
	// Unknown code, unknown subscriber.
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: "NOPE", UserID: u, RequestID: "red-6"})
	xrtest.WantReason(t, err, 404, "not_found")
	if _, err := ReleaseBatch(e.ctx, e.owner, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[3], UserID: 99999, RequestID: "red-7"})
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[3], UserID: u, RequestID: ""})
	xrtest.WantReason(t, err, 400, "request_id_required")
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[3], UserID: u, RequestID: "a:b"})
	xrtest.WantReason(t, err, 400, "request_id_reserved")
	// Nothing written by the refusals.
	if e.scalar(`SELECT COUNT(*) FROM card_redemptions`) != 1 || e.balance(u) != xrtest.Money("12.5") {
		t.Fatal("a refusal wrote something")
	}
	bb := e.batch(b.ID)
	if bb.Redeemed != 1 || bb.Used != 1 || bb.Revoked != 1 || bb.Unused != 4 || bb.Available != 4 || !bb.InCirculation {
		t.Fatalf("counters: %+v", bb)
	}
	e.stockOK(b.ID)
	if n := e.scalar(`SELECT COUNT(*) FROM events WHERE type = 'card.redeemed'`); n != 1 {
		t.Fatalf("card.redeemed events: %d", n)
	}
}

func TestRedeemVoucherAutoActivateOTCWalletCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Month", xrtest.Money("7"), 30, 0, 0)
	v := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 4, PlanProfileID: plan, FaceValue: xrtest.MoneyPtr("7")})
	vc := e.codes(v.ID)
	u := e.user("bob", e.owner.ManagerID)
	before := time.Now().UTC()
	res, err := Redeem(e.ctx, e.owner, RedeemInput{Code: vc[0], UserID: u, RequestID: "v1"})
	if err != nil || res.Mode != ModeVoucher || res.EffectApplied.Type != "activation" || res.EffectApplied.ProfileID == nil || *res.EffectApplied.ProfileID != plan {
		t.Fatalf("voucher: %+v %v", res, err)
	}
	exp := e.str(`SELECT expiration FROM users WHERE id = ?`, u)
	if got, _ := app.ParseTime(exp, false); got.Before(before.Add(29*24*time.Hour)) || e.balance(u) != 0 {
		t.Fatalf("activation: expiration %s balance %s (the voucher is paid)", exp, e.balance(u))
	}
	// Over the counter by a reseller: snapshot of paid and charged amounts.
	r := e.manager(0, "shop")
	e.exec(`UPDATE cards SET owner_manager_id = ? WHERE batch_id = ?`, r, v.ID)
	e.exec(`INSERT INTO card_batch_prices(batch_id, manager_id, unit_price, updated_at) VALUES (?,?,?,?)`, v.ID, r, 5500, app.StampNow())
	cust := e.user("carol", r)
	otc, err := RedeemOTC(e.ctx, xrtest.Reseller(e.ten, r), OTCInput{Code: vc[1], UserID: cust, RequestID: "o1", PaidAmount: xrtest.MoneyPtr("8")})
	if err != nil {
		t.Fatal(err)
	}
	red, err := GetRedemption(e.ctx, e.owner, otc.RedemptionID)
	if err != nil || red.Channel != "counter" || *red.ResellerID != r || *red.PaidAmount != xrtest.Money("8") || *red.ChargedAmount != xrtest.Money("5.5") {
		t.Fatalf("otc snapshot: %+v %v", red, err)
	}
	if bb := e.batch(v.ID); bb.SoldCounter != 1 || bb.Redeemed != 2 {
		t.Fatalf("otc counters: %+v", bb)
	}
	// Redeem-create (public): a voucher makes a subscriber under the card's owner.
	cr, err := RedeemCreate(e.ctx, e.ten, RedeemCreateInput{Code: vc[2], Username: "dave", Password: "dave-pass-1", RequestID: "c1"})
	if err != nil || cr.Username != "dave" || cr.UserID == nil {
		t.Fatalf("create: %+v %v", cr, err)
	}
	if p := e.scalar(`SELECT parent_id FROM users WHERE id = ?`, *cr.UserID); p != r {
		t.Fatalf("created subscriber parent %d, want %d", p, r)
	}
	_, err = RedeemCreate(e.ctx, e.ten, RedeemCreateInput{Code: vc[3], Username: "dave", Password: "dave-pass-1", RequestID: "c2"})
	xrtest.WantReason(t, err, 409, "username_taken")
	// Refill cards: auto-activating refill pays the plan from the credit.
	rf := e.series(e.owner, CreateInput{Type: "refill", Quantity: 3, FaceValue: xrtest.MoneyPtr("10"), PlanProfileID: plan, AutoActivate: true})
	rc := e.codes(rf.ID)
	u2 := e.user("erin", e.owner.ManagerID)
	aa, err := Redeem(e.ctx, e.owner, RedeemInput{Code: rc[0], UserID: u2, RequestID: "a1"})
	if err != nil || aa.EffectApplied.Type != "balance_activation" || *aa.NewBalance != xrtest.Money("3") || e.balance(u2) != xrtest.Money("3") {
		t.Fatalf("auto-activate: %+v %v", aa, err)
	}
	_, err = RedeemCreate(e.ctx, e.ten, RedeemCreateInput{Code: rc[1], Username: "frank", Password: "frank-pass-1", RequestID: "c3"})
	xrtest.WantReason(t, err, 409, "card_mode_mismatch")
	// To the wallet: the caller's own wallet, refill cards only.
	w, err := RedeemToWallet(e.ctx, e.owner, WalletRedeemInput{Code: rc[1], RequestID: "w1"})
	if err != nil || w.EffectApplied.Type != "wallet" || *w.ManagerID != e.owner.ManagerID || *w.NewBalance != xrtest.Money("10") {
		t.Fatalf("wallet: %+v %v", w, err)
	}
	if bal := e.scalar(`SELECT balance FROM managers WHERE id = ?`, e.owner.ManagerID); bal != 10000 {
		t.Fatalf("wallet balance %d", bal)
	}
	_, err = RedeemToWallet(e.ctx, e.owner, WalletRedeemInput{Code: vc[3], RequestID: "w2"})
	xrtest.WantReason(t, err, 409, "card_mode_mismatch")
	for _, id := range []int64{v.ID, rf.ID} {
		e.stockOK(id)
	}
}

func TestScopeAnswersLikeUnknown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r1 := e.manager(0, "r1")
	r2 := e.manager(0, "r2")
	b := e.series(e.owner, CreateInput{Quantity: 3, OwnerManagerID: r1})
	codes := e.codes(b.ID)
	u1 := e.user("u1", r1)
	u2 := e.user("u2", r2)
	a1, a2 := xrtest.Reseller(e.ten, r1), xrtest.Reseller(e.ten, r2)
	// r2 sees neither the card nor the series; every denial is the 404 of an unknown record.
	_, errCard := Redeem(e.ctx, a2, RedeemInput{Code: codes[0], UserID: u2, RequestID: "x1"})
	_, errUnknown := Redeem(e.ctx, a2, RedeemInput{Code: "ZZZZZZZZ", UserID: u2, RequestID: "x2"})
	_, errUser := Redeem(e.ctx, a1, RedeemInput{Code: codes[0], UserID: u2, RequestID: "x3"})
	for _, err := range []error{errCard, errUnknown, errUser} {
		xrtest.WantReason(t, err, 404, "not_found")
	}
	_, err := Search(e.ctx, a2, "code", codes[0])
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = GetBatch(e.ctx, a2, b.ID)
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = CardTimeline(e.ctx, a2, e.cardID(codes[0]))
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = RevokeCard(e.ctx, a2, e.cardID(codes[0]))
	xrtest.WantReason(t, err, 404, "not_found")
	// r1 (the owner) can.
	if _, err := Redeem(e.ctx, a1, RedeemInput{Code: codes[0], UserID: u1, RequestID: "x4"}); err != nil {
		t.Fatal(err)
	}
	if l, err := Search(e.ctx, a1, "serial", e.str(`SELECT serial FROM cards WHERE code = ?`, codes[0])); err != nil || l.UsedByUserID == nil || *l.UsedByUserID != u1 ||
		*l.UsedByKind != "user" || *l.UsedByUsername != "u1" || l.EffectiveState != StateConsumed || l.RedemptionsLeft != 0 {
		t.Fatalf("lookup: %+v %v", l, err)
	}
	page, err := ListBatches(e.ctx, a2, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "b.id", Filters: map[string]any{}})
	if err != nil || len(page.Rows) != 0 {
		t.Fatalf("r2 lists %d series", len(page.Rows))
	}
	page, _ = ListBatches(e.ctx, a1, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "b.id", Filters: map[string]any{}})
	if len(page.Rows) != 1 {
		t.Fatalf("r1 lists %d series", len(page.Rows))
	}
	// A bulk call tells them apart.
	res, _ := BulkSuspend(e.ctx, a2, app.BulkIDs{IDs: []int64{b.ID, 9999}})
	if len(res.Failed) != 2 || res.Failed[0].Reason != "not_authorized" || res.Failed[1].Reason != "not_found" {
		t.Fatalf("bulk: %+v", res)
	}
}

// The spec's state table, transition by transition, with the counters.
func TestStateTableAndCounters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 10})
	codes := e.codes(b.ID)
	u := e.user("u", e.owner.ManagerID)
	ids := make([]int64, len(codes))
	for i, c := range codes {
		ids[i] = e.cardID(c)
	}
	// unused → consumed (redeem).
	if _, err := Redeem(e.ctx, e.owner, RedeemInput{Code: codes[0], UserID: u, RequestID: "s1"}); err != nil {
		t.Fatal(err)
	}
	// any non-revoked → revoked (terminal): an unused one and a consumed one.
	for _, id := range []int64{ids[1], ids[0]} {
		c, err := RevokeCard(e.ctx, e.owner, id)
		if err != nil || c.State != StateRevoked {
			t.Fatalf("revoke %d: %+v %v", id, c, err)
		}
	}
	_, err := RevokeCard(e.ctx, e.owner, ids[1])
	xrtest.WantReason(t, err, 409, "card_revoked")
	// A till sale holds two cards (in flight), one never completes.
	if err := e.ten.Write(e.ctx, func(tx *sqlTx) error {
		held, err := HoldForSale(e.ctx, tx, b.ID, e.owner.ManagerID, 2, e.owner.ManagerID)
		if err != nil {
			return err
		}
		return MarkSaleStuck(e.ctx, tx, held[1:], e.owner.ManagerID)
	}); err != nil {
		t.Fatal(err)
	}
	bb := e.batch(b.ID)
	if bb.Unused != 8 || bb.Available != 6 || bb.Held != 1 || bb.StuckSale != 1 || bb.Used != 0 || bb.Revoked != 2 {
		t.Fatalf("before suspend: %+v", bb)
	}
	// Series any → suspended: still-unused cards revoked, in-flight cards left, status unchanged.
	s, err := SuspendBatch(e.ctx, e.owner, b.ID)
	if err != nil || s.Changed != 6 || s.MessageKey != "card_batch_suspended" || !s.Suspended {
		t.Fatalf("suspend: %+v %v", s, err)
	}
	bb = e.batch(b.ID)
	if !bb.Suspended || bb.Status != "ready" || bb.Unused != 2 || bb.Available != 0 || bb.Revoked != 8 || bb.Held != 1 || bb.StuckSale != 1 {
		t.Fatalf("after suspend: %+v", bb)
	}
	e.stockOK(b.ID)
	// Re-running is a no-op.
	s, err = SuspendBatch(e.ctx, e.owner, b.ID)
	if err != nil || s.Changed != 0 || s.MessageKey != "card_batch_suspended" {
		t.Fatalf("re-suspend: %+v %v", s, err)
	}
	// suspended → released: suspension-revoked cards back in stock; the
	// terminally revoked stay revoked.
	rl, err := ReleaseBatch(e.ctx, e.owner, b.ID)
	if err != nil || rl.Changed != 6 || rl.Suspended {
		t.Fatalf("release: %+v %v", rl, err)
	}
	bb = e.batch(b.ID)
	if bb.Suspended || bb.Unused != 8 || bb.Available != 6 || bb.Revoked != 2 || bb.Processed != 10 || bb.Quantity != 10 {
		t.Fatalf("after release: %+v", bb)
	}
	e.stockOK(b.ID)
	// ready → printed: status unchanged, stamp and count.
	p, err := MarkPrinted(e.ctx, e.owner, b.ID)
	if err != nil || p.Status != "ready" || p.PrintCount != 1 || p.PrintedAt.IsZero() {
		t.Fatalf("printed: %+v %v", p, err)
	}
	p, _ = MarkPrinted(e.ctx, e.owner, b.ID)
	if p.PrintCount != 2 {
		t.Fatalf("print_count %d", p.PrintCount)
	}
	// Delete is refused once a card was redeemed.
	_, err = DeleteBatch(e.ctx, e.owner, b.ID)
	xrtest.WantReason(t, err, 409, "card_batch_in_use")
	// The timeline of the redeemed card.
	tl, err := CardTimeline(e.ctx, e.owner, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range tl.Events {
		kinds = append(kinds, ev.Kind)
	}
	want := "minted redeemed revoked suspended released printed printed"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("timeline %v, want %s", kinds, want)
	}
}

func TestSeriesStatusFailedAndDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Generating: not printable, deletable. A deleted series' job ends quietly.
	res, err := CreateBatch(e.ctx, e.owner, CreateInput{Type: "refill", Quantity: 5, FaceValue: xrtest.MoneyPtr("1"), Expiration: future, RequestID: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = MarkPrinted(e.ctx, e.owner, res.BatchID)
	xrtest.WantReason(t, err, 409, "card_batch_not_ready")
	if d, err := DeleteBatch(e.ctx, e.owner, res.BatchID); err != nil || !d.Deleted {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if r, err := Generate(e.ctx, e.ten, res.BatchID, nil); err != nil || r.Status != "deleted" {
		t.Fatalf("generate after delete: %+v %v", r, err)
	}
	// generating → failed with a reason: the charge is refunded, minted cards revoked.
	r := e.manager(0, "r")
	e.exec(`UPDATE managers SET balance = 100000 WHERE id = ?`, r)
	res, err = CreateBatch(e.ctx, e.owner, CreateInput{Type: "refill", Quantity: 5, FaceValue: xrtest.MoneyPtr("10"), Expiration: future, RequestID: "g2",
		OwnerManagerID: r, UnitPrice: xrtest.MoneyPtr("8")})
	if err != nil || res.Charged != xrtest.Money("40") {
		t.Fatalf("charged: %+v %v", res, err)
	}
	if bal := e.scalar(`SELECT balance FROM managers WHERE id = ?`, r); bal != 60000 {
		t.Fatalf("wallet after charge %d", bal)
	}
	if _, err := failBatch(e.ctx, e.ten, res.BatchID, "code_space_exhausted"); err != nil {
		t.Fatal(err)
	}
	b := e.batch(res.BatchID)
	if b.Status != "failed" || b.FailureReason != "code_space_exhausted" || b.Charged != 0 {
		t.Fatalf("failed: %+v", b)
	}
	if bal := e.scalar(`SELECT balance FROM managers WHERE id = ?`, r); bal != 100000 {
		t.Fatalf("wallet after refund %d", bal)
	}
	// An unused series can be deleted (refunding its charge).
	b2 := e.series(e.owner, CreateInput{Quantity: 3, OwnerManagerID: r, UnitPrice: xrtest.MoneyPtr("2")})
	if d, err := DeleteBatch(e.ctx, e.owner, b2.ID); err != nil || d.Refunded != xrtest.Money("6") {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM cards WHERE batch_id = ?`, b2.ID); n != 0 {
		t.Fatalf("cards left: %d", n)
	}
}

func TestPricingChargesAndRefusal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.manager(0, "r")
	agent := e.manager(r, "agent")
	// No money: the whole series is refused and nothing is stored.
	_, err := CreateBatch(e.ctx, e.owner, CreateInput{Type: "refill", Quantity: 10, FaceValue: xrtest.MoneyPtr("10"), Expiration: future, RequestID: "p1",
		OwnerManagerID: r, UnitPrice: xrtest.MoneyPtr("9")})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	if e.scalar(`SELECT COUNT(*) FROM card_batches`) != 0 || e.scalar(`SELECT COUNT(*) FROM jobs`) != 0 {
		t.Fatal("a refused series was stored")
	}
	// Nobody prices itself.
	_, err = CreateBatch(e.ctx, xrtest.Reseller(e.ten, r), CreateInput{Type: "refill", Quantity: 1, FaceValue: xrtest.MoneyPtr("10"), Expiration: future, RequestID: "p2",
		UnitPrice: xrtest.MoneyPtr("1")})
	xrtest.WantReason(t, err, 400, "cannot_price_self")
	// The tenant sells to resellers: face value less the discount.
	e.exec(`INSERT INTO settings(key, value) VALUES ('cards_sell_to_resellers', 'true')`)
	e.exec(`UPDATE managers SET balance = 1000000, discount_rate = 10000 WHERE id = ?`, r) // 10 %
	b := e.series(xrtest.Reseller(e.ten, r), CreateInput{Quantity: 10, FaceValue: xrtest.MoneyPtr("10")})
	if b.Charged != xrtest.Money("90") || e.scalar(`SELECT balance FROM managers WHERE id = ?`, r) != 910000 {
		t.Fatalf("default price: charged %s", b.Charged)
	}
	ps, err := ListPricing(e.ctx, e.owner, b.ID)
	if err != nil || len(ps) != 1 || ps[0].ManagerID != r || ps[0].UnitPrice != xrtest.Money("9") {
		t.Fatalf("pricing: %+v %v", ps, err)
	}
	// The reseller sells 4 cards on to its agent at 9.5; the agent pays, the reseller is paid.
	if _, err := SetPricing(e.ctx, xrtest.Reseller(e.ten, r), b.ID, agent, PriceInput{UnitPrice: xrtest.MoneyPtr("9.5")}); err != nil {
		t.Fatal(err)
	}
	_, err = TransferCards(e.ctx, xrtest.Reseller(e.ten, r), TransferInput{ToManagerID: agent, BatchID: b.ID, Quantity: 4, RequestID: "t1"})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	e.exec(`UPDATE managers SET balance = 50000 WHERE id = ?`, agent)
	tr, err := TransferCards(e.ctx, xrtest.Reseller(e.ten, r), TransferInput{ToManagerID: agent, BatchID: b.ID, Quantity: 4, RequestID: "t2"})
	if err != nil || tr.CardCount != 4 || tr.Amount != xrtest.Money("38") {
		t.Fatalf("transfer: %+v %v", tr, err)
	}
	if a := e.scalar(`SELECT balance FROM managers WHERE id = ?`, agent); a != 12000 {
		t.Fatalf("agent wallet %d", a)
	}
	if rb := e.scalar(`SELECT balance FROM managers WHERE id = ?`, r); rb != 948000 {
		t.Fatalf("reseller wallet %d", rb)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM cards WHERE batch_id = ? AND owner_manager_id = ?`, b.ID, agent); n != 4 {
		t.Fatalf("agent holds %d", n)
	}
	rep, err := TransferCards(e.ctx, xrtest.Reseller(e.ten, r), TransferInput{ToManagerID: agent, BatchID: b.ID, Quantity: 4, RequestID: "t2"})
	if err != nil || !rep.Replay || rep.ID != tr.ID {
		t.Fatalf("transfer replay: %+v %v", rep, err)
	}
	// Revert: the cards and the money go back.
	rv, err := RevertTransfer(e.ctx, xrtest.Reseller(e.ten, r), tr.ID, RevertInput{RequestID: "t3"})
	if err != nil || rv.CardCount != 4 || rv.Amount != xrtest.Money("38") {
		t.Fatalf("revert: %+v %v", rv, err)
	}
	if a := e.scalar(`SELECT balance FROM managers WHERE id = ?`, agent); a != 50000 {
		t.Fatalf("agent wallet after revert %d", a)
	}
	_, err = RevertTransfer(e.ctx, xrtest.Reseller(e.ten, r), tr.ID, RevertInput{RequestID: "t4"})
	xrtest.WantReason(t, err, 409, "transfer_already_reverted")
	bb := e.batch(b.ID)
	if bb.Transferred != 8 || !bb.InCirculation {
		t.Fatalf("transferred %d", bb.Transferred)
	}
	_, err = DeleteBatch(e.ctx, e.owner, b.ID)
	xrtest.WantReason(t, err, 409, "card_batch_in_use")
	// Series transfer moves the ownership too (and costs the agent 10 × 9.5).
	e.exec(`UPDATE managers SET balance = 100000 WHERE id = ?`, agent)
	st, err := TransferSeries(e.ctx, e.owner, b.ID, SeriesTransferInput{ToManagerID: agent, RequestID: "t5"})
	if err != nil || st.CardCount != 10 || st.Amount != xrtest.Money("95") {
		t.Fatalf("series transfer: %+v %v", st, err)
	}
	if e.batch(b.ID).OwnerManagerID != agent {
		t.Fatal("owner not moved")
	}
	tl, _ := CardTimeline(e.ctx, e.owner, e.scalar(`SELECT MIN(id) FROM cards WHERE batch_id = ?`, b.ID))
	n := 0
	for _, ev := range tl.Events {
		if ev.Kind == "transferred" {
			n++
		}
	}
	if n != 3 {
		t.Fatalf("transferred events of the first card: %d", n)
	}
	e.stockOK(b.ID)
}

func TestReversals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("M", xrtest.Money("5"), 30, 0, 0)
	rf := e.series(e.owner, CreateInput{Quantity: 3, FaceValue: xrtest.MoneyPtr("10")})
	vo := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 2, PlanProfileID: plan})
	u := e.user("u", e.owner.ManagerID)
	rc, vc := e.codes(rf.ID), e.codes(vo.ID)
	r1, _ := Redeem(e.ctx, e.owner, RedeemInput{Code: rc[0], UserID: u, RequestID: "a"})
	// Refill reversal: the balance is debited back; the card back in stock.
	rv, err := ReverseRedemption(e.ctx, e.owner, r1.RedemptionID, ReversalInput{RequestID: "rv1", CardState: StateUnused})
	if err != nil || rv.Amount != xrtest.Money("10") || rv.CardState != StateUnused || rv.Replay {
		t.Fatalf("reversal: %+v %v", rv, err)
	}
	if e.balance(u) != 0 || e.str(`SELECT state FROM cards WHERE code = ?`, rc[0]) != StateUnused {
		t.Fatalf("after reversal: balance %s", e.balance(u))
	}
	again, err := ReverseRedemption(e.ctx, e.owner, r1.RedemptionID, ReversalInput{RequestID: "rv1", CardState: StateUnused})
	if err != nil || !again.Replay || again.ID != rv.ID {
		t.Fatalf("reversal replay: %+v %v", again, err)
	}
	_, err = ReverseRedemption(e.ctx, e.owner, r1.RedemptionID, ReversalInput{RequestID: "rv2"})
	xrtest.WantReason(t, err, 409, "redemption_already_reversed")
	list, _ := ListReversals(e.ctx, e.owner, r1.RedemptionID)
	if len(list) != 1 {
		t.Fatalf("reversals: %d", len(list))
	}
	red, _ := GetRedemption(e.ctx, e.owner, r1.RedemptionID)
	if !red.Reversed {
		t.Fatal("redemption not marked reversed")
	}
	// The card can be redeemed again.
	if _, err := Redeem(e.ctx, e.owner, RedeemInput{Code: rc[0], UserID: u, RequestID: "b"}); err != nil {
		t.Fatal(err)
	}
	// A balance already spent cannot be taken back beyond the credit.
	e.exec(`UPDATE users SET debt_limit = 0 WHERE id = ?`, u)
	r2, _ := Redeem(e.ctx, e.owner, RedeemInput{Code: rc[1], UserID: u, RequestID: "c"})
	if err := e.ten.Write(e.ctx, func(tx *sqlTx) error {
		_, err := tx.Exec(`UPDATE users SET balance = 5000 WHERE id = ?`, u) // spent (test shortcut)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	_, err = ReverseRedemption(e.ctx, e.owner, r2.RedemptionID, ReversalInput{RequestID: "rv3"})
	xrtest.WantReason(t, err, 409, "insufficient_balance")
	// Voucher reversal: the activation is reverted; the card revoked by default.
	expBefore := e.scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND expiration IS NULL`, u)
	v1, _ := Redeem(e.ctx, e.owner, RedeemInput{Code: vc[0], UserID: u, RequestID: "d"})
	vr, err := ReverseRedemption(e.ctx, e.owner, v1.RedemptionID, ReversalInput{RequestID: "rv4"})
	if err != nil || vr.CardState != StateRevoked || vr.ActivationID == nil {
		t.Fatalf("voucher reversal: %+v %v", vr, err)
	}
	if e.scalar(`SELECT COUNT(*) FROM users WHERE id = ? AND profile_id IS NULL`, u) != 1 || expBefore != 1 {
		t.Fatal("activation not reverted")
	}
	if e.str(`SELECT revoked_reason FROM cards WHERE code = ?`, vc[0]) != revokedReversal {
		t.Fatal("card not revoked")
	}
	for _, id := range []int64{rf.ID, vo.ID} {
		e.stockOK(id)
	}
}

func TestRegenerateExpiryCodeLength(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 5})
	old := e.codes(b.ID)
	u := e.user("u", e.owner.ManagerID)
	Redeem(e.ctx, e.owner, RedeemInput{Code: old[0], UserID: u, RequestID: "a"})
	res, err := Regenerate(e.ctx, e.owner, b.ID, RegenerateInput{RequestID: "g"})
	if err != nil || res.Regenerated != 4 {
		t.Fatalf("regenerate: %+v %v", res, err)
	}
	now := e.codes(b.ID)
	if now[0] != old[0] {
		t.Fatal("a consumed card's code changed")
	}
	for i := 1; i < 5; i++ {
		if now[i] == old[i] {
			t.Fatalf("code %d unchanged", i)
		}
	}
	rep, _ := Regenerate(e.ctx, e.owner, b.ID, RegenerateInput{RequestID: "g"})
	if !rep.Replay || e.codes(b.ID)[1] != now[1] {
		t.Fatal("regenerate replay changed codes")
	}
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: old[1], UserID: u, RequestID: "b"})
	xrtest.WantReason(t, err, 404, "not_found")
	// Expiry: one series, then bulk; past dates refused.
	_, err = ChangeExpiry(e.ctx, e.owner, b.ID, ExpiryInput{Expiration: "2000-01-01"})
	xrtest.WantReason(t, err, 400, "invalid_expiration")
	ex, err := ChangeExpiry(e.ctx, e.owner, b.ID, ExpiryInput{Expiration: "2099-06-30 12:00:00"})
	if err != nil || ex.Updated != 4 {
		t.Fatalf("expiry: %+v %v", ex, err)
	}
	bulk, err := BulkExpiry(e.ctx, e.owner, BulkExpiryInput{IDs: []int64{b.ID, 777}, Expiration: "2098-01-01"})
	if err != nil || len(bulk.Updated) != 1 || len(bulk.Failed) != 1 {
		t.Fatalf("bulk expiry: %+v %v", bulk, err)
	}
	if got := e.str(`SELECT expires_at FROM cards WHERE code = ?`, now[1]); got != "2098-01-01 23:59:59" {
		t.Fatalf("card expiry %s", got)
	}
	cl, err := CodeLength(e.ctx, e.owner, "numeric", 100_000)
	if err != nil || cl.LiveCards != 4 || cl.MinLength != RequiredCodeLength("numeric", 100_004) || cl.Lengths["alnum_no_ambig"] == 0 {
		t.Fatalf("code-length: %+v %v", cl, err)
	}
	page, err := ListCards(e.ctx, e.owner, b.ID, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "c.seq", Filters: map[string]any{"has_customer": true}})
	if err != nil || len(page.Rows) != 1 || page.Rows[0].Code != old[0] {
		t.Fatalf("has_customer: %+v %v", page, err)
	}
	page, _ = ListCards(e.ctx, e.owner, b.ID, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "c.seq", Filters: map[string]any{"state": "unused"}})
	if len(page.Rows) != 4 || page.Rows[0].RedemptionsLeft != 1 {
		t.Fatalf("state filter: %d", len(page.Rows))
	}
}

func TestPatchAndSales(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 6})
	_, err := PatchBatch(e.ctx, e.owner, b.ID, PatchInput{AutoActivate: app.Opt[bool]{Set: true, V: true}})
	xrtest.WantReason(t, err, 400, "plan_profile_id_required")
	p, err := PatchBatch(e.ctx, e.owner, b.ID, PatchInput{Name: app.Opt[string]{Set: true, V: " Kiosk "}, Note: app.Opt[string]{Set: true, V: "north"},
		SellOnline: app.Opt[bool]{Set: true, V: true}, TemplateID: app.Opt[int64]{Set: true, V: 3}})
	if err != nil || p.Name != "Kiosk" || p.Note != "north" || !p.SellOnline || p.TemplateID == nil || *p.TemplateID != 3 {
		t.Fatalf("patch: %+v %v", p, err)
	}
	page, _ := ListBatches(e.ctx, e.owner, app.ListQuery{Page: 1, PageSize: 50, SortExpr: "b.id", Filters: map[string]any{"template_id": int64(3)}})
	if len(page.Rows) != 1 {
		t.Fatal("filter[template_id]")
	}
	// A till sale: held, then sold at the counter; the shop sells directly.
	if err := e.ten.Write(e.ctx, func(tx *sqlTx) error {
		ids, err := HoldForSale(e.ctx, tx, b.ID, e.owner.ManagerID, 2, e.owner.ManagerID)
		if err != nil {
			return err
		}
		if err := CompleteSale(e.ctx, tx, ids, DispSoldCounter, e.owner.ManagerID); err != nil {
			return err
		}
		_, err = SellOnline(e.ctx, tx, b.ID, e.owner.ManagerID, 1, e.owner.ManagerID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	bb := e.batch(b.ID)
	if bb.SoldCounter != 2 || bb.SoldOnline != 1 || bb.Available != 3 || bb.Unused != 6 || bb.Held != 0 {
		t.Fatalf("sales: %+v", bb)
	}
	e.stockOK(b.ID)
	// Sold cards are still redeemable (unused), and the series can no longer be deleted.
	_, err = DeleteBatch(e.ctx, e.owner, b.ID)
	xrtest.WantReason(t, err, 409, "card_batch_in_use")
	sold := e.str(`SELECT code FROM cards WHERE batch_id = ? AND disposition = 'sold_counter' LIMIT 1`, b.ID)
	u := e.user("u", e.owner.ManagerID)
	if _, err := Redeem(e.ctx, e.owner, RedeemInput{Code: sold, UserID: u, RequestID: "s"}); err != nil {
		t.Fatal(err)
	}
	if d := e.str(`SELECT disposition FROM cards WHERE code = ?`, sold); d != DispSoldCounter {
		t.Fatalf("disposition after redemption: %s", d)
	}
	e.stockOK(b.ID)
}

func TestRedeemRefusedWhileGeneratingOrFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 2})
	codes := e.codes(b.ID)
	u := e.user("u", e.owner.ManagerID)
	e.exec(`UPDATE card_batches SET status = 'generating' WHERE id = ?`, b.ID)
	_, err := Redeem(e.ctx, e.owner, RedeemInput{Code: codes[0], UserID: u, RequestID: "a"})
	xrtest.WantReason(t, err, 409, "card_batch_not_ready")
	if _, err := failBatch(e.ctx, e.ten, b.ID, "generation_error"); err != nil {
		t.Fatal(err)
	}
	_, err = Redeem(e.ctx, e.owner, RedeemInput{Code: codes[0], UserID: u, RequestID: "b"})
	xrtest.WantReason(t, err, 409, "card_revoked")
	if bb := e.batch(b.ID); bb.Status != "failed" || bb.Revoked != 2 || bb.Available != 0 {
		t.Fatalf("failed series: %+v", bb)
	}
	e.stockOK(b.ID)
}

// generating → failed with a reason, through the job handler.
func TestGenerationFailsWithReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res, err := CreateBatch(e.ctx, e.owner, CreateInput{Type: "refill", Quantity: 20, FaceValue: xrtest.MoneyPtr("1"), Expiration: future, RequestID: "f"})
	if err != nil {
		t.Fatal(err)
	}
	// Only ten codes of length 1 exist: the code space runs out.
	e.exec(`UPDATE card_batches SET code_length = 1 WHERE id = ?`, res.BatchID)
	job, err := app.GetJob(e.ctx, e.ten.DB.R, res.JobID)
	if err != nil {
		t.Fatal(err)
	}
	job.Attempts = 1
	out, err := runGenerate(e.ctx, &app.JobContext{Tenant: e.ten, Job: job})
	if err != nil {
		t.Fatal(err)
	}
	b := e.batch(res.BatchID)
	if r := out.(*generateResult); r.Status != "failed" || b.Status != "failed" || b.FailureReason != "code_space_exhausted" || b.Processed != 0 {
		t.Fatalf("failed: %+v %+v", out, b)
	}
	e.stockOK(res.BatchID)
}

// A suspension (and an expiry change) made while a series is generating
// applies to the cards minted after it.
func TestSuspendWhileGenerating(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	res, err := CreateBatch(e.ctx, e.owner, CreateInput{Type: "refill", Quantity: 7, FaceValue: xrtest.MoneyPtr("1"), Expiration: future, RequestID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SuspendBatch(e.ctx, e.owner, res.BatchID); err != nil {
		t.Fatal(err)
	}
	if _, err := ChangeExpiry(e.ctx, e.owner, res.BatchID, ExpiryInput{Expiration: "2097-01-01"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(e.ctx, e.ten, res.BatchID, nil); err != nil {
		t.Fatal(err)
	}
	b := e.batch(res.BatchID)
	if b.Status != "ready" || b.Revoked != 7 || b.Available != 0 || e.scalar(`SELECT COUNT(*) FROM cards WHERE batch_id = ? AND expires_at = '2097-01-01 23:59:59'`, b.ID) != 7 {
		t.Fatalf("generated while suspended: %+v", b)
	}
	if rl, _ := ReleaseBatch(e.ctx, e.owner, b.ID); rl.Changed != 7 {
		t.Fatalf("release: %+v", rl)
	}
	e.stockOK(b.ID)
}
