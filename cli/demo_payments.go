package cli

import (
	"context"
	"fmt"

	"xr/app/payments"
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
	return nil
}
