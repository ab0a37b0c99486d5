package web

import (
	"xr/app"
	"xr/app/webhooks"
)

func (s *Server) listWebhookDeliveries(c *Ctx) error {
	p, err := webhooks.ListDeliveries(c.R.Context(), c.Actor, c.Query())
	if err != nil {
		return err
	}
	return Page(c, p)
}

func (s *Server) deleteWebhookEndpoint(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := webhooks.DeleteEndpoint(c.R.Context(), c.Actor, id); err != nil {
		return err
	}
	return c.OK(webhooks.Deleted{ID: id, Deleted: true})
}

// eventCatalog is un-paginated: meta reports page_size = total.
func (s *Server) eventCatalog(c *Ctx) error {
	cat, err := webhooks.EventCatalog(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	return c.List(cat, app.OnePage(len(cat)))
}
