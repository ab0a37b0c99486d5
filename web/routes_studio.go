package web

import (
	"xr/app"
)

// studioRoutes are the design studio: designs with their images and thumbnails, and the instance-wide design store.
func (s *Server) studioRoutes() []Route {
	return []Route{
		{M: "GET", P: "/studio/designs", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/designs", Access: Staff, Perms: []app.Perm{app.PermStudioEdit}},
		{M: "POST", P: "/studio/designs/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermStudioDelete}},
		{M: "DELETE", P: "/studio/designs/{id}", Access: Staff, Perms: []app.Perm{app.PermStudioDelete}},
		{M: "GET", P: "/studio/designs/{id}", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "PATCH", P: "/studio/designs/{id}", Access: Staff, Perms: []app.Perm{app.PermStudioEdit}},
		{M: "GET", P: "/studio/designs/{id}/thumbnail", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "GET", P: "/studio/store", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/store", Access: Staff, Perms: []app.Perm{app.PermStudioPublish}},
		{M: "GET", P: "/studio/store/{id}", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "GET", P: "/studio/store/{id}/comments", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/store/{id}/comments", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/store/{id}/import", Access: Staff, Perms: []app.Perm{app.PermStudioEdit}},
		{M: "GET", P: "/studio/store/{id}/reviews", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/store/{id}/reviews", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "POST", P: "/studio/store/{id}/star", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "DELETE", P: "/studio/store/{id}/star", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
		{M: "GET", P: "/studio/store/{id}/thumbnail", Access: Staff, Perms: []app.Perm{app.PermStudioIndex}},
	}
}
