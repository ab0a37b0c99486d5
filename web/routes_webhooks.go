// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/webhooks"
)

func (s *Server) webhooksRoutes() []Route {
	return []Route{
		// Webhooks group
		{M: "GET", P: "/admin/webhooks/deliveries", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.listWebhookDeliveries, Resp: webhooks.Delivery{}, List: true},
		{M: "POST", P: "/admin/webhooks/deliveries/{id}/replay", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage}, Buckets: []string{"t_egress"},
			H: s.replayWebhookDelivery, Resp: webhooks.Delivery{}},
		{M: "GET", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.listWebhookEndpoints, Resp: webhooks.Endpoint{}, List: true},
		{M: "POST", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.createWebhookEndpoint, Req: webhooks.EndpointInput{}, Resp: webhooks.EndpointCreated{}},
		{M: "POST", P: "/admin/webhooks/endpoints/bulk-delete", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.bulkDeleteWebhookEndpoints, Req: app.BulkIDs{}, Resp: app.BulkResult{}},
		{M: "DELETE", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.deleteWebhookEndpoint, Resp: webhooks.Deleted{}},
		{M: "PATCH", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.updateWebhookEndpoint, Req: webhooks.EndpointInput{}, Resp: webhooks.Endpoint{}},
		{M: "POST", P: "/admin/webhooks/endpoints/{id}/test", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage}, Buckets: []string{"t_egress"},
			H: s.testWebhookEndpoint, Resp: webhooks.TestResult{}},
		// Not in the spec table: rotation of the signing secret (README, Webhooks).
		{M: "POST", P: "/admin/webhooks/endpoints/{id}/rotate-secret", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.rotateWebhookSecret, Req: webhooks.RotateInput{}, Resp: webhooks.SecretResult{}, Summary: "new signing secret, shown once; the previous one keeps signing for grace_seconds"},
		{M: "GET", P: "/admin/webhooks/event-catalog", Access: Staff, Perms: []app.Perm{app.PermNotificationsManage},
			H: s.eventCatalog, Resp: app.EventType{}, List: true},
	}
}
