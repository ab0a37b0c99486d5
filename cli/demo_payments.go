package cli

import (
	"context"
	"fmt"

	"xr/app/payments"
	"xr/app/shop"
)

// seedDemoPayments offers bank transfer (the manual method) with its
// instructions, and leaves a few subscribers' top-ups: one confirmed by
// staff, two waiting for the money (to confirm or reject on the Payments
// page).
func seedDemoPayments(ctx context.Context, d *demoSeed) error {
	on := true
	instr := "Transfer {total} {currency} to Demo ISP, IBAN XX00 DEMO 0000 0000, with the reference {reference}."
	if _, err := payments.SetGateway(ctx, d.sys, "manual", payments.GatewayInput{Enabled: &on, Instructions: &instr}); err != nil {
		return fmt.Errorf("manual gateway: %w", err)
	}
	for i, amount := range []float64{20, 15, 30} {
		if i >= len(d.users) {
			break
		}
		u := d.users[i]
		ch, err := payments.Start(ctx, d.t, payments.StartInput{Gateway: "manual", RequestID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1),
			Amount: money(amount), Purpose: payments.PurposeDeposit, UserID: u.id, PayerKey: fmt.Sprintf("u:%d", u.id)})
		if err != nil {
			return fmt.Errorf("demo payment: %w", err)
		}
		if i == 0 {
			if _, err := payments.Confirm(ctx, d.sys, ch.Payment.ID, payments.DecisionInput{Note: "demo: seen on the bank statement"}); err != nil {
				return fmt.Errorf("confirm demo payment: %w", err)
			}
		}
	}
	return seedDemoShop(ctx, d)
}

// seedDemoShop publishes the day passes in the online shop and buys some
// there as a customer would: five purchases of three cards paid by bank
// transfer, four confirmed by staff (their cards delivered), one waiting
// for the money. The shop's pages and its sales list read these.
func seedDemoShop(ctx context.Context, d *demoSeed) error {
	var series int64
	if err := d.t.DB.R.QueryRowContext(ctx, `SELECT id FROM card_batches WHERE name = 'Day pass cards'`).Scan(&series); err != nil {
		return fmt.Errorf("day pass series: %w", err)
	}
	price := money(2)
	if _, err := shop.Publish(ctx, d.sys, series, shop.PublishInput{Price: &price}); err != nil {
		return fmt.Errorf("publish day passes: %w", err)
	}
	for i := range 5 {
		p, err := shop.Buy(ctx, d.t, shop.BuyInput{SeriesID: series, Quantity: 3, Gateway: "manual",
			Contact: fmt.Sprintf("+96279555%04d", i+1), RequestID: fmt.Sprintf("00000000-0000-4000-9000-%012d", i+1),
			Origin: "http://" + d.t.Slug + ".localhost"})
		if err != nil {
			return fmt.Errorf("demo shop purchase: %w", err)
		}
		if i < 4 {
			if _, err := payments.Confirm(ctx, d.sys, p.Payment.ID, payments.DecisionInput{Note: "demo: paid at the bank"}); err != nil {
				return fmt.Errorf("confirm demo shop purchase: %w", err)
			}
		}
	}
	return nil
}
