package web

import (
	"xr/app/subs"
)

// Subscribers: the handlers that do more than an adapter (web/adapters.go).

// resolveUser is GET /users/resolve?code=TOKEN.
func (s *Server) resolveUser(c *Ctx) error {
	out, err := subs.Resolve(c.R.Context(), c.Actor, c.Query().Get("code"))
	if err != nil {
		return err
	}
	return c.OK(out)
}
