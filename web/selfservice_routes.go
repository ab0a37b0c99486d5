package web

import (
	"xr/app"
	"xr/app/selfservice"
	"xr/app/subs"
)

// selfserviceRoutes are the portal's self-service rows: quotes, plan changes, extensions, auto-renew, bucket order, speed boost, written once under /portal; twins adds the /user alias.
// The staff rows that configure what a plan offers follow (beyond the spec).
func (s *Server) selfserviceRoutes() []Route {
	feature := []string{"403 feature_disabled", "503 site_offline"}
	money := append([]string{"400 request_id_required", "400 request_id_too_long", "400 request_id_reserved", "409 request_id_conflict",
		"409 insufficient_balance"}, feature...)
	quote := []string{"400 profile_required", "409 profile_not_allowed", "409 profile_disabled", "409 extension_limit", "400 addon_not_found",
		"409 addon_not_allowed", "400 intent_required", "400 invalid_enum"}
	execQuote := []string{"400 quote_not_found", "409 quote_used", "409 quote_expired", "409 quote_stale"}
	return append(twins([]Route{
		{M: "POST", P: "/portal/auto-renew", Access: Subscriber, H: bodyCall(selfservice.SetAutoRenew), Req: selfservice.AutoRenewInput{}, Resp: selfservice.AutoRenew{},
			Reasons: append([]string{"400 profile_required"}, feature...), Summary: "switch automatic renewal from the wallet at expiry on or off"},
		{M: "PUT", P: "/portal/bucket-order", Access: Subscriber, H: bodyCall(selfservice.SetBucketOrder), Req: selfservice.BucketOrderInput{}, Resp: selfservice.BucketState{},
			Reasons: []string{"400 invalid_bucket_order", "503 site_offline"}, Summary: "the order in which the quota buckets (plan, addon, bonus) are consumed"},
		{M: "POST", P: "/portal/change-profile", Access: Subscriber, H: bodyCall(selfservice.ChangeProfile), Req: selfservice.ChangeInput{}, Resp: selfservice.Result{},
			Reasons: append(append(append([]string{}, quote...), execQuote...), money...), Summary: "change plan now or at the next renewal: a quote (quote_id) or the same body, charged to the wallet"},
		{M: "POST", P: "/portal/extend", Access: Subscriber, H: bodyCall(selfservice.Extend), Req: selfservice.ExtendInput{}, Resp: selfservice.Result{},
			Reasons: append(append([]string{"400 profile_required", "409 extension_limit"}, execQuote...), money...), Summary: "take the plan's extension (grace days on credit)"},
		{M: "GET", P: "/portal/extensions", Access: Subscriber, H: listCall(selfservice.ExtensionSpec(), selfservice.Extensions), Resp: selfservice.Extension{}, List: true,
			Reasons: feature, Summary: "the subscriber's extensions with their cost and state"},
		{M: "GET", P: "/portal/extensions/{id}", Access: Subscriber, H: idCall(selfservice.GetExtension), Resp: selfservice.Extension{},
			Reasons: append([]string{"404 not_found"}, feature...), Summary: "one extension of the subscriber"},
		{M: "POST", P: "/portal/quote", Access: Subscriber, H: bodyCall(selfservice.PriceQuote), Req: selfservice.QuoteInput{}, Resp: selfservice.Quote{},
			Reasons: append(append([]string{}, quote...), feature...), Summary: "price an intent (renew, change now or at renewal, add-on, extend); valid 15 minutes"},
		{M: "GET", P: "/portal/speed", Access: Subscriber, H: actorCall(selfservice.GetSpeed), Resp: selfservice.Speed{}, Reasons: feature,
			Summary: "the plan's rate, the speed boost in force and the boosts on offer"},
		{M: "PUT", P: "/portal/speed", Access: Subscriber, H: bodyCall(selfservice.SetSpeed), Req: selfservice.SpeedInput{}, Resp: selfservice.Boost{},
			Reasons: append([]string{"400 boost_option_not_found", "409 boost_active"}, money...), Summary: "buy a speed boost from the plan's options: applied at once by CoA, reverted at its end"},
		{M: "DELETE", P: "/portal/speed", Access: Subscriber, H: actorCall(selfservice.CancelSpeed), Resp: selfservice.Boost{},
			Reasons: append([]string{"409 no_active_boost"}, feature...), Summary: "end the speed boost now (not refunded)"},
	}),
		Route{M: "GET", P: "/admin/profiles/{id}/self-service", Access: Staff, Perms: []app.Perm{subs.PermProfilesIndex, subs.PermProfilesManage},
			H: idCall(selfservice.GetPlanPolicy), Resp: selfservice.PlanPolicy{}, Reasons: []string{"404 not_found"},
			Summary: "what the portal offers on a plan: plans to change to, extension policy, speed boosts"},
		Route{M: "PUT", P: "/admin/profiles/{id}/self-service", Access: Staff, Perms: []app.Perm{subs.PermProfilesManage},
			H: idBodyCall(selfservice.SetPlanPolicy), Req: selfservice.PlanPolicyInput{}, Resp: selfservice.PlanPolicy{},
			Reasons: []string{"404 not_found", "400 out_of_range", "400 invalid_price", "400 too_long", "400 profile_not_found", "400 profile_not_allowed"},
			Summary: "replace what the portal offers on a plan"},
	)
}
