package console

import "strings"

// resetGroup is a kind of record, in the words the factory reset page
// uses, with how many of its records a reset deletes.
type resetGroup struct {
	Key   string // the catalogue key's last part (reset.kind.KEY), also data-kind
	Count int64
}

// resetGroupRules map the tenant's tables (the API preview's kinds) to
// the words a person reads: the first rule whose prefix a table name has
// decides; a table no rule names counts as "other".
var resetGroupRules = []struct{ prefix, group string }{
	{"users", "subscribers"}, {"user_groups", "subscribers"}, {"user_addons", "subscribers"}, {"user_activations", "money"},
	{"user_ledger", "money"}, {"user_invoices", "money"}, {"user_points", "money"}, {"payment", "money"},
	{"manager_loans", "money"}, {"manager_points", "money"},
	{"profile", "plans"}, {"addon", "plans"},
	{"radius_sessions", "sessions"}, {"usage_rollups", "sessions"}, {"auth_log", "sessions"}, {"dashboard_", "sessions"},
	{"card_templates", "designs"}, {"card", "cards"},
	{"pos_", "sales"}, {"shop_", "sales"},
	{"manager", "staff"}, {"roles", "staff"}, {"role_", "staff"}, {"auth_sessions", "staff"}, {"api_tokens", "staff"},
	{"recovery_codes", "staff"}, {"push_tokens", "staff"}, {"authz_changes", "staff"},
	{"nas", "network"}, {"mon_", "network"}, {"bandwidth_", "network"}, {"devgw_", "network"},
	{"ticket", "support"},
	{"outbox_", "messages"}, {"announcement", "messages"}, {"messenger_", "messages"}, {"events", "messages"}, {"webhook_", "messages"},
	{"ss_", "portal"}, {"portal_", "portal"}, {"guest_", "portal"}, {"parental_", "portal"},
	{"design", "designs"}, {"hotspot_", "designs"}, {"files", "designs"}, {"form_", "designs"},
}

// resetGroupOrder is the order the page lists the groups in.
var resetGroupOrder = []string{"subscribers", "plans", "money", "sessions", "cards", "sales", "staff", "network", "support",
	"messages", "portal", "designs", "other"}

// resetGroupOf is the group of a table.
func resetGroupOf(table string) string {
	for _, r := range resetGroupRules {
		if strings.HasPrefix(table, r.prefix) {
			return r.group
		}
	}
	return "other"
}

// resetGroups sums the preview's counts per group, in the page's order,
// leaving out the groups with nothing to delete.
func resetGroups(counts map[string]int64) []resetGroup {
	sum := map[string]int64{}
	for table, n := range counts {
		sum[resetGroupOf(table)] += n
	}
	var out []resetGroup
	for _, g := range resetGroupOrder {
		if sum[g] > 0 {
			out = append(out, resetGroup{Key: g, Count: sum[g]})
		}
	}
	return out
}
