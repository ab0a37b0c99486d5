// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/webhooks"
)

func (s *Server) webhooksRoutes() []Route {
	return []Route{
		// Webhooks group
		{M: "GET", P: "/admin/webhooks/deliveries", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: s.listWebhookDeliveries, Resp: webhooks.Delivery{}, List: true, Summary: "webhook deliveries with their attempts and outcome"},
		{M: "POST", P: "/admin/webhooks/deliveries/{id}/replay", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage}, Buckets: []string{"t_egress"},
			H: idCall(webhooks.ReplayDelivery), Resp: webhooks.Delivery{}, Summary: "send a webhook delivery again"},
		{M: "GET", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: pageCall(webhooks.ListEndpoints), Resp: webhooks.Endpoint{}, List: true, Summary: "webhook endpoints"},
		{M: "POST", P: "/admin/webhooks/endpoints", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H:   bodyCall(webhooks.CreateEndpoint), // 200, not 201, as the spec says
			Req: webhooks.EndpointInput{}, Resp: webhooks.EndpointCreated{},
			Summary: "create a webhook endpoint (answers its signing secret once)"},
		{M: "POST", P: "/admin/webhooks/endpoints/bulk-delete", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: bodyCall(webhooks.BulkDeleteEndpoints), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "delete several webhook endpoints"},
		{M: "DELETE", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: s.deleteWebhookEndpoint, Resp: webhooks.Deleted{}, Summary: "delete a webhook endpoint"},
		{M: "PATCH", P: "/admin/webhooks/endpoints/{id}", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: idBodyCall(webhooks.UpdateEndpoint), Req: webhooks.EndpointInput{}, Resp: webhooks.Endpoint{}, Summary: "update a webhook endpoint"},
		{M: "POST", P: "/admin/webhooks/endpoints/{id}/test", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage}, Buckets: []string{"t_egress"},
			H: idCall(webhooks.TestEndpoint), Resp: webhooks.TestResult{}, Summary: "send a test event to a webhook endpoint"},
		// Not in the spec table: rotation of the signing secret (README, Webhooks).
		{M: "POST", P: "/admin/webhooks/endpoints/{id}/rotate-secret", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: idBodyCall(webhooks.RotateSecret), Req: webhooks.RotateInput{}, Resp: webhooks.SecretResult{}, Summary: "new signing secret, shown once; the previous one keeps signing for grace_seconds"},
		{M: "GET", P: "/admin/webhooks/event-catalog", Access: Staff, Perms: []app.Perm{webhooks.PermNotificationsManage},
			H: s.eventCatalog, Resp: app.EventType{}, List: true, Summary: "the event keys a webhook endpoint can subscribe to"},
	}
}
