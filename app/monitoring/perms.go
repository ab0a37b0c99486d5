package monitoring

import (
	"slices"

	"xr/app"
)

// The area's permission codes, one constant each, named from the code
// (drop "prm_", CamelCase the rest, prefix Perm); permCatalogue lists
// them in the Module (TestPermConstantsMatchCatalogue holds the two together).
const (
	PermMapEdit          app.Perm = "prm_map_edit"
	PermMapView          app.Perm = "prm_map_view"
	PermMonitoringAck    app.Perm = "prm_monitoring_ack"
	PermMonitoringManage app.Perm = "prm_monitoring_manage"
	PermMonitoringView   app.Perm = "prm_monitoring_view"
)

// permCatalogue is the area's rows of the permission catalogue.
var permCatalogue = slices.Concat(
	app.PermGroup("map", PermMapEdit, PermMapView),
	app.PermGroup("monitoring", PermMonitoringAck, PermMonitoringManage, PermMonitoringView),
)
