package cli

import (
	"context"
	"fmt"

	"xr/app"
	"xr/app/cards"
	"xr/app/subs"
)

// seedCards gives the demo a refill series and a prepaid series.
func seedCards(ctx context.Context, a *app.App, t *app.Tenant) error {
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return err
	}
	// The demo's plans may be seeded after this: the cards bring their own.
	p, err := subs.CreateProfile(ctx, act, subs.ProfileInput{Name: app.Opt[string]{Set: true, V: "Card 1 day"},
		Price: app.Opt[app.Money]{Set: true, V: 2000}, DurationDays: app.Opt[int64]{Set: true, V: 1},
		RateDownKbps: app.Opt[int64]{Set: true, V: 8192}, RateUpKbps: app.Opt[int64]{Set: true, V: 2048}})
	if err != nil {
		return err
	}
	face := app.Money(10_000)
	exp := app.Now().AddDate(1, 0, 0).Format(app.DateLayout)
	for _, in := range []cards.CreateInput{
		{Type: "refill", Quantity: 50, FaceValue: &face, Expiration: exp, CodeCharset: "numeric", Name: "Refill 10", RequestID: "demo-refill"},
		{Type: "prepaid", Quantity: 50, FaceValue: &face, Expiration: exp, PlanProfileID: p.ID, CodeCharset: "alnum_no_ambig", Name: "Day pass cards",
			RequestID: "demo-prepaid"},
	} {
		// The job runner of serve mints the cards.
		if _, err := cards.CreateBatch(ctx, act, in); err != nil {
			return fmt.Errorf("card series %s: %w", in.Name, err)
		}
	}
	return nil
}
