package console

import "xr/web"

// menuSections order the console's menu by the job a person comes to do;
// each role sees the entries whose route row permissions it holds
// (web.Site.menuFor), so a cashier's menu is Home and Sales, a NOC's
// Network. Every page with a Menu key is in exactly one section (the
// platform refuses to mount otherwise).
var menuSections = []web.MenuSection{
	{Key: "home", Items: []string{"dashboard", "my_dashboard", "dashboards"}},
	{Key: "subscribers", Items: []string{"subscribers", "sessions", "portal_entry", "bulk_changes"}},
	{Key: "network", Items: []string{"nas", "monitoring", "bandwidth", "hotspot"}},
	{Key: "sales", Items: []string{"pos", "cards", "card_stock", "plans", "payments", "shop", "shop_sales", "payment_gateways", "studio", "studio_store"}},
	{Key: "support", Items: []string{"tickets", "messages", "announcements"}},
	{Key: "reports", Items: []string{"reports"}},
	{Key: "administration", Items: []string{"managers", "roles", "account", "console_sessions", "webhooks", "imports", "legacy_imports", "backups", "backup_destinations", "factory_reset", "license"}},
}
