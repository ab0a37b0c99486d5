package reports

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermReportActivationStats        app.Perm = "prm_report_activation_stats"
	PermReportActivations            app.Perm = "prm_report_activations"
	PermReportCardsLog               app.Perm = "prm_report_cards_log"
	PermReportCardsUsage             app.Perm = "prm_report_cards_usage"
	PermReportDebts                  app.Perm = "prm_report_debts"
	PermReportGatewayTransactions    app.Perm = "prm_report_gateway_transactions"
	PermReportGatewayTransactionsAll app.Perm = "prm_report_gateway_transactions_all"
	PermReportMoneyTransfer          app.Perm = "prm_report_money_transfer"
	PermReportProfits                app.Perm = "prm_report_profits"
	PermReportSessions               app.Perm = "prm_report_sessions"
	PermReportSuspicious             app.Perm = "prm_report_suspicious"
	PermReportTraffic                app.Perm = "prm_report_traffic"
	PermReportUsers                  app.Perm = "prm_report_users"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("report", PermReportActivationStats, PermReportActivations,
	PermReportCardsLog, PermReportCardsUsage, PermReportDebts, PermReportGatewayTransactions,
	PermReportGatewayTransactionsAll, PermReportMoneyTransfer, PermReportProfits, PermReportSessions,
	PermReportSuspicious, PermReportTraffic, PermReportUsers)

// roleGrants are the area's codes the system role templates get.
var roleGrants = map[string][]app.Perm{
	"reseller": {PermReportSessions, PermReportCardsLog}, // the history of its card stock
	"support":  {PermReportSessions},
}
