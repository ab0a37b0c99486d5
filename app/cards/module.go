package cards

import "xr/app"

// Module is what the prepaid-cards area contributes to an instance.
var Module = app.Module{
	Name: "cards",
	Jobs: map[string]app.JobHandler{GenerateKind: runGenerate, PDFKind: runPDF},
	ManagerRefs: []string{
		`SELECT COUNT(*) FROM card_batches WHERE ? IN (owner_manager_id, created_by)`,
		`SELECT COUNT(*) FROM cards WHERE owner_manager_id = ?`,
		`SELECT COUNT(*) FROM card_templates WHERE ? IN (manager_id, json_extract(spec, '$.owner_manager_id'))`,
	},
	Permissions: permCatalogue,
	RoleGrants:  roleGrants,
	Settings:    settingDecls,
	Events: []app.EventType{
		{Key: "card.redeemed", Category: "billing"},
		{Key: "card_batch.ready", Category: "billing"},
	},
	Buckets: map[string]app.BucketDef{
		"card_search":        {Scope: app.ScopeOperator, Limit: 120},
		"card_timeline":      {Scope: app.ScopeOperator, Limit: 120},
		"card_redeem":        {Scope: app.ScopeOperator, Limit: 60},
		"card_wallet_redeem": {Scope: app.ScopeOperator, Limit: 60},
		"card_redeem_public": {Scope: app.ScopeIP, Limit: 60},
	},
}
