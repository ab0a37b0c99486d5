package console

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/app/subs"
	"xr/web"
)

// Prepaid card pages: the series list with its stock, the generate form
// (the generation job's progress is shown while it runs), the series
// record (stock breakdown, cards, suspend/release, card revoke, the PDF
// sheet through its print job), and the card search with the redeem form.
// Each calls the app function of its API row in web/cards_routes.go, with
// that row's permission and buckets.
func (s *site) cardPages() []web.Route {
	return append([]web.Route{
		{M: "GET", P: "/cards", Access: web.Staff, API: "GET /card-batches", H: s.pageCardSeries, Menu: "cards"},
		{M: "GET", P: "/cards/new", Access: web.Staff, Perms: []app.Perm{cards.PermCardsGenerateUser}, H: s.pageCardNew},
		{M: "POST", P: "/cards", Access: web.Staff, API: "POST /card-batches", H: s.pageCardCreate},
		{M: "GET", P: "/cards/search", Access: web.Staff, API: "GET /cards/search", H: s.pageCardSearch},
		{M: "POST", P: "/cards/redeem", Access: web.Staff, API: "POST /cards/redeem", H: s.pageCardRedeem},
		{M: "GET", P: "/cards/{id}", Access: web.Staff, API: "GET /card-batches/{id}", H: s.pageCardBatch},
		{M: "POST", P: "/cards/{id}/suspend", Access: web.Staff, API: "POST /card-batches/{id}/suspend", H: s.pageCardSuspend},
		{M: "POST", P: "/cards/{id}/release", Access: web.Staff, API: "POST /card-batches/{id}/release", H: s.pageCardRelease},
		{M: "GET", P: "/cards/{id}/pdf", Access: web.Staff, API: "GET /card-batches/{id}/pdf", File: true, H: s.pageCardPDF},
		{M: "POST", P: "/cards/card/{id}/revoke", Access: web.Staff, API: "POST /cards/{id}/revoke", H: s.pageCardRevoke},
	}, append(s.cardTemplatePages(), s.cardStockPages()...)...)
}

// cardSeriesView is the series list's data.
type cardSeriesView struct {
	Page         app.Page[cards.Batch]
	Q            string
	Prev         string
	Next         string
	CanNew       bool
	CanFind      bool
	CanTemplates bool
	Template     *cards.Template // the series of one template (?template_id=)
}

func (s *site) pageCardSeries(c *web.Ctx) error {
	v := s.NewView(c, "cards", "menu.cards")
	q := c.Query()
	lv := url.Values{"page_size": {"25"}}
	if x := strings.TrimSpace(q.Get("q")); x != "" {
		lv.Set("q", x)
	}
	if p := q.Get("page"); p != "" {
		lv.Set("page", p)
	}
	keep := web.NonEmpty("q", q.Get("q"))
	if x := q.Get("template_id"); x != "" {
		lv.Set("filter[template_id]", x)
		keep.Set("template_id", x)
	}
	lq, err := app.ParseList(lv, cards.BatchListSpec())
	if err != nil {
		return err
	}
	page, err := cards.ListBatches(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	d := cardSeriesView{Page: page, Q: q.Get("q"), CanNew: c.Actor.Can(cards.PermCardsGenerateUser), CanFind: c.Actor.Can(cards.PermCardsVerify),
		CanTemplates: c.Actor.Can(cards.PermCardsDesigner, cards.PermCardsGenerateUser)}
	if tid, ok := lq.Int("template_id"); ok && d.CanTemplates {
		d.Template = templateOrNil(c, tid)
	}
	d.Prev, d.Next = web.Pager("", keep, page.Meta)
	v.Data = d
	return s.Render(c, http.StatusOK, "cards", v)
}

// cardNewView is the generate form's data: the plans the caller may put
// on cards, the code alphabets.
type cardNewView struct {
	Plans    []subs.ProfileOption
	Charsets []string
}

func (s *site) cardNewData(c *web.Ctx) (*cardNewView, error) {
	oc, err := subs.FormChoices(c.R.Context(), c.Actor)
	if err != nil {
		return nil, err
	}
	return &cardNewView{Plans: oc.Profiles, Charsets: cards.Charsets}, nil
}

func (s *site) pageCardNew(c *web.Ctx) error {
	v := s.NewView(c, "cards", "card.new")
	d, err := s.cardNewData(c)
	if err != nil {
		return err
	}
	v.Data = d
	v.Form = url.Values{"type": {"refill"}, "code_charset": {"numeric"}, "request_id": {app.NewUUID()}}
	return s.Render(c, http.StatusOK, "card_new", v)
}

// cardCreateInput maps the generate form onto POST /card-batches' input;
// the enums are checked as the JSON decoder checks them.
func cardCreateInput(f url.Values) (cards.CreateInput, error) {
	in := cards.CreateInput{Expiration: strings.TrimSpace(f.Get("expiration")), Name: f.Get("name"), Note: f.Get("note"),
		RequestID: f.Get("request_id"), AutoActivate: f.Get("auto_activate") != ""}
	switch t := f.Get("type"); t {
	case "":
	case "refill", "prepaid":
		in.Type = cards.CardType(t)
	default:
		return in, app.ErrValidation("invalid_enum", "type").With("allowed", []string{"refill", "prepaid"})
	}
	if cs := f.Get("code_charset"); cs != "" {
		if !slices.Contains(cards.Charsets, cs) {
			return in, app.ErrValidation("invalid_enum", "code_charset").With("allowed", cards.Charsets)
		}
		in.CodeCharset = cards.Charset(cs)
	}
	q, err := catInt(f, "quantity")
	if err != nil {
		return in, err
	}
	in.Quantity = q.V
	face, err := web.FormMoney(f, "face_value")
	if err != nil {
		return in, err
	}
	if face.Set {
		in.FaceValue = &face.V
	}
	plan, err := catInt(f, "plan_profile_id")
	if err != nil {
		return in, err
	}
	in.PlanProfileID = plan.V
	cl, err := catInt(f, "code_length")
	if err != nil {
		return in, err
	}
	if cl.V > 1000 || cl.V < -1000 {
		cl.V = -1 // out of every range: the API's invalid_code_length
	}
	in.CodeLength = int(cl.V)
	return in, nil
}

func (s *site) pageCardCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "cards", "card.new")
	v.Form = c.R.PostForm
	d, err := s.cardNewData(c)
	if err != nil {
		return err
	}
	v.Data = d
	in, err := cardCreateInput(c.R.PostForm)
	if err != nil {
		return s.FormError(c, "card_new", v, err)
	}
	out, err := cards.CreateBatch(c.R.Context(), c.Actor, in)
	if err != nil {
		return s.FormError(c, "card_new", v, err)
	}
	s.SetFlash(c, v.T("card.generating"), false)
	return web.Redirect(c, fmt.Sprintf("/cards/%d?job", out.BatchID))
}

// cardBatchView is the series record's data.
type cardBatchView struct {
	Batch    *cards.Batch
	Template *cards.Template // the template it came from, when the caller sees it
	Cards    app.Page[cards.Card]
	// ProgressURL is the progress block of the job the page waits for:
	// the generation while the series is generating, or the PDF render
	// asked for (?pdf_job=).
	ProgressURL string
	Can         map[string]bool
}

func (s *site) pageCardBatch(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	ctx := c.R.Context()
	b, err := cards.GetBatch(ctx, c.Actor, id)
	if err != nil {
		return err
	}
	lq, err := app.ParseList(url.Values{"page_size": {"50"}}, cards.CardListSpec())
	if err != nil {
		return err
	}
	cs, err := cards.ListCards(ctx, c.Actor, id, lq)
	if err != nil {
		return err
	}
	d := &cardBatchView{Batch: b, Cards: cs, Can: web.CanMap(c.Actor, cards.PermCardsSuspendRelease, cards.PermCardsDownload, cards.PermCardsVerify)}
	if b.TemplateID != nil && c.Actor.Can(cards.PermCardsDesigner, cards.PermCardsGenerateUser) {
		d.Template = templateOrNil(c, *b.TemplateID)
	}
	self := fmt.Sprintf("/cards/%d", id)
	q := c.Query()
	_, asked := q["job"] // just generated: the progress stays until looked at
	if b.JobID != nil && (b.Status == "generating" || asked) {
		d.ProgressURL = jobProgressURL(*b.JobID, self, "card.show_series")
	} else if j, err := strconv.ParseInt(q.Get("pdf_job"), 10, 64); err == nil && j > 0 {
		d.ProgressURL = jobProgressURL(j, self+"/pdf", "card.download_pdf")
	}
	v := s.NewView(c, "cards", "menu.cards")
	v.Title = cardBatchTitle(v, b)
	v.Data = d
	return s.Render(c, http.StatusOK, "card_batch", v)
}

// templateOrNil is the card template id when the caller sees it (a
// deleted or out-of-scope template is simply not shown).
func templateOrNil(c *web.Ctx, id int64) *cards.Template {
	t, err := cards.GetTemplate(c.R.Context(), c.Actor, id)
	if err != nil {
		return nil
	}
	return t
}

func cardBatchTitle(v *web.View, b *cards.Batch) string {
	if b.Name != "" {
		return b.Name
	}
	return fmt.Sprintf("%s #%d", v.T("card.series"), b.ID)
}

// cardBatchAction runs suspend or release and goes back to the record with
// the outcome as a flash.
func (s *site) cardBatchAction(c *web.Ctx, run func(int64) (*cards.SuspendResult, error)) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	res, err := run(id)
	v := s.NewView(c, "", "")
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/cards/%d", id))
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf("%s (%s: %d)", web.Message(v.Lang, res.MessageKey, ""), v.T("card.changed"), res.Changed), false)
	return web.Redirect(c, fmt.Sprintf("/cards/%d", id))
}

func (s *site) pageCardSuspend(c *web.Ctx) error {
	return s.cardBatchAction(c, func(id int64) (*cards.SuspendResult, error) { return cards.SuspendBatch(c.R.Context(), c.Actor, id) })
}

func (s *site) pageCardRelease(c *web.Ctx) error {
	return s.cardBatchAction(c, func(id int64) (*cards.SuspendResult, error) { return cards.ReleaseBatch(c.R.Context(), c.Actor, id) })
}

// pageCardRevoke revokes one card and goes back to its series.
func (s *site) pageCardRevoke(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	back := "/cards"
	if b, err := strconv.ParseInt(c.R.PostFormValue("batch_id"), 10, 64); err == nil && b > 0 {
		back = fmt.Sprintf("/cards/%d", b)
	}
	card, err := cards.RevokeCard(c.R.Context(), c.Actor, id)
	v := s.NewView(c, "", "")
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, back)
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, v.T("card.revoked")+" "+card.Serial, false)
	return web.Redirect(c, fmt.Sprintf("/cards/%d", card.BatchID))
}

// pageCardPDF is the series' PDF sheet, as GET /card-batches/{id}/pdf:
// the file when it is rendered; else the render job (queued by the first
// call) is shown on the record page until the sheet can be downloaded.
func (s *site) pageCardPDF(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f, state, err := cards.GetPDF(c.R.Context(), c.Actor, id)
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		s.SetFlash(c, web.Message(s.Lang(c), e.Reason, e.Code), true)
		return web.Redirect(c, fmt.Sprintf("/cards/%d", id))
	}
	if err != nil {
		return err
	}
	if f == nil {
		return web.Redirect(c, fmt.Sprintf("/cards/%d?pdf_job=%d", id, state.JobID))
	}
	fh, err := os.Open(f.Path)
	if err != nil {
		return err
	}
	defer fh.Close()
	h := c.W.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Cache-Control", "private, no-store")
	http.ServeContent(c.W, c.R, f.Name, f.ModTime, fh)
	return nil
}

// cardSearchView is the search page's data: the lookup and the redeem
// form.
type cardSearchView struct {
	Kind      string
	Keyword   string
	Searched  bool
	Found     *cards.Lookup
	RequestID string
}

func (s *site) cardSearchData(c *web.Ctx, v *web.View) (*cardSearchView, error) {
	q := c.Query()
	d := &cardSearchView{Kind: q.Get("kind"), Keyword: q.Get("keyword"), RequestID: app.NewUUID()}
	if d.Kind == "" {
		d.Kind = "code"
	}
	if strings.TrimSpace(d.Keyword) == "" {
		return d, nil
	}
	d.Searched = true
	l, err := cards.Search(c.R.Context(), c.Actor, d.Kind, d.Keyword)
	e := app.AsError(err)
	switch {
	case err == nil:
		d.Found = l
	case e != nil && e.Status == http.StatusNotFound:
		// Unknown, or outside the caller's subtree: the same answer.
	case e != nil && e.Status == http.StatusBadRequest:
		v.Errors[e.Field] = web.Message(v.Lang, e.Reason, e.Code)
	default:
		return nil, err
	}
	if d.Found != nil && d.Kind == "code" {
		v.Form.Set("code", d.Keyword)
	}
	return d, nil
}

func (s *site) pageCardSearch(c *web.Ctx) error {
	v := s.NewView(c, "cards", "card.search")
	d, err := s.cardSearchData(c, v)
	if err != nil {
		return err
	}
	v.Data = d
	return s.Render(c, http.StatusOK, "card_search", v)
}

// pageCardRedeem redeems a card onto a subscriber named by username, as
// POST /cards/redeem, then shows the subscriber (or the search page to a
// caller who may not see subscribers).
func (s *site) pageCardRedeem(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	v := s.NewView(c, "cards", "card.search")
	d, err := s.cardSearchData(c, v)
	if err != nil {
		return err
	}
	d.RequestID = f.Get("request_id")
	v.Form, v.Data = f, d
	username := strings.TrimSpace(f.Get("user"))
	if username == "" {
		v.Errors["user"] = v.T("card.user_required")
		return s.Render(c, http.StatusBadRequest, "card_search", v)
	}
	u, err := subs.LookupName(c.R.Context(), c.Tenant.DB.R, c.Actor, username)
	if e := app.AsError(err); e != nil && e.Status == http.StatusNotFound {
		v.Errors["user"] = v.T("card.no_user")
		return s.Render(c, http.StatusNotFound, "card_search", v)
	}
	if err != nil {
		return err
	}
	uid := u.ID
	res, err := cards.Redeem(c.R.Context(), c.Actor, cards.RedeemInput{Code: f.Get("code"), UserID: uid, RequestID: f.Get("request_id")})
	if e := app.AsError(err); e != nil {
		switch {
		case e.Status == http.StatusNotFound:
			v.Errors["code"] = v.T("card.redeem_not_found")
			return s.Render(c, http.StatusNotFound, "card_search", v)
		case e.Field == "user_id":
			v.Errors["user"] = web.Message(v.Lang, e.Reason, e.Code)
			return s.Render(c, e.Status, "card_search", v)
		}
	}
	if err != nil {
		return s.FormError(c, "card_search", v, err)
	}
	msg := v.T("card.redeemed") + " " + v.T("card.effect_"+res.EffectApplied.Type)
	if res.NewBalance != nil {
		msg += " · " + v.T("users.balance") + ": " + v.Money(*res.NewBalance)
	}
	s.SetFlash(c, msg, false)
	if c.Actor.Can(subs.PermUsersIndex) {
		return web.Redirect(c, fmt.Sprintf("/users/%d", uid))
	}
	return web.Redirect(c, "/cards/search")
}
