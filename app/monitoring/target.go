package monitoring

import (
	"context"

	"xr/app"
)

// VisibleDevice finds a device added by staff (kind "device", by its id)
// among those the caller sees, with the same visibility rule as the device
// rows (404 otherwise, another tenant's or another subtree's alike). It
// checks no permission: the caller's own area does (the device gateway
// reaches devices under prm_nas_devices_remote).
func VisibleDevice(ctx context.Context, q app.Querier, act *app.Actor, id int64) (*Device, error) {
	d, err := resolve(ctx, q, act, KindDevice, id)
	if err != nil {
		return nil, err
	}
	return &d, nil
}
