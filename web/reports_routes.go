// Code first generated from the spec tables; maintained by hand since.
package web

import (
	"context"

	"xr/app"
	"xr/app/identity"
	"xr/app/reports"
)

// reportsRoutes are the reports (/admin/reports/*): read-only lists over
// the whole tenant file.
func (s *Server) reportsRoutes() []Route {
	return []Route{
		// Reports
		{M: "GET", P: "/admin/reports/activation-stats", Access: Staff, Perms: []app.Perm{reports.PermReportActivationStats}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.ActivationStatsSpec, reports.ActivationStats), Resp: reports.ActivationStat{}, List: true,
			Summary: "activations grouped by day and plan, with revenue"},
		{M: "GET", P: "/admin/reports/activations", Access: Staff, Perms: []app.Perm{reports.PermReportActivations}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.ActivationsSpec, reports.Activations), Resp: reports.Activation{}, List: true, Summary: "activations with their price and manager"},
		{M: "GET", P: "/admin/reports/cards-transfer", Access: Staff, Perms: []app.Perm{reports.PermReportCardsLog}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.CardsTransferSpec, reports.CardsTransfer), Resp: reports.CardTransfer{}, List: true, Summary: "card transfers between managers"},
		{M: "GET", P: "/admin/reports/cards-usage", Access: Staff, Perms: []app.Perm{reports.PermReportCardsUsage}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.CardsUsageSpec, reports.CardsUsage), Resp: reports.CardUsage{}, List: true, Summary: "card redemptions per series and period"},
		{M: "GET", P: "/admin/reports/claims-managers", Access: Staff, Perms: []app.Perm{reports.PermReportDebts}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.ClaimsSpec, reports.ClaimsManagers), Resp: reports.Claim{}, List: true, Summary: "outstanding loans per manager"},
		{M: "GET", P: "/admin/reports/debtors-managers", Access: Staff, Perms: []app.Perm{reports.PermReportDebts}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.DebtorsManagersSpec, reports.DebtorsManagers), Resp: reports.ManagerDebtor{}, List: true, Summary: "managers in debt"},
		{M: "GET", P: "/admin/reports/debtors-users", Access: Staff, Perms: []app.Perm{reports.PermReportDebts}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.DebtorsUsersSpec, reports.DebtorsUsers), Resp: reports.UserDebtor{}, List: true, Summary: "subscribers in debt"},
		{M: "GET", P: "/admin/reports/debts", Access: Staff, Perms: []app.Perm{reports.PermReportDebts}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.DebtsSpec, reports.Debts), Resp: reports.Debt{}, List: true, Summary: "subscribers and managers in debt, in one list"},
		{M: "GET", P: "/admin/reports/gateway-txns", Access: Staff, Perms: []app.Perm{reports.PermReportGatewayTransactions, reports.PermReportGatewayTransactionsAll},
			H: reportCall(reports.GatewayTxnsSpec, reports.GatewayTxns), Resp: reports.GatewayTxn{}, List: true, Summary: "payment gateway transactions"},
		{M: "GET", P: "/admin/reports/manager-invoices", Access: Staff, Perms: []app.Perm{identity.PermManagersInvoices}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.DocumentsSpec, reports.ManagerInvoices), Resp: reports.DocumentRow{}, List: true, Summary: "invoices of the managers"},
		{M: "GET", P: "/admin/reports/manager-journal", Access: Staff, Perms: []app.Perm{identity.PermManagersJournal}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.ManagerJournalSpec, reports.ManagerJournal), Resp: reports.JournalRow{}, List: true, Summary: "the wallet journal of the managers"},
		{M: "GET", P: "/admin/reports/manager-receipts", Access: Staff, Perms: []app.Perm{identity.PermManagersReceipts}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.DocumentsSpec, reports.ManagerReceipts), Resp: reports.DocumentRow{}, List: true, Summary: "receipts of the managers"},
		{M: "GET", P: "/admin/reports/money-transfer", Access: Staff, Perms: []app.Perm{reports.PermReportMoneyTransfer}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.MoneyTransferSpec, reports.MoneyTransfer), Resp: reports.Transfer{}, List: true, Summary: "money moved between managers"},
		{M: "GET", P: "/admin/reports/profits", Access: Staff, Perms: []app.Perm{reports.PermReportProfits}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.ProfitsSpec, reports.Profits), Resp: reports.Profit{}, List: true, Summary: "revenue grouped by day and manager, less reseller cost"},
		{M: "GET", P: "/admin/reports/sessions", Access: Staff, Perms: []app.Perm{reports.PermReportSessions}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.SessionsSpec, reports.Sessions), Resp: reports.SessionRow{}, List: true, Summary: "closed RADIUS sessions over a period"},
		{M: "GET", P: "/admin/reports/suspicious", Access: Staff, Perms: []app.Perm{reports.PermReportSuspicious}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.SuspiciousSpec, reports.Suspicious), Resp: reports.Suspect{}, List: true,
			Summary: "subscribers with suspicious session patterns (many MACs, short or stale sessions)"},
		{M: "GET", P: "/admin/reports/traffic", Access: Staff, Perms: []app.Perm{reports.PermReportTraffic}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.TrafficSpec, reports.Traffic), Resp: reports.TrafficRow{}, List: true, Summary: "traffic totals per period"},
		{M: "GET", P: "/admin/reports/users", Access: Staff, Perms: []app.Perm{reports.PermReportUsers}, Buckets: []string{"t_heavy"},
			H: reportCall(reports.UsersSpec, reports.Users), Resp: reports.UserRow{}, List: true, Summary: "subscribers counted by state and period"},
		// Point of sale
	}
}

// Reports (/admin/reports/*): read-only lists over the whole tenant file,
// scoped to the caller's subtree, each with meta.aggregates. The rows and
// rollups of each report are documented in app/reports.

// reportCall parses a report's list query (a date-only filter[to] covers
// that whole day) and writes its page.
func reportCall[T any](spec app.ListSpec, fn func(context.Context, *app.Actor, app.ListQuery) (app.Page[T], error)) HandlerFunc {
	return func(c *Ctx) error {
		q, err := reports.Parse(c.Query(), spec)
		if err != nil {
			return err
		}
		p, err := fn(c.R.Context(), c.Actor, q)
		if err != nil {
			return err
		}
		return Page(c, p)
	}
}
