package web

import "xr/app/cards"

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
