package web

import (
	"xr/app"
	"xr/app/portal"
)

// The subscriber portal (rows of portal_routes.go, each under /portal and
// /user with the same handler). The subscriber id comes only from the
// verified portal token (c.Actor, an app.SubscriberActor); no handler
// reads an id of a subscriber from the request.

// portalAuth is s.PortalAuth: a portal token of the host's tenant, its
// live session and a subscriber in standing (see portal.Authenticate). A
// staff token answers 401 invalid_token.
func (s *Server) portalAuth(c *Ctx) error {
	uid, jti, err := portal.Authenticate(c.R.Context(), c.Tenant, bearerToken(c.R))
	if err != nil {
		return err
	}
	c.Actor = app.SubscriberActor(c.Tenant, uid, jti)
	return nil
}

func (s *Server) portalLogin(c *Ctx) error {
	var in portal.LoginInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP, in.UserAgent = c.IP, c.R.UserAgent()
	out, err := portal.Login(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalRefresh(c *Ctx) error {
	var in portal.RefreshInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP, in.UserAgent = c.IP, c.R.UserAgent()
	out, err := portal.Refresh(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalConfig(c *Ctx) error {
	out, err := portal.GetConfig(c.R.Context(), c.Tenant)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalPassword(c *Ctx) error {
	var in portal.PasswordInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	if err := portal.ChangePassword(c.R.Context(), c.Actor, in); err != nil {
		return err
	}
	return c.OK(map[string]bool{"changed": true})
}

// portalDeletePushToken takes the token from the body or, for clients
// that send no body with DELETE, from ?token=.
func (s *Server) portalDeletePushToken(c *Ctx) error {
	var in portal.PushTokenInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	if in.Token == "" {
		in.Token = c.Query().Get("token")
	}
	out, err := portal.DeletePushToken(c.R.Context(), c.Actor, in.Token)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// loginAsSubscriber is POST /users/{id}/login-as: a borrowed portal
// session for the subscriber (allowed for API tokens, bucket user_login_as).
func (s *Server) loginAsSubscriber(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := portal.LoginAs(c.R.Context(), c.Actor, id, c.IP, c.R.UserAgent())
	if err != nil {
		return err
	}
	return c.OK(out)
}
