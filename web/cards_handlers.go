package web

import (
	"mime"
	"net/http"
	"os"
	"strconv"

	"xr/app"
	"xr/app/cards"
)

// Cards and card series: the handlers that do more than an adapter.

// createBatch is POST /card-batches: 202 when the series is new, 200 with
// replay true (and the original batch_id) on a replay of request_id.
func (s *Server) createBatch(c *Ctx) error {
	var in cards.CreateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := cards.CreateBatch(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Accepted(out)
}

// redeemCreate is POST /cards/redeem-create (public): the tenant is the
// host's.
func (s *Server) redeemCreate(c *Ctx) error {
	var in cards.RedeemCreateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := cards.RedeemCreate(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// searchCards is GET /cards/search?kind=&keyword=.
func (s *Server) searchCards(c *Ctx) error {
	q := c.Query()
	out, err := cards.Search(c.R.Context(), c.Actor, q.Get("kind"), q.Get("keyword"))
	if err != nil {
		return err
	}
	return c.OK(out)
}

// codeLength is GET /card-batches/code-length?code_charset=&quantity=.
func (s *Server) codeLength(c *Ctx) error {
	q := c.Query()
	var n int64
	if v := q.Get("quantity"); v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil {
			return app.ErrValidation("invalid_value", "quantity")
		}
	}
	out, err := cards.CodeLength(c.R.Context(), c.Actor, q.Get("code_charset"), n)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// setPricing is PUT /card-batches/{id}/pricing/{resellerId}.
func (s *Server) setPricing(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	rid, err := c.ID("resellerId")
	if err != nil {
		return err
	}
	var in cards.PriceInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := cards.SetPricing(c.R.Context(), c.Actor, id, rid, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// deletePricing is DELETE /card-batches/{id}/pricing/{resellerId}.
func (s *Server) deletePricing(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	rid, err := c.ID("resellerId")
	if err != nil {
		return err
	}
	if err := cards.DeletePricing(c.R.Context(), c.Actor, id, rid); err != nil {
		return err
	}
	return c.OK(map[string]any{"batch_id": id, "manager_id": rid, "deleted": true})
}

// printJob is GET /card-batches/{id}/print-job?page=&page_size=.
func (s *Server) printJob(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	q := c.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	size, _ := strconv.Atoi(q.Get("page_size"))
	out, err := cards.GetPrintJob(c.R.Context(), c.Actor, id, page, size)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// batchPDF is GET /card-batches/{id}/pdf: the PDF sheet (application/pdf)
// when rendered, else 202 with the render job (queued by the first call).
func (s *Server) batchPDF(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f, state, err := cards.GetPDF(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	if f == nil {
		return c.Accepted(state)
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
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.W, c.R, f.Name, f.ModTime, fh)
	return nil
}

// generateFromTemplate is POST /card-templates/{id}/generate: answered like
// POST /card-batches (202 fresh, 200 replay with replay true).
func (s *Server) generateFromTemplate(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in cards.GenerateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := cards.GenerateFromTemplate(c.R.Context(), c.Actor, id, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Accepted(out)
}
