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

func (s *Server) replayWebhookDelivery(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	d, err := webhooks.ReplayDelivery(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.OK(d)
}

func (s *Server) listWebhookEndpoints(c *Ctx) error {
	p, err := webhooks.ListEndpoints(c.R.Context(), c.Actor)
	if err != nil {
		return err
	}
	return Page(c, p)
}

// createWebhookEndpoint answers 200 (not 201), as the spec says.
func (s *Server) createWebhookEndpoint(c *Ctx) error {
	var in webhooks.EndpointInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := webhooks.CreateEndpoint(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) bulkDeleteWebhookEndpoints(c *Ctx) error {
	var in app.BulkIDs
	if err := c.Decode(&in); err != nil {
		return err
	}
	res, err := webhooks.BulkDeleteEndpoints(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.OK(res)
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

func (s *Server) updateWebhookEndpoint(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in webhooks.EndpointInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := webhooks.UpdateEndpoint(c.R.Context(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) testWebhookEndpoint(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := webhooks.TestEndpoint(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) rotateWebhookSecret(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in webhooks.RotateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := webhooks.RotateSecret(c.R.Context(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// eventCatalog is un-paginated: meta reports page_size = total.
func (s *Server) eventCatalog(c *Ctx) error {
	cat := webhooks.Catalog()
	return c.List(cat, app.OnePage(len(cat)))
}
