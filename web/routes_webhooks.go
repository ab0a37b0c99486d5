// Code first generated from the spec tables; maintained by hand since.

package web

func (s *Server) webhooksRoutes() []Route {
	return []Route{
		// Webhooks group
		{M: "GET", P: "/admin/webhooks/deliveries", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "POST", P: "/admin/webhooks/deliveries/{id}/replay", Access: Staff, Perms: []string{"prm_notifications_manage"}, Buckets: []string{"t_egress"}},
		{M: "GET", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "POST", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "POST", P: "/admin/webhooks/endpoints/bulk-delete", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "DELETE", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "PATCH", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []string{"prm_notifications_manage"}},
		{M: "POST", P: "/admin/webhooks/endpoints/{id}/test", Access: Staff, Perms: []string{"prm_notifications_manage"}, Buckets: []string{"t_egress"}},
		{M: "GET", P: "/admin/webhooks/event-catalog", Access: Staff, Perms: []string{"prm_notifications_manage"}},
	}
}
