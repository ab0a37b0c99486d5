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
}
