package cli

import (
	"context"
	"fmt"

	"xr/app"
	"xr/app/cards"
)

// seedDemoCards: three ready series (two refill, one prepaid on the card
// plan), minted by running their jobs here; some refill cards handed to the
// north reseller and 20 Refill 25 cards to the cashier, some redeemed over
// the counter onto subscribers. The online shop's sales come with the
// payment methods (seedDemoShop).
func seedDemoCards(ctx context.Context, d *demoSeed) error {
	var cardPlan int64
	for _, p := range d.plans {
		if p.name == "Card 1 day" {
			cardPlan = p.id
		}
	}
	exp := d.now.AddDate(1, 0, 0).Format(app.DateLayout)
	ten, twentyFive := money(10), money(25)
	batches := map[string]int64{}
	for _, in := range []cards.CreateInput{
		{Type: "refill", Quantity: 100, FaceValue: &ten, Expiration: exp, CodeCharset: "numeric", Name: "Refill 10", RequestID: "demo-refill-10"},
		{Type: "refill", Quantity: 50, FaceValue: &twentyFive, Expiration: exp, CodeCharset: "numeric", Name: "Refill 25", RequestID: "demo-refill-25"},
		{Type: "prepaid", Quantity: 100, FaceValue: &ten, Expiration: exp, PlanProfileID: cardPlan, CodeCharset: "alnum_no_ambig",
			Name: "Day pass cards", RequestID: "demo-prepaid", SellOnline: true},
	} {
		r, err := cards.CreateBatch(ctx, d.sys, in)
		if err != nil {
			return fmt.Errorf("card series %s: %w", in.Name, err)
		}
		batches[in.Name] = r.BatchID
	}
	// Mint now: the job runner of serve would, a moment later.
	if _, err := d.a.Jobs.RunDue(ctx, d.t.Slug, d.t.Now()); err != nil {
		return fmt.Errorf("mint cards: %w", err)
	}
	north := d.managers[demoReseller]
	if _, err := cards.TransferCards(ctx, d.sys, cards.TransferInput{ToManagerID: north, BatchID: batches["Refill 10"], Quantity: 30,
		RequestID: "demo-cards-north"}); err != nil {
		return fmt.Errorf("transfer cards: %w", err)
	}
	// The cashier's counter stock: it sells Refill 25 cards at its till
	// from the first sign-in.
	if _, err := cards.TransferCards(ctx, d.sys, cards.TransferInput{ToManagerID: d.managers[demoCashier], BatchID: batches["Refill 25"], Quantity: 20,
		RequestID: "demo-cards-cashier"}); err != nil {
		return fmt.Errorf("transfer cards to the cashier: %w", err)
	}
	// Over the counter: the owner's shop sells a Refill 10 to a few of its
	// subscribers; the north reseller redeems its own cards for its own.
	northAct, _, err := app.ManagerActor(ctx, d.t, north, nil)
	if err != nil {
		return err
	}
	var mine, theirs int
	for _, s := range d.users {
		if s.state != subActive {
			continue
		}
		act, owner, n := d.sys, d.sys.ManagerID, &mine
		if s.owner == north {
			act, owner, n = northAct, north, &theirs
		} else if s.owner != d.sys.ManagerID {
			continue
		}
		if *n >= 12 {
			continue
		}
		code, err := demoCardCode(ctx, d.t, batches["Refill 10"], owner)
		if err != nil {
			return err
		}
		if _, err := cards.RedeemOTC(ctx, act, cards.OTCInput{Code: code, UserID: s.id, RequestID: fmt.Sprintf("demo-otc-%d", s.i)}); err != nil {
			return fmt.Errorf("redeem card for %d: %w", s.i, err)
		}
		*n++
	}
	return nil
}

// demoCardCode reads the code of an unused available card of a series
// held by owner.
func demoCardCode(ctx context.Context, t *app.Tenant, batch, owner int64) (string, error) {
	var code string
	err := t.DB.R.QueryRowContext(ctx, `SELECT code FROM cards WHERE batch_id = ? AND owner_manager_id = ? AND state = 'unused'
		AND disposition = 'available' ORDER BY seq LIMIT 1`, batch, owner).Scan(&code)
	return code, err
}
