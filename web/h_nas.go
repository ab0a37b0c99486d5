package web

import (
	"xr/app"
	"xr/app/aaa"
)

// NAS registry (/admin/nas) over app/nas.go. The secret is write-only:
// no answer carries it.

func (s *Server) listNAS(c *Ctx) error {
	out, err := s.app.ListNAS(c.R.Context(), c.Tenant)
	if err != nil {
		return err
	}
	return oneList(c, out)
}

func (s *Server) createNAS(c *Ctx) error {
	var in app.NASInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := s.app.CreateNAS(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) getNAS(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := s.app.GetNAS(c.R.Context(), c.Tenant, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) updateNAS(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	var in app.NASInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := s.app.UpdateNAS(c.R.Context(), c.Tenant, id, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) deleteNAS(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := s.app.DeleteNAS(c.R.Context(), c.Tenant, id); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": id})
}

// nasSetup renders the NAS's RADIUS configuration for a vendor.
func (s *Server) nasSetup(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	q := c.Query()
	out, err := aaa.NASSetupScript(c.R.Context(), s.app, s.Radius, c.Actor, id,
		aaa.NASSetupInput{Vendor: q.Get("vendor"), Server: q.Get("server"), Host: c.R.Host})
	if err != nil {
		return err
	}
	return c.OK(out)
}

// nasHealth is what the RADIUS server saw of the NAS.
func (s *Server) nasHealth(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := aaa.GetNASHealth(c.R.Context(), s.app, s.Radius, c.Actor, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}
