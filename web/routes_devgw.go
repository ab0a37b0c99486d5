package web

import (
	"xr/app"
)

// devgwRoutes are the device gateway (SSH to a NAS or monitored device over a WebSocket) and the console sessions it records.
func (s *Server) devgwRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/console-sessions", Access: Staff, Perms: []app.Perm{app.PermNasRemote, app.PermNasDevicesRemote}},
		{M: "DELETE", P: "/admin/console-sessions", Access: Staff, Perms: []app.Perm{app.PermNasRemote, app.PermNasDevicesRemote}},
		{M: "POST", P: "/admin/console-sessions/bulk-close", Access: Staff, Perms: []app.Perm{app.PermNasRemote, app.PermNasDevicesRemote}},
		{M: "DELETE", P: "/admin/console-sessions/{sid}", Access: Staff, Perms: []app.Perm{app.PermNasRemote, app.PermNasDevicesRemote}},
		{M: "CONNECT", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "DELETE", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "GET", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "HEAD", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "OPTIONS", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "PATCH", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "POST", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "PUT", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "QUERY", P: "/admin/devgw/ssh/ws", Access: Public},
		{M: "TRACE", P: "/admin/devgw/ssh/ws", Access: Public},
	}
}
