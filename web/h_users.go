package web

import (
	"xr/app/subs"
)

// Subscribers: the handlers that do more than an adapter (web/adapters.go).

// createUser is POST /users: 201 with the spec's create fields.
func (s *Server) createUser(c *Ctx) error {
	var in subs.CreateInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := subs.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}

// resolveUser is GET /users/resolve?code=TOKEN.
func (s *Server) resolveUser(c *Ctx) error {
	out, err := subs.Resolve(c.R.Context(), c.Actor, c.Query().Get("code"))
	if err != nil {
		return err
	}
	return c.OK(out)
}

// createGroup is POST /admin/user-groups.
func (s *Server) createGroup(c *Ctx) error {
	var in subs.GroupInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := subs.CreateGroup(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}
