package web

import "xr/app/pos"

// posSell is POST /pos/sales: 201 for a new sale, 200 for a replay of its
// request_id (the original sale, replay true).
func (s *Server) posSell(c *Ctx) error {
	var in pos.SaleInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := pos.Sell(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Created(out)
}
