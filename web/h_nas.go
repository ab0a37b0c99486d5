package web

import (
	"xr/app/aaa"
)

// NAS registry (/admin/nas) over app/aaa/nas.go. The secret is write-only:
// no answer carries it.

func (s *Server) listNAS(c *Ctx) error {
	out, err := aaa.ListNAS(c.R.Context(), s.app, c.Tenant)
	if err != nil {
		return err
	}
	return oneList(c, out)
}

func (s *Server) createNAS(c *Ctx) error {
	var in aaa.NASInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := aaa.CreateNAS(c.R.Context(), s.app, c.Tenant, in)
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
	out, err := aaa.GetNAS(c.R.Context(), s.app, c.Tenant, id)
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
	var in aaa.NASInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := aaa.UpdateNAS(c.R.Context(), s.app, c.Tenant, id, in)
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
	if err := aaa.DeleteNAS(c.R.Context(), s.app, c.Tenant, id); err != nil {
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
