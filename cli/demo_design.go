package cli

import (
	"context"
	"fmt"

	"xr/app/cards"
	"xr/app/hotspot"
	"xr/app/studio"
	"xr/app/studio/render"
)

// seedDemoDesigns: the tenant's own card design (the built-in one with the
// ISP's colours, made the default), a card template printing with it and
// one series generated from it, and two hotspot page sets (English
// voucher-first, Arabic clean).
func seedDemoDesigns(ctx context.Context, d *demoSeed) error {
	doc := render.DefaultDesign(render.KindCardSheet)
	for i := range doc.Elements {
		if doc.Elements[i].Type == "text" && doc.Elements[i].Bold {
			doc.Elements[i].Color = "#1f5fbf"
		}
	}
	design, err := studio.Create(ctx, d.sys, studio.CreateInput{Name: "Demo ISP card", Kind: render.KindCardSheet, Doc: doc, IsDefault: true})
	if err != nil {
		return fmt.Errorf("card design: %w", err)
	}
	ten := money(10)
	tpl, err := cards.CreateTemplate(ctx, d.sys, cards.TemplateInput{Name: "Refill 10 (printed)", DesignID: &design.ID,
		TemplateSpec: cards.TemplateSpec{Type: "refill", Quantity: 40, FaceValue: &ten, ExpirationDays: 365, CodeCharset: "numeric"}})
	if err != nil {
		return fmt.Errorf("card template: %w", err)
	}
	if _, err := cards.GenerateFromTemplate(ctx, d.sys, tpl.ID, cards.GenerateInput{RequestID: "demo-template-1"}); err != nil {
		return fmt.Errorf("generate from the template: %w", err)
	}
	if _, err := d.a.Jobs.RunDue(ctx, d.t.Slug, d.t.Now()); err != nil {
		return fmt.Errorf("mint the template's series: %w", err)
	}
	for _, in := range []hotspot.PageInput{
		{Name: "Guest Wi-Fi (vouchers)", Template: "voucher-first", Lang: "en"},
		{Name: "واي فاي الضيوف", Template: "clean", Lang: "ar"},
	} {
		if _, err := hotspot.CreatePage(ctx, d.sys, in); err != nil {
			return fmt.Errorf("hotspot pages %s: %w", in.Name, err)
		}
	}
	return nil
}
