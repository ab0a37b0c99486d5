package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/app/studio"
	"xr/app/subs"
	"xr/web"
)

// Card template pages: the list, the form (create and edit, with the
// design chooser listing the studio's card_sheet designs and the
// generation fields of the series form), and the generate action, which
// makes a series and goes to it (its generation progress). Each calls the
// app function of its API row in web/cards_routes.go with that row's
// permission.
func (s *site) cardTemplatePages() []web.Route {
	write := []app.Perm{cards.PermCardsDesigner}
	return []web.Route{
		{M: "GET", P: "/card-templates", Access: web.Staff, API: "GET /card-templates", H: s.pageCardTemplates},
		{M: "GET", P: "/card-templates/new", Access: web.Staff, Perms: write, H: s.pageCardTemplateNew},
		{M: "POST", P: "/card-templates", Access: web.Staff, API: "POST /card-templates", H: s.pageCardTemplateCreate},
		{M: "GET", P: "/card-templates/{id}", Access: web.Staff, API: "GET /card-templates/{id}", H: s.pageCardTemplate},
		{M: "POST", P: "/card-templates/{id}", Access: web.Staff, API: "PATCH /card-templates/{id}", H: s.pageCardTemplateSave},
		{M: "POST", P: "/card-templates/{id}/delete", Access: web.Staff, API: "DELETE /card-templates/{id}", H: s.pageCardTemplateDelete},
		{M: "POST", P: "/card-templates/{id}/generate", Access: web.Staff, API: "POST /card-templates/{id}/generate", H: s.pageCardTemplateGenerate},
	}
}

type cardTemplatesView struct {
	Page   app.Page[cards.Template]
	Q      string
	Prev   string
	Next   string
	CanNew bool
}

func (s *site) pageCardTemplates(c *web.Ctx) error {
	v := s.NewView(c, "cards", "cardtpl.title")
	q := c.Query()
	lv := url.Values{"page_size": {"25"}}
	if x := strings.TrimSpace(q.Get("q")); x != "" {
		lv.Set("q", x)
	}
	if p := q.Get("page"); p != "" {
		lv.Set("page", p)
	}
	lq, err := app.ParseList(lv, cards.TemplateListSpec())
	if err != nil {
		return err
	}
	page, err := cards.ListTemplates(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	d := cardTemplatesView{Page: page, Q: q.Get("q"), CanNew: c.Actor.Can(cards.PermCardsDesigner)}
	d.Prev, d.Next = web.Pager("", web.NonEmpty("q", d.Q), page.Meta)
	v.Data = d
	return s.Render(c, http.StatusOK, "cards_templates", v)
}

// cardTemplateView is the form's data: the template (nil when new), the
// choices, and what the caller may do.
type cardTemplateView struct {
	Template  *cards.Template
	Designs   []studio.DesignName
	Plans     []subs.ProfileOption
	Charsets  []string
	RequestID string
	Can       map[string]bool
}

func (s *site) cardTemplateData(c *web.Ctx, t *cards.Template) (*cardTemplateView, error) {
	nd, err := s.cardNewData(c)
	if err != nil {
		return nil, err
	}
	designs, err := cards.CardSheetDesigns(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	return &cardTemplateView{Template: t, Designs: designs, Plans: nd.Plans, Charsets: nd.Charsets, RequestID: app.NewUUID(),
		Can: web.CanMap(c.Actor, cards.PermCardsDesigner, cards.PermCardsGenerateUser, cards.PermCardsList)}, nil
}

// templateForm is a template's values as the form shows them.
func templateForm(t *cards.Template) url.Values {
	f := url.Values{"name": {t.Name}, "type": {string(t.Type)}, "code_charset": {string(t.CodeCharset)}, "expiration": {t.Expiration},
		"note": {t.Note}}
	if t.DesignID != nil {
		f.Set("design_id", strconv.FormatInt(*t.DesignID, 10))
	}
	if t.Quantity != 0 {
		f.Set("quantity", strconv.FormatInt(t.Quantity, 10))
	}
	if t.FaceValue != nil {
		f.Set("face_value", t.FaceValue.String())
	}
	if t.ExpirationDays != 0 {
		f.Set("expiration_days", strconv.Itoa(t.ExpirationDays))
	}
	if t.PlanProfileID != 0 {
		f.Set("plan_profile_id", strconv.FormatInt(t.PlanProfileID, 10))
	}
	if t.CodeLength != 0 {
		f.Set("code_length", strconv.Itoa(t.CodeLength))
	}
	if t.AutoActivate {
		f.Set("auto_activate", "1")
	}
	if t.SellOnline {
		f.Set("sell_online", "1")
	}
	return f
}

// cardTemplateInput maps the form onto POST /card-templates' input: the
// generation fields as the series form reads them, plus the design and the
// relative expiry.
func cardTemplateInput(f url.Values) (cards.TemplateInput, error) {
	ci, err := cardCreateInput(f)
	if err != nil {
		return cards.TemplateInput{}, err
	}
	in := cards.TemplateInput{Name: f.Get("name"), TemplateSpec: cards.TemplateSpec{Type: ci.Type, Quantity: ci.Quantity, FaceValue: ci.FaceValue,
		Expiration: ci.Expiration, PlanProfileID: ci.PlanProfileID, CodeLength: ci.CodeLength, CodeCharset: ci.CodeCharset, Note: ci.Note,
		AutoActivate: ci.AutoActivate, SellOnline: f.Get("sell_online") != ""}}
	design, err := catInt(f, "design_id")
	if err != nil {
		return in, err
	}
	if design.Set {
		in.DesignID = &design.V
	}
	days, err := catInt(f, "expiration_days")
	if err != nil {
		return in, err
	}
	if days.V > 1_000_000 || days.V < -1_000_000 {
		days.V = -1 // out of range: the API's invalid_expiration_days
	}
	in.ExpirationDays = int(days.V)
	return in, nil
}

func (s *site) pageCardTemplateNew(c *web.Ctx) error {
	v := s.NewView(c, "cards", "cardtpl.new")
	d, err := s.cardTemplateData(c, nil)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = url.Values{"type": {"refill"}, "code_charset": {"numeric"}, "expiration_days": {"90"}}
	return s.Render(c, http.StatusOK, "cards_template", v)
}

func (s *site) pageCardTemplateCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "cards", "cardtpl.new")
	v.Form = c.R.PostForm
	d, err := s.cardTemplateData(c, nil)
	if err != nil {
		return err
	}
	v.Data = d
	in, err := cardTemplateInput(c.R.PostForm)
	if err != nil {
		return s.FormError(c, "cards_template", v, err)
	}
	t, err := cards.CreateTemplate(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "cards_template", v, err)
	}
	s.SetFlash(c, v.T("cardtpl.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/card-templates/%d", t.ID))
}

func (s *site) pageCardTemplate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	t, err := cards.GetTemplate(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "cards", "cardtpl.title")
	v.Title = t.Name
	d, err := s.cardTemplateData(c, t)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = templateForm(t)
	return s.Render(c, http.StatusOK, "cards_template", v)
}

// pageCardTemplateSave replaces the template's fields with the form's (a
// PATCH setting every field).
func (s *site) pageCardTemplateSave(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	t, err := cards.GetTemplate(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	v := s.NewView(c, "cards", "cardtpl.title")
	v.Title, v.Form = t.Name, c.R.PostForm
	d, err := s.cardTemplateData(c, t)
	if err != nil {
		return err
	}
	v.Data = d
	in, err := cardTemplateInput(c.R.PostForm)
	if err != nil {
		return s.FormError(c, "cards_template", v, err)
	}
	if _, err := cards.PatchTemplate(c.R.Context(), c.Actor, id, templatePatchOf(in)); err != nil {
		return s.FormError(c, "cards_template", v, err)
	}
	s.SetFlash(c, v.T("cardtpl.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/card-templates/%d", id))
}

// templatePatchOf is a PATCH setting every field of in.
func templatePatchOf(in cards.TemplateInput) cards.TemplatePatch {
	opt := func(p *int64) app.Opt[int64] {
		if p == nil {
			return app.Opt[int64]{Set: true, Null: true}
		}
		return app.Opt[int64]{Set: true, V: *p}
	}
	money := func(p *app.Money) app.Opt[app.Money] {
		if p == nil {
			return app.Opt[app.Money]{Set: true, Null: true}
		}
		return app.Opt[app.Money]{Set: true, V: *p}
	}
	return cards.TemplatePatch{
		Name: app.Opt[string]{Set: true, V: in.Name}, DesignID: opt(in.DesignID), Type: app.Opt[cards.CardType]{Set: true, V: in.Type},
		Quantity: app.Opt[int64]{Set: true, V: in.Quantity}, FaceValue: money(in.FaceValue), Expiration: app.Opt[string]{Set: true, V: in.Expiration},
		ExpirationDays: app.Opt[int]{Set: true, V: in.ExpirationDays}, PlanProfileID: app.Opt[int64]{Set: true, V: in.PlanProfileID},
		CodeLength: app.Opt[int]{Set: true, V: in.CodeLength}, CodeCharset: app.Opt[cards.Charset]{Set: true, V: in.CodeCharset},
		Note: app.Opt[string]{Set: true, V: in.Note}, AutoActivate: app.Opt[bool]{Set: true, V: in.AutoActivate},
		SellOnline: app.Opt[bool]{Set: true, V: in.SellOnline}, UnitPrice: money(in.UnitPrice),
	}
}

func (s *site) pageCardTemplateDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if _, err := cards.DeleteTemplate(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("cardtpl.deleted"), false)
	return web.Redirect(c, "/card-templates")
}

// pageCardTemplateGenerate makes a series from the template, as POST
// /card-templates/{id}/generate, and shows it with its generation job.
func (s *site) pageCardTemplateGenerate(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in := cards.GenerateInput{RequestID: f.Get("request_id")}
	q, qerr := catInt(f, "quantity")
	in.Quantity = q.V
	if qerr == nil && q.Set && q.V == 0 {
		in.Quantity = -1 // an explicit 0: the API's invalid_quantity
	}
	var out *cards.CreateResult
	if err = qerr; err == nil {
		out, err = cards.GenerateFromTemplate(c.R.Context(), c.Actor, id, in)
	}
	if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest {
		t, gerr := cards.GetTemplate(c.R.Context(), c.Actor, id)
		if gerr != nil {
			return gerr
		}
		v := s.NewView(c, "cards", "cardtpl.title")
		v.Title, v.Form = t.Name, templateForm(t)
		d, derr := s.cardTemplateData(c, t)
		if derr != nil {
			return derr
		}
		v.Data = d
		msg := web.Message(v.Lang, e.Reason, e.Code)
		v.Errors["gen_"+e.Field] = msg
		if e.Field != "quantity" {
			v.Flash, v.FlashBad = msg, true
		}
		return s.Render(c, e.Status, "cards_template", v)
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, s.NewView(c, "", "").T("card.generating"), false)
	return web.Redirect(c, fmt.Sprintf("/cards/%d?job", out.BatchID))
}
