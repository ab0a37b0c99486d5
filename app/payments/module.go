// Package payments is the one payment mechanism: providers (manual, stripe)
// behind one interface, payments as state machines credited exactly once.
package payments

import "xr/app"

// Module is the payments area: the expiry job, its providers and its own
// purposes, the payment events, the provider-facing buckets and the
// sealed gateway secrets.
var Module = app.Module{
	Name: "payments",
	Jobs: map[string]app.JobHandler{jobExpire: expireJob},
	Extensions: []app.Extension{
		ProviderExtension(manual{}),
		ProviderExtension(stripeProvider{}),
		PurposeExtension(Purpose{Name: PurposeDeposit, Prepare: prepareDeposit, Fulfil: creditWallet}),
		PurposeExtension(Purpose{Name: PurposeRenewal, Prepare: prepareRenewal, Fulfil: fulfilRenewal}),
		PurposeExtension(Purpose{Name: PurposeAddon, Prepare: prepareAddon, Fulfil: fulfilAddon}),
	},
	Events: []app.EventType{
		{Key: "payment.succeeded", Category: "billing"},
		{Key: "payment.failed", Category: "billing"},
	},
	Buckets: map[string]app.BucketDef{
		"pay_webhook":    {Scope: app.ScopeIP, Limit: 600}, // payment providers call back in bursts
		"pay_init":       {Scope: app.ScopeOperator, Limit: 20},
		"portal_deposit": {Scope: app.ScopeSubscriber, Limit: 20},
	},
	SealedColumns: []app.SealedColumn{{Table: "payment_gateways", Column: "secrets_sealed"}},
}
