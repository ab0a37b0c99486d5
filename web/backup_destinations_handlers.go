package web

import (
	"context"

	"xr/app"
	"xr/app/backups"
)

// providerCall calls fn with the {provider} path variable (a destination
// id or name).
func providerCall[T any](fn func(context.Context, *app.Actor, string) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		out, err := fn(c.R.Context(), c.Actor, c.R.PathValue("provider"))
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

func (s *Server) createBackupDestination(c *Ctx) error {
	var in backups.DestinationInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := backups.CreateDestination(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) deleteBackupDestination(c *Ctx) error {
	p := c.R.PathValue("provider")
	if err := backups.DeleteDestination(c.R.Context(), c.Actor, p); err != nil {
		return err
	}
	return c.OK(backups.Deleted{Provider: p, Deleted: true})
}
