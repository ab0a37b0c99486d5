package cards

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"xr/app"
	"xr/internal/xrtest"
)

// cardSheetDesign stores a card_sheet design row as the studio does and
// returns its id.
func (e *env) cardSheetDesign(name string) int64 {
	e.t.Helper()
	doc, err := json.Marshal(map[string]any{"kind": "card_sheet", "page": map[string]any{"width": 210, "height": 297, "margin": 10},
		"card":     map[string]any{"width": 85, "height": 54, "gap": 4},
		"elements": []map[string]any{{"type": "text", "x": 4, "y": 4, "w": 77, "h": 8, "text": "{plan} {username}", "font_size": 10}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return xrtest.Exec(e.t, e.ten, `INSERT INTO designs(name, kind, doc, created_at, updated_at) VALUES (?, 'card_sheet', ?, ?, ?)`,
		name, string(doc), app.StampNow(), app.StampNow())
}

func (e *env) listQuery() app.ListQuery {
	e.t.Helper()
	lq, err := app.ParseList(url.Values{}, TemplateListSpec())
	if err != nil {
		e.t.Fatal(err)
	}
	return lq
}

func TestTemplateRulesAreTheBatchRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Month", xrtest.Money("5"), 30, 0, 0)
	ok := func() TemplateInput {
		return TemplateInput{Name: "Month cards", TemplateSpec: TemplateSpec{Type: "prepaid", Quantity: 10, FaceValue: xrtest.MoneyPtr("5"),
			ExpirationDays: 90, PlanProfileID: plan}}
	}
	for _, c := range []struct {
		reason, field string
		edit          func(*TemplateInput)
	}{
		{"name_required", "name", func(in *TemplateInput) { in.Name = " " }},
		{"face_value_required", "face_value", func(in *TemplateInput) { in.FaceValue = nil }},
		{"invalid_quantity", "quantity", func(in *TemplateInput) { in.Quantity = -1 }},
		{"quantity_too_large", "quantity", func(in *TemplateInput) { in.Quantity = MaxQuantity + 1 }},
		{"plan_profile_id_required", "plan_profile_id", func(in *TemplateInput) { in.PlanProfileID = 0 }},
		{"plan_not_assignable", "plan_profile_id", func(in *TemplateInput) { in.PlanProfileID = 9999 }},
		{"invalid_code_length", "code_length", func(in *TemplateInput) { in.CodeLength = 2 }},
		{"expiration_required", "expiration", func(in *TemplateInput) { in.ExpirationDays = 0 }},
		{"invalid_expiration", "expiration", func(in *TemplateInput) { in.ExpirationDays, in.Expiration = 0, "2001-01-01" }},
		{"expiration_rule_conflict", "expiration_days", func(in *TemplateInput) { in.Expiration = future }},
		{"invalid_expiration_days", "expiration_days", func(in *TemplateInput) { in.ExpirationDays = MaxExpirationDays + 1 }},
		{"invalid_owner_manager_id", "owner_manager_id", func(in *TemplateInput) { in.OwnerManagerID = 9999 }},
		{"invalid_design_id", "design_id", func(in *TemplateInput) { d := int64(9999); in.DesignID = &d }},
	} {
		in := ok()
		c.edit(&in)
		_, err := CreateTemplate(e.ctx, e.owner, in)
		if xrtest.WantReason(t, err, 400, c.reason); app.AsError(err).Field != c.field {
			t.Fatalf("%s: field %q", c.reason, app.AsError(err).Field)
		}
	}
	if n := e.scalar(`SELECT COUNT(*) FROM card_templates`); n != 0 {
		t.Fatalf("%d templates stored by refused requests", n)
	}
	// A receipt design is not a card sheet design.
	receipt := xrtest.Exec(t, e.ten, `INSERT INTO designs(name, kind, doc, created_at, updated_at) VALUES ('r', 'receipt', '{}', ?, ?)`, app.StampNow(), app.StampNow())
	in := ok()
	in.DesignID = &receipt
	_, err := CreateTemplate(e.ctx, e.owner, in)
	xrtest.WantReason(t, err, 400, "invalid_design_id")

	// Valid: stored with the defaults the batch rules fill in.
	d := e.cardSheetDesign("Blue")
	in = ok()
	in.DesignID = &d
	tpl, err := CreateTemplate(e.ctx, e.owner, in)
	if err != nil || tpl.CodeCharset != "numeric" || tpl.PlanName != "Month" || *tpl.DesignID != d || tpl.ExpirationDays != 90 || tpl.ManagerID != e.owner.ManagerID {
		t.Fatalf("create: %+v %v", tpl, err)
	}
	// PATCH: the merged template is checked as a whole; setting an absolute
	// expiry clears the relative one; design null is the default design.
	_, err = PatchTemplate(e.ctx, e.owner, tpl.ID, TemplatePatch{Type: app.Opt[CardType]{Set: true, V: "prepaid"}, PlanProfileID: app.Opt[int64]{Set: true, Null: true}})
	xrtest.WantReason(t, err, 400, "plan_profile_id_required")
	p, err := PatchTemplate(e.ctx, e.owner, tpl.ID, TemplatePatch{Expiration: app.Opt[string]{Set: true, V: future}, DesignID: app.Opt[int64]{Set: true, Null: true}})
	if err != nil || p.ExpirationDays != 0 || p.Expiration != future || p.DesignID != nil || p.PlanProfileID != plan {
		t.Fatalf("patch: %+v %v", p, err)
	}
}

func TestTemplateScopeAndGenerate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Day", xrtest.Money("1"), 1, 0, 0)
	r1, r2 := e.manager(0, "r1"), e.manager(0, "r2")
	agent := e.manager(r1, "agent")
	a1, a2, ag := xrtest.Reseller(e.ten, r1), xrtest.Reseller(e.ten, r2), xrtest.Reseller(e.ten, agent)
	d := e.cardSheetDesign("Green")
	tpl, err := CreateTemplate(e.ctx, ag, TemplateInput{Name: "Agent day", DesignID: &d, TemplateSpec: TemplateSpec{Type: "refill", Quantity: 3,
		FaceValue: xrtest.MoneyPtr("2"), ExpirationDays: 30, PlanProfileID: plan}})
	if err != nil {
		t.Fatal(err)
	}
	// The agent's parent and the tenant see it; a sibling reseller does not.
	for _, act := range []*app.Actor{a1, e.owner, ag} {
		if _, err := GetTemplate(e.ctx, act, tpl.ID); err != nil {
			t.Fatalf("manager %d: %v", act.ManagerID, err)
		}
	}
	_, err = GetTemplate(e.ctx, a2, tpl.ID)
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = PatchTemplate(e.ctx, a2, tpl.ID, TemplatePatch{Name: app.Opt[string]{Set: true, V: "x"}})
	xrtest.WantReason(t, err, 404, "not_found")
	_, err = GenerateFromTemplate(e.ctx, a2, tpl.ID, GenerateInput{RequestID: "g-r2"})
	xrtest.WantReason(t, err, 404, "not_found")
	if l, err := ListTemplates(e.ctx, a2, e.listQuery()); err != nil || len(l.Rows) != 0 {
		t.Fatalf("sibling list: %+v %v", l, err)
	}
	if l, err := ListTemplates(e.ctx, a1, e.listQuery()); err != nil || len(l.Rows) != 1 || l.Rows[0].PlanName != "Day" {
		t.Fatalf("parent list: %+v %v", l, err)
	}
	// request_id is required.
	_, err = GenerateFromTemplate(e.ctx, a1, tpl.ID, GenerateInput{})
	xrtest.WantReason(t, err, 400, "request_id_required")
	// The batch rules apply to the overrides.
	_, err = GenerateFromTemplate(e.ctx, a1, tpl.ID, GenerateInput{RequestID: "g-bad", Quantity: MaxQuantity + 1})
	xrtest.WantReason(t, err, 400, "quantity_too_large")
	// Fresh, then a replay answering the same series.
	res, err := GenerateFromTemplate(e.ctx, a1, tpl.ID, GenerateInput{RequestID: "g1", Quantity: 4})
	if err != nil || res.Replay || res.Status != "generating" || res.BatchID == 0 {
		t.Fatalf("generate: %+v %v", res, err)
	}
	again, err := GenerateFromTemplate(e.ctx, a1, tpl.ID, GenerateInput{RequestID: "g1", Quantity: 4})
	if err != nil || !again.Replay || again.BatchID != res.BatchID || again.JobID != res.JobID || again.CodeLength != res.CodeLength {
		t.Fatalf("replay: %+v %v", again, err)
	}
	_, err = GenerateFromTemplate(e.ctx, a1, tpl.ID, GenerateInput{RequestID: "g1", Quantity: 5})
	xrtest.WantReason(t, err, 409, "request_id_conflict")
	if n := e.scalar(`SELECT COUNT(*) FROM card_batches WHERE template_id = ?`, tpl.ID); n != 1 {
		t.Fatalf("%d series from the template", n)
	}
	if _, err := Generate(e.ctx, e.ten, res.BatchID, nil); err != nil {
		t.Fatal(err)
	}
	b := e.batch(res.BatchID)
	if b.Status != "ready" || b.Quantity != 4 || b.Name != "Agent day" || b.TemplateID == nil || *b.TemplateID != tpl.ID || b.DesignID == nil ||
		*b.DesignID != d || b.FaceValue != xrtest.Money("2") || b.OwnerManagerID != r1 || b.PlanID == nil || *b.PlanID != plan {
		t.Fatalf("series: %+v", b)
	}
	// Relative expiry: the end of the day 30 days after the generation.
	if want := e.ten.Now().AddDate(0, 0, 30).Format("2006-01-02") + " 23:59:59"; app.FormatTime(b.Expiration.Time) != want {
		t.Fatalf("expiration %s, want %s", app.FormatTime(b.Expiration.Time), want)
	}
	// Without a quantity the template's default applies.
	res2, err := GenerateFromTemplate(e.ctx, e.owner, tpl.ID, GenerateInput{RequestID: "g2"})
	if err != nil || e.scalar(`SELECT quantity FROM card_batches WHERE id = ?`, res2.BatchID) != 3 {
		t.Fatalf("default quantity: %+v %v", res2, err)
	}
	// A series' design can be chosen afterwards (a card_sheet design only).
	_, err = PatchBatch(e.ctx, e.owner, res.BatchID, PatchInput{DesignID: app.Opt[int64]{Set: true, V: 9999}})
	xrtest.WantReason(t, err, 400, "invalid_design_id")
	if pb, err := PatchBatch(e.ctx, e.owner, res.BatchID, PatchInput{DesignID: app.Opt[int64]{Set: true, Null: true}}); err != nil || pb.DesignID != nil {
		t.Fatalf("design cleared: %+v %v", pb, err)
	}
	// Deleting the template leaves its series as they are.
	if _, err := DeleteTemplate(e.ctx, a2, tpl.ID); err == nil {
		t.Fatal("a sibling deleted the template")
	}
	br, err := BulkDeleteTemplates(e.ctx, a1, app.BulkIDs{IDs: []int64{tpl.ID}})
	if err != nil || len(br.Updated) != 1 {
		t.Fatalf("bulk delete: %+v %v", br, err)
	}
	if n := e.scalar(`SELECT COUNT(*) FROM card_batches WHERE template_id = ?`, tpl.ID); n != 2 {
		t.Fatalf("%d series keep the template id", n)
	}
}

func TestFaceValueUsesTheCurrencyDecimals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m    string
		cur  string
		want string
	}{{"7.5", "USD", "7.50"}, {"7.5", "KWD", "7.500"}, {"7.5", "JPY", "8"}, {"1234", "EUR", "1234.00"}, {"0.125", "XYZ", "0.125"}, {"0.005", "USD", "0.01"}} {
		if got := faceValue(xrtest.Money(c.m), c.cur); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.m, c.cur, got, c.want)
		}
	}
}

// The sheet prints non-Latin text: an Arabic plan name (shaped, right to
// left) and a Cyrillic login come back from the PDF's extracted text.
func TestPDFPrintsArabicAndCyrillic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("باقة شهرية", xrtest.Money("1"), 30, 0, 0)
	b := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 2, PlanProfileID: plan})
	e.exec(`UPDATE cards SET username = 'Иван' WHERE id = (SELECT MIN(id) FROM cards WHERE batch_id = ?)`, b.ID)
	var buf bytes.Buffer
	if _, _, err := RenderPDF(e.ctx, e.ten, "شبكة النور", e.batch(b.ID), &buf, nil); err != nil {
		t.Fatal(err)
	}
	text := xrtest.PDFText(t, buf.Bytes())
	for _, want := range []string{"باقة شهرية", "Иван", "شبكة النور"} {
		if !strings.Contains(text, want) {
			t.Fatalf("%q not in the sheet's text %q", want, text)
		}
	}
}
