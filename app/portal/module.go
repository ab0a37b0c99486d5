package portal

import "xr/app"

// Module is the subscriber portal: its settings (the session length, the
// switch and the optional features) and its sign-in buckets.
var Module = app.Module{
	Name:     "portal",
	Settings: settingDecls,
	Buckets: map[string]app.BucketDef{
		"portal_login":   {Scope: app.ScopeIP, Limit: 20},
		"portal_refresh": {Scope: app.ScopeIP, Limit: 60},
	},
}
