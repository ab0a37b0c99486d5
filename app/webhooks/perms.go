package webhooks

import "xr/app"

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermNotificationsManage app.Perm = "prm_notifications_manage"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = app.PermGroup("notifications", PermNotificationsManage)
