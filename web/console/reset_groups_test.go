package console

import (
	"reflect"
	"testing"
)

// The factory reset page counts records by what a person calls them:
// tables fold into groups in the page's order, empty groups are left out,
// and a table no rule names is "other".
func TestResetGroups(t *testing.T) {
	t.Parallel()
	got := resetGroups(map[string]int64{"users": 3, "user_ledger": 2, "user_groups": 1, "card_templates": 1, "cards": 5,
		"card_batches": 1, "managers": 1, "manager_tree": 1, "ticket_messages": 4, "jobs": 2, "profiles": 1, "radius_sessions": 0})
	want := []resetGroup{{"subscribers", 4}, {"plans", 1}, {"money", 2}, {"cards", 6}, {"staff", 2}, {"support", 4},
		{"designs", 1}, {"other", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	for _, r := range resetGroupRules {
		found := false
		for _, g := range resetGroupOrder {
			found = found || g == r.group
		}
		if !found {
			t.Errorf("rule %s names group %s, which the page does not list", r.prefix, r.group)
		}
	}
}
