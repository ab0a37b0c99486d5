package web

import (
	"context"

	"xr/app"
	"xr/app/portal"
)

// The subscriber portal (rows of routes_portal.go, each under /portal and
// /user with the same handler). The subscriber id comes only from the
// verified portal token (c.SubscriberID); no handler reads an id of a
// subscriber from the request.

type portalJTIKey struct{}

// portalAuth is s.PortalAuth: a portal token of the host's tenant, its
// live session and a subscriber in standing (see portal.Authenticate). A
// staff token answers 401 invalid_token.
func (s *Server) portalAuth(c *Ctx) error {
	uid, jti, err := portal.Authenticate(c.R.Context(), c.Tenant, bearerToken(c.R))
	if err != nil {
		return err
	}
	c.SubscriberID = uid
	c.R = c.R.WithContext(context.WithValue(c.R.Context(), portalJTIKey{}, jti))
	return nil
}

func portalJTI(c *Ctx) string {
	s, _ := c.R.Context().Value(portalJTIKey{}).(string)
	return s
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

func (s *Server) portalMe(c *Ctx) error {
	out, err := portal.GetMe(c.R.Context(), c.Tenant, c.SubscriberID)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalAccount(c *Ctx) error {
	var in portal.AccountPatch
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := portal.UpdateAccount(c.R.Context(), c.Tenant, c.SubscriberID, in)
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
	if err := portal.ChangePassword(c.R.Context(), c.Tenant, c.SubscriberID, portalJTI(c), in); err != nil {
		return err
	}
	return c.OK(map[string]bool{"changed": true})
}

func (s *Server) portalCredentials(c *Ctx) error {
	out, err := portal.GetCredentials(c.R.Context(), c.Tenant, c.SubscriberID)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalUsage(c *Ctx) error {
	out, err := portal.GetUsage(c.R.Context(), c.Tenant, c.SubscriberID)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalQuotaBuckets(c *Ctx) error {
	out, err := portal.QuotaBuckets(c.R.Context(), c.Tenant, c.SubscriberID)
	if err != nil {
		return err
	}
	return c.List(out, app.OnePage(len(out)))
}

func (s *Server) portalSessions(c *Ctx) error {
	lq, err := app.ParseList(c.Query(), portal.SessionSpec())
	if err != nil {
		return err
	}
	page, err := portal.Sessions(c.R.Context(), c.Tenant, c.SubscriberID, lq)
	if err != nil {
		return err
	}
	return Page(c, page)
}

func (s *Server) portalLedger(c *Ctx) error {
	lq, err := app.ParseList(c.Query(), portal.LedgerSpec())
	if err != nil {
		return err
	}
	page, err := portal.Ledger(c.R.Context(), c.Tenant, c.SubscriberID, lq)
	if err != nil {
		return err
	}
	return Page(c, page)
}

func (s *Server) portalInvoices(c *Ctx) error {
	lq, err := app.ParseList(c.Query(), portal.InvoiceSpec())
	if err != nil {
		return err
	}
	page, err := portal.Invoices(c.R.Context(), c.Tenant, c.SubscriberID, lq)
	if err != nil {
		return err
	}
	return Page(c, page)
}

func (s *Server) portalInvoice(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	out, err := portal.GetInvoice(c.R.Context(), c.Tenant, c.SubscriberID, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalProfiles(c *Ctx) error {
	out, err := portal.Profiles(c.R.Context(), c.Tenant, c.SubscriberID)
	if err != nil {
		return err
	}
	return c.List(out, app.OnePage(len(out)))
}

func (s *Server) portalRenew(c *Ctx) error {
	var in portal.RenewInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := portal.Renew(c.R.Context(), c.Tenant, c.SubscriberID, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalRedeem(c *Ctx) error {
	var in portal.RedeemInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := portal.Redeem(c.R.Context(), c.Tenant, c.SubscriberID, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) portalAddPushToken(c *Ctx) error {
	var in portal.PushTokenInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := portal.AddPushToken(c.R.Context(), c.Tenant, c.SubscriberID, in)
	if err != nil {
		return err
	}
	return c.Created(out)
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
	out, err := portal.DeletePushToken(c.R.Context(), c.Tenant, c.SubscriberID, in.Token)
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
