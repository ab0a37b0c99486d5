package web_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"xr/app"
	"xr/app/identity"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// Helpers of the card template tests (prefix ct).

// ctManager creates a manager under parent (0: the root) holding a role
// with codes, and returns its id and session token.
func ctManager(t *testing.T, k *webtest.Kit, name string, parent int64, codes ...string) (int64, string) {
	t.Helper()
	sys := k.System("acme")
	role, err := identity.CreateRole(webtest.Background, sys, identity.RoleInput{Name: app.Opt[string]{Set: true, V: "ct-" + name},
		Permissions: app.Opt[[]string]{Set: true, V: codes}})
	if err != nil {
		t.Fatal(err)
	}
	in := identity.ManagerInput{Username: app.Opt[string]{Set: true, V: name}, Password: app.Opt[string]{Set: true, V: webtest.Password},
		RoleIDs: app.Opt[[]int64]{Set: true, V: []int64{role.ID}}}
	if parent != 0 {
		in.ParentManagerID = app.Opt[int64]{Set: true, V: parent}
	}
	m, err := identity.CreateManager(webtest.Background, sys, in)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID, k.Login("acme", name, webtest.Password)
}

func TestCardTemplatesHTTPReasonsAndScope(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	plan := webtest.CreatePlan(t, k, "Week")
	designer := []string{"prm_cards_designer", "prm_cards_generate_user", "prm_cards_list"}
	r1, t1 := ctManager(t, k, "r1", 0, designer...)
	_, t2 := ctManager(t, k, "r2", 0, designer...)
	_, tList := ctManager(t, k, "viewer", 0, "prm_cards_list")
	_, tGen := ctManager(t, k, "gen", r1, "prm_cards_generate_user")

	// 403 before validation: an empty body from a caller without the code.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/card-templates", tList, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/card-templates", tList, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/card-templates/1/generate", tList, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	// A generator reads templates but does not write them.
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/card-templates", tGen, map[string]any{}), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	// 400 from the batch rules, naming the field.
	body := func(edit func(map[string]any)) map[string]any {
		b := map[string]any{"name": "Week cards", "type": "prepaid", "quantity": 5, "face_value": 3, "expiration_days": 30, "plan_profile_id": plan}
		if edit != nil {
			edit(b)
		}
		return b
	}
	for _, c := range []struct {
		reason, field string
		edit          func(map[string]any)
	}{
		{"face_value_required", "face_value", func(b map[string]any) { delete(b, "face_value") }},
		{"plan_profile_id_required", "plan_profile_id", func(b map[string]any) { delete(b, "plan_profile_id") }},
		{"invalid_expiration", "expiration", func(b map[string]any) { delete(b, "expiration_days"); b["expiration"] = "2001-02-03" }},
		{"quantity_too_large", "quantity", func(b map[string]any) { b["quantity"] = 100_001 }},
		{"invalid_enum", "code_charset", func(b map[string]any) { b["code_charset"] = "emoji" }},
		{"expiration_rule_conflict", "expiration_days", func(b map[string]any) { b["expiration"] = webtest.NextYear }},
		{"invalid_design_id", "design_id", func(b map[string]any) { b["design_id"] = 424242 }},
	} {
		r := k.Do("POST", "acme", "/api/v1/card-templates", t1, body(c.edit))
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", c.reason)
		if r.Field() != c.field {
			t.Fatalf("%s: field %q", c.reason, r.Field())
		}
	}
	if n := xrtest.Scalar(t, k.Acquire("acme"), `SELECT COUNT(*) FROM card_templates`); n != 0 {
		t.Fatalf("%d templates stored by refusals", n)
	}
	design := webtest.CreateCardDesign(t, k, "Week sheet")
	c := k.Do("POST", "acme", "/api/v1/card-templates", t1, body(func(b map[string]any) { b["design_id"] = design }))
	if c.Status != 201 || c.Data()["design_id"] != float64(design) || c.Data()["plan_name"] != "Week" || c.Data()["code_charset"] != "numeric" ||
		c.Data()["manager_id"] != float64(r1) {
		t.Fatalf("create: %d %s", c.Status, c.Body)
	}
	id := webtest.Num(c.Data()["id"])
	p := func(f string, a ...any) string { return "/api/v1/card-templates" + fmt.Sprintf(f, a...) }

	// Outside the subtree answers like a missing template.
	for _, r := range []webtest.Resp{
		k.Do("GET", "acme", p("/%d", id), t2, nil),
		k.Do("PATCH", "acme", p("/%d", id), t2, map[string]any{"name": "mine"}),
		k.Do("DELETE", "acme", p("/%d", id), t2, nil),
		k.Do("POST", "acme", p("/%d/generate", id), t2, map[string]any{"request_id": "x1"}),
		k.Do("GET", "acme", p("/%d", id+100), t1, nil),
	} {
		webtest.ExpectErr(t, r, 404, "ERR_NOT_FOUND", "not_found")
	}
	if l := k.Do("GET", "acme", p(""), t2, nil); l.Status != 200 || len(l.List()) != 0 {
		t.Fatalf("sibling list: %d %s", l.Status, l.Body)
	}
	// The owner (tenant-wide) sees it; r1's agent, below it, does not.
	if l := k.Do("GET", "acme", p("?q=Week"), tok, nil); l.Status != 200 || len(l.List()) != 1 {
		t.Fatalf("owner list: %d %s", l.Status, l.Body)
	}
	if l := k.Do("GET", "acme", p(""), tGen, nil); l.Status != 200 || len(l.List()) != 0 {
		t.Fatalf("agent list: %d %s", l.Status, l.Body)
	}
	// PATCH: checked as a whole; nothing changes on a refusal.
	webtest.ExpectErr(t, k.Do("PATCH", "acme", p("/%d", id), t1, map[string]any{"plan_profile_id": nil}), 400, "ERR_VALIDATION", "plan_profile_id_required")
	u := k.Do("PATCH", "acme", p("/%d", id), t1, map[string]any{"name": "Week (new)", "design_id": nil, "quantity": 7})
	if u.Status != 200 || u.Data()["name"] != "Week (new)" || u.Data()["design_id"] != nil || u.Data()["quantity"] != 7.0 || u.Data()["plan_profile_id"] != float64(plan) {
		t.Fatalf("patch: %d %s", u.Status, u.Body)
	}
	// Bulk delete: the sibling's attempt is refused per id, the owner's works.
	bd := k.Do("POST", "acme", p("/bulk-delete"), t2, map[string]any{"ids": []int64{id}})
	if bd.Status != 200 || len(bd.Data()["failed"].([]any)) != 1 {
		t.Fatalf("sibling bulk delete: %d %s", bd.Status, bd.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", p("/bulk-delete"), t1, map[string]any{}), 400, "ERR_VALIDATION", "ids_required")
	if bd := k.Do("POST", "acme", p("/bulk-delete"), tok, map[string]any{"ids": []int64{id}}); bd.Status != 200 || len(bd.Data()["updated"].([]any)) != 1 {
		t.Fatalf("bulk delete: %d %s", bd.Status, bd.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", p("/%d", id), t1, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestCardTemplatesHTTPGenerateAndPDFText(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webtest.StartJobs(t, k)
	tok := k.Owner("acme")
	plan := webtest.CreatePlan(t, k, "باقة شهرية")
	design := webtest.CreateCardDesign(t, k, "Arabic sheet")
	c := k.Do("POST", "acme", "/api/v1/card-templates", tok, map[string]any{"name": "Monthly", "design_id": design, "type": "prepaid",
		"quantity": 3, "face_value": 7.5, "expiration_days": 60, "plan_profile_id": plan})
	if c.Status != 201 {
		t.Fatalf("create: %d %s", c.Status, c.Body)
	}
	id := webtest.Num(c.Data()["id"])
	path := fmt.Sprintf("/api/v1/card-templates/%d/generate", id)
	webtest.ExpectErr(t, k.Do("POST", "acme", path, tok, map[string]any{"quantity": 2}), 400, "ERR_VALIDATION", "request_id_required")
	webtest.ExpectErr(t, k.Do("POST", "acme", path, tok, map[string]any{"request_id": "g0", "quantity": -4}), 400, "ERR_VALIDATION", "invalid_quantity")

	// 202 fresh, then 200 with the same body (replay true) and one series.
	fresh := k.Do("POST", "acme", path, tok, map[string]any{"request_id": "g1", "quantity": 4})
	if fresh.Status != 202 || fresh.Data()["replay"] != false || fresh.Data()["status"] != "generating" {
		t.Fatalf("generate: %d %s", fresh.Status, fresh.Body)
	}
	replay := k.Do("POST", "acme", path, tok, map[string]any{"request_id": "g1", "quantity": 4})
	if replay.Status != 200 || replay.Data()["replay"] != true {
		t.Fatalf("replay: %d %s", replay.Status, replay.Body)
	}
	a, b := fresh.Data(), replay.Data()
	delete(a, "replay")
	delete(b, "replay")
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a) != 6 {
		t.Fatalf("replay body differs: %v / %v", a, b)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", path, tok, map[string]any{"request_id": "g1", "quantity": 5}), 409, "ERR_CONFLICT", "request_id_conflict")
	ten := k.Acquire("acme")
	if n := xrtest.Scalar(t, ten, `SELECT COUNT(*) FROM card_batches WHERE template_id = ?`, id); n != 1 {
		t.Fatalf("%d series from the template", n)
	}
	batch := webtest.Num(a["batch_id"])
	xrtest.Eventually(t, "series ready", func() bool {
		return k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", batch), tok, nil).Data()["status"] == "ready"
	})
	g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", batch), tok, nil).Data()
	if g["template_id"] != float64(id) || g["design_id"] != float64(design) || g["quantity"] != 4.0 || g["plan_name"] != "باقة شهرية" || g["name"] != "Monthly" {
		t.Fatalf("series: %v", g)
	}
	if l := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches?filter[template_id]=%d", id), tok, nil); len(l.List()) != 1 {
		t.Fatalf("filter[template_id]: %s", l.Body)
	}

	// A card with a Cyrillic login; the sheet prints it and the Arabic plan.
	xrtest.Exec(t, ten, `UPDATE cards SET username = 'Иван-Петров' WHERE id = (SELECT MIN(id) FROM cards WHERE batch_id = ?)`, batch)
	pdfPath := fmt.Sprintf("/api/v1/card-batches/%d/pdf", batch)
	if r := k.Do("GET", "acme", pdfPath, tok, nil); r.Status != 202 {
		t.Fatalf("pdf: %d %s", r.Status, r.Body)
	}
	var pdf webtest.Resp
	xrtest.Eventually(t, "pdf", func() bool {
		pdf = k.Do("GET", "acme", pdfPath, tok, nil)
		return pdf.Status == 200
	})
	if ct := pdf.Header.Get("Content-Type"); ct != "application/pdf" || !bytes.HasPrefix(pdf.Body, []byte("%PDF-")) {
		t.Fatalf("pdf: %s %q", ct, pdf.Body[:min(len(pdf.Body), 20)])
	}
	text := xrtest.PDFText(t, pdf.Body)
	if !strings.Contains(text, "Иван-Петров") || !strings.Contains(text, "باقة شهرية") || strings.Contains(text, "?") {
		t.Fatalf("sheet text: %q", text)
	}
	var serial string
	if err := ten.DB.R.QueryRow(`SELECT serial FROM cards WHERE batch_id = ? ORDER BY seq DESC LIMIT 1`, batch).Scan(&serial); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, serial+" 7.50") {
		t.Fatalf("serial and face value %q not in %q", serial, text)
	}
	// The stored sheet is served again as it is; once the design changes
	// (a new version), the next call renders it again with the new design.
	if again := k.Do("GET", "acme", pdfPath, tok, nil); again.Status != 200 || !bytes.Equal(again.Body, pdf.Body) {
		t.Fatalf("cached sheet: %d", again.Status)
	}
	xrtest.Exec(t, ten, `UPDATE designs SET doc = replace(doc, '{plan}', 'Second edition {plan}'), version = version + 1 WHERE id = ?`, design)
	if r := k.Do("GET", "acme", pdfPath, tok, nil); r.Status != 202 {
		t.Fatalf("pdf after a design change: %d %s", r.Status, r.Body)
	}
	xrtest.Eventually(t, "pdf with the new design", func() bool {
		pdf = k.Do("GET", "acme", pdfPath, tok, nil)
		return pdf.Status == 200
	})
	if text := xrtest.PDFText(t, pdf.Body); !strings.Contains(text, "Second edition") {
		t.Fatalf("sheet after the design change: %q", text)
	}
}
