// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"strings"

	"xr/app/cards"
	"xr/app/portal"
	"xr/app/subs"
)

// portalRoutes are the subscriber portal's rows, written once under /portal;
// twins adds the spec's /user alias of each.
func (s *Server) portalRoutes() []Route {
	return twins([]Route{
		// Subscriber portal
		{M: "PATCH", P: "/portal/account", Access: Subscriber, H: s.portalAccount, Req: portal.AccountPatch{}, Resp: portal.Me{}},
		{M: "POST", P: "/portal/auto-renew", Access: Subscriber},
		{M: "PUT", P: "/portal/bucket-order", Access: Subscriber},
		{M: "GET", P: "/portal/captcha", Access: Public, Buckets: []string{"portal_captcha"}},
		{M: "POST", P: "/portal/cards/redeem", Access: Subscriber, H: s.portalRedeem, Req: portal.RedeemInput{}, Resp: cards.RedeemResult{}},
		{M: "POST", P: "/portal/change-profile", Access: Subscriber},
		{M: "GET", P: "/portal/config", Access: Public, H: s.portalConfig, Resp: portal.Config{}},
		{M: "GET", P: "/portal/credentials", Access: Subscriber, H: s.portalCredentials, Resp: portal.Credentials{}},
		{M: "POST", P: "/portal/deposit", Access: Subscriber, Buckets: []string{"portal_deposit"}},
		{M: "POST", P: "/portal/exchange", Access: Public, Buckets: []string{"portal_exchange"}},
		{M: "POST", P: "/portal/extend", Access: Subscriber},
		{M: "GET", P: "/portal/extensions", Access: Subscriber},
		{M: "GET", P: "/portal/extensions/{id}", Access: Subscriber},
		{M: "GET", P: "/portal/guest/context", Access: Subscriber, Buckets: []string{"portal_guest"}},
		{M: "POST", P: "/portal/guest/register", Access: Subscriber, Buckets: []string{"portal_guest"}},
		{M: "GET", P: "/portal/invoices", Access: Subscriber, H: s.portalInvoices, Resp: portal.Invoice{}, List: true},
		{M: "GET", P: "/portal/invoices/{id}", Access: Subscriber, H: s.portalInvoice, Resp: portal.Invoice{}},
		{M: "GET", P: "/portal/invoices/{id}/render-data", Access: Subscriber, Buckets: []string{"t_heavy"}},
		{M: "POST", P: "/portal/join", Access: Public, Buckets: []string{"portal_join"}},
		{M: "GET", P: "/portal/join/context", Access: Public, Buckets: []string{"portal_join"}},
		{M: "GET", P: "/portal/ledger", Access: Subscriber, H: s.portalLedger, Resp: portal.LedgerEntry{}, List: true},
		{M: "POST", P: "/portal/login", Access: Public, Buckets: []string{"portal_login"}, H: s.portalLogin, Req: portal.LoginInput{}, Resp: portal.Session{}},
		{M: "GET", P: "/portal/me", Access: Subscriber, H: s.portalMe, Resp: portal.Me{}},
		{M: "GET", P: "/portal/parental", Access: Subscriber},
		{M: "POST", P: "/portal/parental/pause", Access: Subscriber},
		{M: "POST", P: "/portal/parental/pin", Access: Subscriber},
		{M: "PUT", P: "/portal/parental/rules", Access: Subscriber},
		{M: "POST", P: "/portal/parental/unlock", Access: Public, Buckets: []string{"portal_parental_unlock"}},
		{M: "POST", P: "/portal/password", Access: Subscriber, H: s.portalPassword, Req: portal.PasswordInput{}},
		{M: "GET", P: "/portal/payments/gateways", Access: Subscriber},
		{M: "GET", P: "/portal/payments/transactions", Access: Subscriber},
		{M: "GET", P: "/portal/profiles", Access: Subscriber, H: s.portalProfiles, Resp: portal.Plan{}},
		{M: "POST", P: "/portal/purchase", Access: Subscriber, Buckets: []string{"portal_deposit"}},
		{M: "DELETE", P: "/portal/push-tokens", Access: Subscriber, H: s.portalDeletePushToken, Req: portal.PushTokenInput{}, Resp: portal.PushTokenResult{}},
		{M: "POST", P: "/portal/push-tokens", Access: Subscriber, H: s.portalAddPushToken, Req: portal.PushTokenInput{}, Resp: portal.PushTokenResult{}},
		{M: "GET", P: "/portal/quota-buckets", Access: Subscriber, H: s.portalQuotaBuckets, Resp: portal.QuotaBucket{}},
		{M: "POST", P: "/portal/quote", Access: Subscriber},
		{M: "POST", P: "/portal/refresh", Access: Public, Buckets: []string{"portal_refresh"}, H: s.portalRefresh, Req: portal.RefreshInput{}, Resp: portal.Session{}},
		{M: "POST", P: "/portal/renew", Access: Subscriber, H: s.portalRenew, Req: portal.RenewInput{}, Resp: subs.ActivationResult{}},
		{M: "GET", P: "/portal/sessions", Access: Subscriber, H: s.portalSessions, Resp: portal.RadiusSession{}, List: true},
		{M: "POST", P: "/portal/signup", Access: Public, Buckets: []string{"portal_signup"}},
		{M: "GET", P: "/portal/signup/schema", Access: Public},
		{M: "GET", P: "/portal/speed", Access: Subscriber},
		{M: "PUT", P: "/portal/speed", Access: Subscriber},
		{M: "DELETE", P: "/portal/speed", Access: Subscriber},
		{M: "POST", P: "/portal/messenger-exchange", Access: Public, Buckets: []string{"portal_messenger_exchange"}},
		{M: "GET", P: "/portal/messenger/link", Access: Subscriber},
		{M: "GET", P: "/portal/tickets", Access: Subscriber},
		{M: "POST", P: "/portal/tickets", Access: Subscriber},
		{M: "GET", P: "/portal/tickets/form", Access: Subscriber},
		{M: "GET", P: "/portal/tickets/{id}", Access: Subscriber},
		{M: "POST", P: "/portal/tickets/{id}/attach", Access: Subscriber},
		{M: "GET", P: "/portal/tickets/{id}/attachments/{attId}", Access: Subscriber},
		{M: "DELETE", P: "/portal/tickets/{id}/attachments/{attId}", Access: Subscriber},
		{M: "POST", P: "/portal/tickets/{id}/messages", Access: Subscriber},
		{M: "POST", P: "/portal/tunnel-identify", Access: Public, Buckets: []string{"portal_tunnel_identify"}},
		{M: "POST", P: "/portal/tunnel-tenant", Access: Public, Buckets: []string{"portal_tunnel_tenant"}},
		{M: "GET", P: "/portal/usage", Access: Subscriber, H: s.portalUsage, Resp: portal.Usage{}},
	})
}

// twins returns rows with, after each /portal row, the same row under
// /user: the spec serves the portal at both prefixes.
func twins(rows []Route) []Route {
	out := make([]Route, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out, r)
		if rest, ok := strings.CutPrefix(r.P, "/portal/"); ok {
			u := r
			u.P = "/user/" + rest
			out = append(out, u)
		}
	}
	return out
}
