package web

import (
	"xr/app/portalentry"
)

// The portal's ways in (rows of portalentry_routes.go). Public rows take the
// host's tenant (nil on the apex) and the client address from the Ctx.

func (s *Server) portalCaptcha(c *Ctx) error {
	out, err := portalentry.NewCaptcha(c.R.Context(), c.Tenant, c.IP)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalExchange(c *Ctx) error {
	var in portalentry.ExchangeInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP, in.UserAgent = c.IP, c.R.UserAgent()
	out, err := portalentry.Exchange(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalJoin(c *Ctx) error {
	var in portalentry.JoinInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP, in.UserAgent = c.IP, c.R.UserAgent()
	out, err := portalentry.Join(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalJoinContext(c *Ctx) error {
	out, err := portalentry.GetJoinContext(c.R.Context(), c.Tenant, c.Query().Get("code"))
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalSignupSchema(c *Ctx) error {
	out, err := portalentry.GetSignupSchema(c.R.Context(), c.Tenant)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalSignup(c *Ctx) error {
	var in portalentry.SignupInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP = c.IP
	out, err := portalentry.Signup(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.Accepted(out)
}

func (s *Server) portalSignupVerify(c *Ctx) error {
	var in portalentry.SignupVerifyInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP, in.UserAgent = c.IP, c.R.UserAgent()
	out, err := portalentry.VerifySignup(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalMessengerExchange(c *Ctx) error {
	var in portalentry.MessengerExchangeInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := portalentry.ExchangeMessenger(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalTunnelIdentify(c *Ctx) error {
	out, err := portalentry.IdentifyTunnel(c.R.Context(), c.Tenant, c.IP)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalTunnelTenant(c *Ctx) error {
	out, err := portalentry.IdentifyTunnelTenant(c.R.Context(), c.App, c.Tenant, c.IP)
	if err != nil {
		return err
	}
	return c.OK(out)
}
