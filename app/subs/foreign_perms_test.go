package subs_test

import (
	"testing"

	"xr/app"
	"xr/app/cards"
	"xr/app/dataimport"
	"xr/app/subs"
)

// TestForeignPermsMatch: a permission subs names again, because its home
// package imports subs, is the same code as its home's constant.
func TestForeignPermsMatch(t *testing.T) {
	t.Parallel()
	home := map[string]app.Perm{
		"cards.PermCardsGenerateUser":      cards.PermCardsGenerateUser,
		"cards.PermCardsDesigner":          cards.PermCardsDesigner,
		"dataimport.PermToolsLegacyImport": dataimport.PermToolsLegacyImport,
	}
	if len(home) != len(subs.ForeignPerms) {
		t.Fatalf("subs names %d foreign permissions, the test knows %d", len(subs.ForeignPerms), len(home))
	}
	for name, p := range subs.ForeignPerms {
		if home[name] != p {
			t.Errorf("%s is %q, subs names %q", name, home[name], p)
		}
	}
}
