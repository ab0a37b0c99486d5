package console

import (
	"strings"

	"xr/app/backups"
)

// The factory reset's preview counts records per table (the API's kinds);
// the page says what they are in words: the tables gathered into the
// groups a person knows (texts reset.w.<group>), each with its count.

// resetGroups maps table names, by prefix, to the group they belong to;
// the first match wins, and a table no prefix matches is "other".
var resetGroups = []struct {
	group    string
	prefixes []string
}{
	{"subscribers", []string{"users", "user_", "import_history_users", "guest_", "parental_", "ss_"}},
	{"sessions", []string{"radius_sessions", "usage_rollups", "auth_log", "bandwidth_", "dashboard_daily", "dashboard_hourly", "dashboard_user_counts"}},
	{"cards", []string{"card", "pos_", "shop_", "designs", "design_"}},
	{"plans", []string{"profile", "addon"}},
	{"managers", []string{"manager", "role"}},
	{"payments", []string{"payment"}},
	{"network", []string{"nas", "mon_", "devgw_", "hotspot_"}},
	{"messages", []string{"announcement", "outbox_", "messenger_", "ticket", "webhook_"}},
}

// resetGroupOf is the group of a table.
func resetGroupOf(table string) string {
	for _, g := range resetGroups {
		for _, p := range g.prefixes {
			if strings.HasPrefix(table, p) {
				return g.group
			}
		}
	}
	return "other"
}

// resetWord is one group the reset erases and how many records it holds.
type resetWord struct {
	Group string
	Count int64
}

// resetWords sums the preview's counts per group, in the groups' order.
func resetWords(deleted []backups.ResetCount) []resetWord {
	sums := map[string]int64{}
	for _, d := range deleted {
		sums[resetGroupOf(d.Kind)] += d.Count
	}
	var out []resetWord
	for _, g := range resetGroups {
		if n := sums[g.group]; n > 0 {
			out = append(out, resetWord{Group: g.group, Count: n})
		}
	}
	if n := sums["other"]; n > 0 {
		out = append(out, resetWord{Group: "other", Count: n})
	}
	return out
}
