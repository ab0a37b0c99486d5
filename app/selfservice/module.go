// Package selfservice is what a subscriber changes about its own service
// from the portal: plan changes and quotes, extensions on credit,
// automatic renewal, the order of its quota buckets, speed boosts. The
// prorating rules are in docs/selfservice.md.
package selfservice

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/outbox"
)

// Module is the self-service area.
var Module = app.Module{
	Name: "selfservice",
	Jobs: map[string]app.JobHandler{JobAutoRenew: runAutoRenew, JobApplyChange: runApplyChange, JobBoostEnd: runBoostEnd},
	Init: func(a *app.App) {
		outbox.Register(a, templates...)
		aaa.SetUsageHook(a, chargeBuckets)
	},
	Settings: settingDecls,
}

// Notification templates (portal inbox).
const (
	tplRenewed     = "selfservice.auto_renewed"
	tplRenewFailed = "selfservice.auto_renew_failed"
)

var templates = []outbox.Template{
	{Key: tplRenewed, Subject: "Your plan was renewed", Body: "{plan} was renewed automatically for {price}; it now runs until {expiration}.",
		Vars: []string{"plan", "price", "expiration"}},
	{Key: tplRenewFailed, Subject: "Automatic renewal failed", Body: "Your plan could not be renewed automatically ({reason}). Top up your wallet or renew from the portal.",
		Vars: []string{"reason"}},
}
