package subs

import "xr/app"

// ForeignPerms are the other areas' permissions subs names again (their
// packages import subs): TestForeignPermsMatch compares them.
var ForeignPerms = map[string]app.Perm{
	"cards.PermCardsGenerateUser":      permCardsGenerateUser,
	"cards.PermCardsDesigner":          permCardsDesigner,
	"dataimport.PermToolsLegacyImport": permToolsLegacyImport,
}
