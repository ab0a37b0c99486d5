package web

import (
	"xr/app"
)

// hotspotRoutes are hotspot page sets: shipped templates, the tenant's pages, preview and the RouterOS zip.
func (s *Server) hotspotRoutes() []Route {
	return []Route{
		{M: "GET", P: "/hotspot/pages", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "POST", P: "/hotspot/pages", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "POST", P: "/hotspot/pages/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "GET", P: "/hotspot/pages/{id}", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "PATCH", P: "/hotspot/pages/{id}", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "DELETE", P: "/hotspot/pages/{id}", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "GET", P: "/hotspot/pages/{id}/download", Access: Staff, File: true, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "POST", P: "/hotspot/pages/{id}/duplicate", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "POST", P: "/hotspot/preview", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
		{M: "GET", P: "/hotspot/templates", Access: Staff, Perms: []app.Perm{app.PermHotspotManage}},
	}
}
