package cli

import "xr/app/webhooks"

// The webhook dispatcher runs beside the server: it turns the event outbox
// into deliveries (which the job runner sends).
func init() {
	backgroundServices = append(backgroundServices, webhooks.Start)
}
