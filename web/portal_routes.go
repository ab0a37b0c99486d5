// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app/cards"
	"xr/app/portal"
	"xr/app/subs"
)

// portalRoutes are the subscriber portal's rows, written once under /portal;
// twins adds the spec's /user alias of each.
func (s *Server) portalRoutes() []Route {
	return twins([]Route{
		// Subscriber portal
		{M: "PATCH", P: "/portal/account", Access: Subscriber, H: bodyCall(portal.UpdateAccount), Req: portal.AccountPatch{}, Resp: portal.Me{},
			Summary: "the subscriber updates its own contact fields"},
		{M: "POST", P: "/portal/cards/redeem", Access: Subscriber, H: bodyCall(portal.Redeem), Req: portal.RedeemInput{}, Resp: cards.RedeemResult{},
			Summary: "the subscriber redeems a prepaid card into its balance or plan"},
		{M: "GET", P: "/portal/config", Access: Public, H: s.portalConfig, Resp: portal.Config{}, Summary: "what the portal shows and allows (branding, features)"},
		{M: "GET", P: "/portal/credentials", Access: Subscriber, H: actorCall(portal.GetCredentials), Resp: portal.Credentials{},
			Summary: "the subscriber's RADIUS username and password"},
		{M: "GET", P: "/portal/invoices", Access: Subscriber, H: listCall(portal.InvoiceSpec(), portal.Invoices), Resp: portal.Invoice{}, List: true, Summary: "the subscriber's invoices"},
		{M: "GET", P: "/portal/invoices/{id}", Access: Subscriber, H: idCall(portal.GetInvoice), Resp: portal.Invoice{}, Summary: "one invoice of the subscriber"},
		{M: "GET", P: "/portal/invoices/{id}/render-data", Access: Subscriber, Buckets: []string{"t_heavy"}, H: idCall(portal.GetInvoiceRenderData),
			Resp: portal.InvoiceRenderData{}, Reasons: []string{"404 not_found"}, Summary: "one invoice of the subscriber with what a client needs to draw or print it"},
		{M: "GET", P: "/portal/ledger", Access: Subscriber, H: listCall(portal.LedgerSpec(), portal.Ledger), Resp: portal.LedgerEntry{}, List: true, Summary: "the subscriber's balance movements"},
		{M: "POST", P: "/portal/login", Access: Public, Buckets: []string{"portal_login"}, H: s.portalLogin, Req: portal.LoginInput{}, Resp: portal.Session{},
			Summary: "sign a subscriber in to the portal: a session token and a refresh token"},
		{M: "GET", P: "/portal/me", Access: Subscriber, H: actorCall(portal.GetMe), Resp: portal.Me{}, Summary: "the signed-in subscriber: plan, expiry, balance, quota"},
		{M: "POST", P: "/portal/password", Access: Subscriber, H: s.portalPassword, Req: portal.PasswordInput{}, Summary: "the subscriber changes its portal password"},
		{M: "GET", P: "/portal/profiles", Access: Subscriber, H: allCall(portal.Profiles), Resp: []portal.Plan{}, Summary: "the plans the subscriber may renew to"},
		{M: "DELETE", P: "/portal/push-tokens", Access: Subscriber, H: s.portalDeletePushToken, Req: portal.PushTokenInput{}, Resp: portal.PushTokenResult{},
			Summary: "forget a push-notification token of the subscriber"},
		{M: "POST", P: "/portal/push-tokens", Status: 201, Access: Subscriber, H: createCall(portal.AddPushToken), Req: portal.PushTokenInput{}, Resp: portal.PushTokenResult{},
			Summary: "register a push-notification token for the subscriber; 201"},
		{M: "GET", P: "/portal/quota-buckets", Access: Subscriber, H: allCall(portal.QuotaBuckets), Resp: []portal.QuotaBucket{},
			Summary: "the subscriber's quota buckets and what is left"},
		{M: "POST", P: "/portal/refresh", Access: Public, Buckets: []string{"portal_refresh"}, H: s.portalRefresh, Req: portal.RefreshInput{}, Resp: portal.Session{},
			Summary: "exchange a portal refresh token for a new session token"},
		{M: "POST", P: "/portal/renew", Access: Subscriber, H: bodyCall(portal.Renew), Req: portal.RenewInput{}, Resp: subs.ActivationResult{},
			Summary: "the subscriber renews its plan from its balance"},
		{M: "GET", P: "/portal/sessions", Access: Subscriber, H: listCall(portal.SessionSpec(), portal.Sessions), Resp: portal.RadiusSession{}, List: true, Summary: "the subscriber's RADIUS sessions"},
		{M: "GET", P: "/portal/usage", Access: Subscriber, H: actorCall(portal.GetUsage), Resp: portal.Usage{}, Summary: "the subscriber's usage over time"},
	})
}
