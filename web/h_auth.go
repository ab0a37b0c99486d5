package web

import (
	"xr/app/identity"
)

func (s *Server) login(c *Ctx) error {
	var req identity.LoginRequest
	if err := c.Decode(&req); err != nil {
		return err
	}
	req.IP, req.UserAgent = c.IP, c.R.UserAgent()
	// tenant_slug is honoured only on a host that carries no tenant.
	if c.Tenant != nil {
		req.TenantSlug = ""
	}
	res, err := identity.Login(c.R.Context(), s.app, c.Tenant, req)
	if err != nil {
		return err
	}
	return c.OK(res)
}

type refreshReq struct {
	RefreshToken string `json:"refresh_token"`
}

func (s *Server) refresh(c *Ctx) error {
	var req refreshReq
	if err := c.Decode(&req); err != nil {
		return err
	}
	res, err := identity.Refresh(c.R.Context(), s.app, c.Tenant, req.RefreshToken, c.IP, c.R.UserAgent())
	if err != nil {
		return err
	}
	return c.OK(res)
}

// logout answers ok even if the revocation write failed, as the spec says:
// ok is not proof the token is dead.
func (s *Server) logout(c *Ctx) error {
	if err := identity.Logout(c.R.Context(), c.Actor); err != nil {
		s.log.Warn("logout", "request_id", c.ReqID, "err", err)
	}
	return c.OK(map[string]bool{"ok": true})
}

type authContext struct {
	HostKind HostKind               `json:"host_kind"`
	Tenant   *identity.PublicTenant `json:"tenant"`
}

// authContext tells a login page what the host is: always 200.
func (s *Server) authContext(c *Ctx) error {
	out := authContext{HostKind: c.Host.Kind}
	if c.Tenant != nil {
		d := identity.PublicDescriptor(c.R.Context(), c.Tenant)
		out.Tenant = &d
	}
	return c.OK(out)
}

type registerStartReq struct {
	Email string `json:"email"`
}

type registerVerifyReq struct {
	RegistrationID string `json:"registration_id"`
	Code           string `json:"code"`
}

func (s *Server) registerStart(c *Ctx) error {
	var in registerStartReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.StartRegistration(c.R.Context(), s.app, in.Email)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) registerVerify(c *Ctx) error {
	var in registerVerifyReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := identity.VerifyRegistration(c.R.Context(), s.app, in.RegistrationID, in.Code); err != nil {
		return err
	}
	return c.OK(map[string]bool{"verified": true})
}

func (s *Server) registerResend(c *Ctx) error {
	var in registerVerifyReq
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.ResendRegistration(c.R.Context(), s.app, in.RegistrationID)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) registerComplete(c *Ctx) error {
	var in identity.CompleteRegistrationInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := identity.CompleteRegistration(c.R.Context(), s.app, in)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) slugAvailable(c *Ctx) error {
	ok, reason := identity.SlugAvailable(s.app, c.Query().Get("slug"))
	return c.OK(map[string]any{"available": ok, "reason": reason})
}
