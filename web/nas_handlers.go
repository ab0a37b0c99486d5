package web

import (
	"xr/app/aaa"
)

// NAS registry (/admin/nas) over app/aaa/nas.go. The secret is write-only:
// no answer carries it.

// nasSetup renders the NAS's RADIUS configuration for a vendor.
func (s *Server) nasSetup(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	q := c.Query()
	out, err := aaa.NASSetupScript(c.R.Context(), s.Radius, c.Actor, id,
		aaa.NASSetupInput{Vendor: q.Get("vendor"), Server: q.Get("server"), Host: c.R.Host, Transport: q.Get("transport")})
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
	out, err := aaa.GetNASHealth(c.R.Context(), s.Radius, c.Actor, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}
