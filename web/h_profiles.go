package web

import (
	"xr/app/subs"
)

// createProfile is POST /admin/profiles: 201 with the plan.
func (s *Server) createProfile(c *Ctx) error {
	var in subs.ProfileInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := subs.CreateProfile(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}
