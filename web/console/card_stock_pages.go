package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/reports"
	"xr/web"
)

// Card stock pages: the stock each manager of the caller's subtree holds
// (a reseller's own view of its stock: ?mine), the form that moves stock
// (a quantity of a series, or a range of serials) to a manager and back,
// and the transfer history with its revert. Each calls the app function of
// its API row: GET /cards/holdings, POST /cards/transfers, the
// cards-transfer report, POST /cards/transfers/{id}/revert.
func (s *site) cardStockPages() []web.Route {
	return []web.Route{
		{M: "GET", P: "/cards/stock", Access: web.Staff, API: "GET /cards/holdings", H: s.pageCardStock, Menu: "card_stock"},
		{M: "POST", P: "/cards/stock/transfer", Access: web.Staff, API: "POST /cards/transfers", H: s.pageCardTransfer},
		{M: "GET", P: "/cards/transfers", Access: web.Staff, API: "GET /admin/reports/cards-transfer", H: s.pageCardTransfers},
		{M: "POST", P: "/cards/transfers/{id}/revert", Access: web.Staff, API: "POST /cards/transfers/{id}/revert", H: s.pageCardTransferRevert},
	}
}

// cardStockView is the stock page's data.
type cardStockView struct {
	Holdings app.Page[cards.Holding]
	Mine     bool                   // only the caller's own stock
	Series   []cards.Holding        // one row per series the caller's subtree holds, for the form
	Managers []identity.ManagerName // who stock can move between
	Prev     string
	Next     string
	Can      map[string]bool
}

// cardStockData reads the holdings (the caller's own with ?mine) and the
// form's choices.
func (s *site) cardStockData(c *web.Ctx, q url.Values) (*cardStockView, error) {
	ctx, act := c.R.Context(), c.Actor
	d := &cardStockView{Can: web.CanMap(act, cards.PermCardsGenerateUser, reports.PermReportCardsLog)}
	lv := url.Values{"page_size": {"100"}}
	keep := url.Values{}
	if _, ok := q["mine"]; ok {
		d.Mine = true
		lv.Set("filter[manager_id]", strconv.FormatInt(act.ManagerID, 10))
		keep.Set("mine", "")
	}
	if p := q.Get("page"); p != "" {
		lv.Set("page", p)
	}
	lq, err := app.ParseList(lv, cards.HoldingListSpec())
	if err != nil {
		return nil, err
	}
	if d.Holdings, err = cards.ListHoldings(ctx, act, lq); err != nil {
		return nil, err
	}
	d.Prev, d.Next = web.Pager("/cards/stock", keep, d.Holdings.Meta)
	seen := map[int64]bool{}
	for _, h := range d.Holdings.Rows {
		if !seen[h.BatchID] {
			seen[h.BatchID] = true
			d.Series = append(d.Series, h)
		}
	}
	if act.Can(identity.PermManagersIndex) {
		if d.Managers, err = identity.AllManagers(ctx, act); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (s *site) pageCardStock(c *web.Ctx) error {
	d, err := s.cardStockData(c, c.Query())
	if err != nil {
		return err
	}
	v := s.NewView(c, "card_stock", "menu.card_stock")
	v.Data = d
	v.Form = url.Values{"request_id": {app.NewUUID()}, "from_manager_id": {strconv.FormatInt(c.Actor.ManagerID, 10)}}
	return s.Render(c, http.StatusOK, "card_stock", v)
}

// cardTransferInput maps the move form onto POST /cards/transfers' input:
// a quantity of a series, or a range of serials when one is given.
func cardTransferInput(f url.Values) (cards.TransferInput, error) {
	in := cards.TransferInput{RequestID: f.Get("request_id"), FirstSerial: strings.TrimSpace(f.Get("first_serial")),
		LastSerial: strings.TrimSpace(f.Get("last_serial"))}
	for _, x := range []struct {
		field string
		dst   *int64
	}{{"from_manager_id", &in.FromManagerID}, {"to_manager_id", &in.ToManagerID}, {"batch_id", &in.BatchID}, {"quantity", &in.Quantity}} {
		n, err := catInt(f, x.field)
		if err != nil {
			return in, err
		}
		*x.dst = n.V
	}
	if in.FirstSerial != "" || in.LastSerial != "" {
		in.BatchID, in.Quantity = 0, 0
	}
	return in, nil
}

func (s *site) pageCardTransfer(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	f := c.R.PostForm
	in, err := cardTransferInput(f)
	if err == nil {
		var out *cards.Transfer
		if out, err = cards.TransferCards(c.R.Context(), c.Actor, in); err == nil {
			v := s.NewView(c, "", "")
			s.SetFlash(c, fmt.Sprintf(v.T("stock.moved"), out.CardCount), false)
			return web.Redirect(c, "/cards/stock")
		}
	}
	d, derr := s.cardStockData(c, url.Values{})
	if derr != nil {
		return derr
	}
	v := s.NewView(c, "card_stock", "menu.card_stock")
	v.Data, v.Form = d, f
	if e := app.AsError(err); e != nil && e.Status == http.StatusConflict {
		// The request id was not spent: the corrected form may send it again.
		v.Flash, v.FlashBad = web.Message(v.Lang, e.Reason, e.Code), true
		return s.Render(c, e.Status, "card_stock", v)
	}
	return s.FormError(c, "card_stock", v, err)
}

// cardTransfersView is the history page's data.
type cardTransfersView struct {
	Page      app.Page[reports.CardTransfer]
	Reverted  map[int64]bool // transfers an undo already answered
	RequestID string         // the undo buttons' key, one per transfer
	Prev      string
	Next      string
	CanRevert bool
}

func (s *site) pageCardTransfers(c *web.Ctx) error {
	q := c.Query()
	lv := url.Values{"page_size": {"50"}, "sort": {"id"}, "order": {"desc"}}
	if p := q.Get("page"); p != "" {
		lv.Set("page", p)
	}
	lq, err := reports.Parse(lv, reports.CardsTransferSpec)
	if err != nil {
		return err
	}
	page, err := reports.CardsTransfer(c.R.Context(), c.Actor, lq)
	if err != nil {
		return err
	}
	d := cardTransfersView{Page: page, Reverted: map[int64]bool{}, RequestID: app.NewUUID(), CanRevert: c.Actor.Can(cards.PermCardsGenerateUser)}
	for _, r := range page.Rows {
		if r.RevertsID != nil {
			d.Reverted[*r.RevertsID] = true
		}
	}
	d.Prev, d.Next = web.Pager("/cards/transfers", url.Values{}, page.Meta)
	v := s.NewView(c, "card_stock", "stock.history")
	v.Data = d
	return s.Render(c, http.StatusOK, "card_transfers", v)
}

func (s *site) pageCardTransferRevert(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "", "")
	out, err := cards.RevertTransfer(c.R.Context(), c.Actor, id, cards.RevertInput{RequestID: c.R.PostForm.Get("request_id")})
	if e := app.AsError(err); e != nil && e.Status < 500 && e.Status != http.StatusNotFound && e.Status != http.StatusForbidden {
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, "/cards/transfers")
	}
	if err != nil {
		return err
	}
	s.SetFlash(c, fmt.Sprintf(v.T("stock.reverted"), out.CardCount), false)
	return web.Redirect(c, "/cards/transfers")
}
