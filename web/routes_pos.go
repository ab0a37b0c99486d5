package web

import "xr/app"

// posRoutes are the point of sale: shifts, till sales, voids, receipts.
func (s *Server) posRoutes() []Route {
	return []Route{
		{M: "GET", P: "/pos/products", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "GET", P: "/pos/sales", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "POST", P: "/pos/sales", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "GET", P: "/pos/sales/{id}/print-job", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "POST", P: "/pos/sales/{id}/printed", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "POST", P: "/pos/sales/{id}/void", Access: Staff, Perms: []app.Perm{app.PermPosSell, app.PermPosVoid}},
		{M: "GET", P: "/pos/shifts", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "POST", P: "/pos/shifts", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "GET", P: "/pos/shifts/current", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "POST", P: "/pos/shifts/{id}/close", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
		{M: "GET", P: "/pos/shifts/{id}/report", Access: Staff, Perms: []app.Perm{app.PermPosSell}},
	}
}
