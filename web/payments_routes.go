package web

import (
	"context"
	"io"
	"net/http"

	"xr/app"
	"xr/app/payments"
	"xr/app/reports"
	"xr/app/subs"
)

// paymentsPortalRoutes are the portal's payment rows (deposit, purchase,
// gateways, transactions), written once under /portal; twins adds the /user
// alias. The staff rows and the providers' webhook follow in paymentsRoutes.
func (s *Server) paymentsPortalRoutes() []Route {
	return append(twins([]Route{
		{M: "POST", P: "/portal/deposit", Access: Subscriber, Buckets: []string{"portal_deposit"}, H: returnCall(payments.Deposit, func(in *payments.DepositInput, u string) { in.ReturnURL = u }),
			Req: payments.DepositInput{}, Resp: payments.Checkout{}, Reasons: startReasons, Summary: "top up the wallet through a payment gateway (request_id must be a UUID)"},
		{M: "GET", P: "/portal/payments/gateways", Access: Subscriber, H: allCall(payments.Gateways), Resp: []payments.PortalGateway{}, Reasons: featureReasons,
			Summary: "the payment gateways the subscriber may use, with currency, minimum and fee"},
		{M: "GET", P: "/portal/payments/transactions", Access: Subscriber, H: listCall(payments.TransactionSpec(), payments.Transactions),
			Resp: payments.Payment{}, List: true, Reasons: featureReasons, Summary: "the subscriber's payments, newest first"},
		{M: "POST", P: "/portal/purchase", Access: Subscriber, Buckets: []string{"portal_deposit"}, H: returnCall(payments.Purchase, func(in *payments.PurchaseInput, u string) { in.ReturnURL = u }),
			Req: payments.PurchaseInput{}, Resp: payments.Checkout{}, Reasons: append([]string{"400 kind_required", "400 kind_invalid",
				"400 series_id_required", "400 out_of_range", "400 profile_required", "409 profile_disabled", "409 nothing_to_pay",
				"409 insufficient_stock", "409 card_batch_not_ready", "409 card_batch_suspended", "404 not_found",
				"400 addon_id_required", "400 addon_not_found", "409 addon_not_allowed", "409 quota_unlimited", "409 shop_hold_limit"}, startReasons...), Summary: "pay online for a renewal of the plan or for shop cards (request_id must be a UUID)"},
	}), s.paymentsRoutes()...)
}

// paymentsRoutes are the staff rows of payments (beyond the spec) and the
// providers' webhook.
func (s *Server) paymentsRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/payments/gateways", Access: Staff, Perms: []app.Perm{app.PermSettings}, H: allCall(payments.ListGateways),
			Resp: []payments.Gateway{}, Summary: "the payment providers and the tenant's configuration of each (secrets write-only)"},
		{M: "PUT", P: "/admin/payments/gateways/{code}", Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: s.putGateway, Req: payments.GatewayInput{}, Resp: payments.Gateway{},
			Reasons: []string{"404 not_found", "400 currency_invalid", "400 amount_out_of_range", "400 out_of_range", "400 too_long", "400 unknown_secret", "409 gateway_not_configured"}, Summary: "configure a payment provider: enable, currency, minimum, fee, instructions, secrets"},
		{M: "GET", P: "/admin/payments/{id}", Access: Staff, Perms: []app.Perm{reports.PermReportGatewayTransactions, reports.PermReportGatewayTransactionsAll},
			H: idCall(payments.GetDetail), Resp: payments.Detail{}, Reasons: []string{"404 not_found"}, Summary: "one payment with its log of states and provider notices"},
		{M: "POST", P: "/admin/payments/{id}/confirm", Access: Staff, Perms: []app.Perm{subs.PermUsersDeposit},
			H: idBodyCall(payments.Confirm), Req: payments.DecisionInput{}, Resp: payments.Detail{}, Reasons: decisionReasons,
			Summary: "staff confirm a manual payment (or one held for review): it succeeds and is credited once"},
		{M: "POST", P: "/admin/payments/{id}/reject", Access: Staff, Perms: []app.Perm{subs.PermUsersDeposit},
			H: idBodyCall(payments.Reject), Req: payments.DecisionInput{}, Resp: payments.Detail{}, Reasons: decisionReasons,
			Summary: "staff reject a pending or held payment: it fails and releases what it reserved"},
		{M: "POST", P: "/payments/webhooks/{gateway}", Access: Public, Buckets: []string{"pay_webhook"}, H: s.paymentWebhook, Resp: webhookAck{},
			Reasons: []string{"404 not_found", "400 signature_invalid", "400 notice_invalid", "400 body_too_large", "409 gateway_not_configured"},
			Summary: "a payment provider reports an outcome (verified by the provider's signature); answers 200 once applied or ignored"},
	}
}

// The refusals the payment rows share.
var (
	featureReasons = []string{"403 feature_disabled", "503 site_offline"}
	startReasons   = append([]string{"400 request_id_required", "400 request_id_invalid", "400 gateway_required", "400 gateway_unavailable",
		"400 amount_must_be_positive", "400 amount_out_of_range", "400 amount_below_minimum", "400 amount_precision", "409 request_id_conflict",
		"409 gateway_not_configured", "502 payment_provider_error", "502 payment_provider_unreachable"}, featureReasons...)
	decisionReasons = []string{"404 not_found", "400 too_long", "409 payment_not_open", "409 amount_mismatch"}
)

// returnCall is bodyCall for payment initiation: the provider sends the
// payer back to the portal on the host the request came to.
func returnCall[In, T any](fn func(context.Context, *app.Actor, In) (T, error), setReturn func(*In, string)) HandlerFunc {
	return func(c *Ctx) error {
		var in In
		if err := c.Decode(&in); err != nil {
			return err
		}
		setReturn(&in, PaymentReturnURL(c.R))
		out, err := fn(c.R.Context(), c.Actor, in)
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

func (s *Server) putGateway(c *Ctx) error {
	var in payments.GatewayInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := payments.SetGateway(c.R.Context(), c.Actor, c.R.PathValue("code"), in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// paymentWebhook reads the raw body (the signature covers its exact bytes).
func (s *Server) paymentWebhook(c *Ctx) error {
	if c.Tenant == nil {
		return app.ErrNotFound()
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.W, c.R.Body, 256<<10))
	if err != nil {
		return app.ErrValidation("body_too_large", "")
	}
	if err := payments.ReceiveNotice(c.R.Context(), c.Tenant, c.R.PathValue("gateway"), body, c.R.Header); err != nil {
		return err
	}
	return c.OK(webhookAck{Received: true})
}

// webhookAck answers a provider's notice.
type webhookAck struct {
	Received bool `json:"received"`
}
