package devgw

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"

	"xr/app"
	"xr/app/egress"
	"xr/app/monitoring"
)

// Kinds of console target: a NAS of app/aaa (nas.id) or a device added to
// monitoring (mon_devices.id, kind device).
const (
	KindNAS    = "nas"
	KindDevice = "device"
)

// Target is the equipment a console reaches.
type Target struct {
	Kind    string `json:"kind"`
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Address string `json:"address"`
}

// permFor is the code a kind needs: prm_nas_remote for a NAS,
// prm_nas_devices_remote for a monitored device.
func permFor(kind string) (app.Perm, error) {
	switch kind {
	case KindNAS:
		return PermNasRemote, nil
	case KindDevice:
		return PermNasDevicesRemote, nil
	}
	return "", app.ErrValidation("invalid_kind", "kind").With("allowed", []string{KindNAS, KindDevice})
}

// requireKind checks the kind is known and the caller holds its code.
func requireKind(act *app.Actor, kind string) error {
	p, err := permFor(kind)
	if err != nil {
		return err
	}
	return act.Require(p)
}

// pathKind is the {kind} of a path: an unknown kind is a missing record.
func pathKind(act *app.Actor, kind string) error {
	if kind != KindNAS && kind != KindDevice {
		if err := act.Require(PermNasRemote, PermNasDevicesRemote); err != nil {
			return err
		}
		return app.ErrNotFound()
	}
	return requireKind(act, kind)
}

// resolveTarget finds the caller's target: a NAS of the tenant (NAS rows
// are tenant-wide) or a monitored device the caller sees (monitoring's own
// visibility rule). Anything else, another tenant's included, is 404.
func resolveTarget(ctx context.Context, q app.Querier, act *app.Actor, kind string, id int64) (*Target, error) {
	switch kind {
	case KindNAS:
		tg := &Target{Kind: kind, ID: id}
		err := q.QueryRowContext(ctx, `SELECT name, ip FROM nas WHERE id = ?`, id).Scan(&tg.Name, &tg.Address)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, app.ErrNotFound()
		}
		return tg, err
	case KindDevice:
		d, err := monitoring.VisibleDevice(ctx, q, act, id)
		if err != nil {
			return nil, err
		}
		return &Target{Kind: kind, ID: id, Name: d.Name, Address: d.Address}, nil
	}
	return nil, app.ErrNotFound()
}

// The egress rule of the gateway is the Device guard (app/egress): a
// console target is a registered NAS or device of the tenant, so private
// and CGNAT space (where routers live) pass; loopback, link-local (a cloud
// metadata endpoint), reserved space and the host's own addresses (its
// own sshd) pass only with --allow-private-egress; unspecified and
// multicast never. It runs at mint time and again in the dialer, on the
// address actually dialled.
func egressRefusal(a *app.App, addr netip.Addr) string {
	return egress.For(a, egress.Device).Refusal(addr)
}

// checkEgress is egressRefusal as the API error (409 target_not_allowed).
func checkEgress(a *app.App, address string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(address)
	if err != nil {
		return addr, app.ErrConflict("target_not_allowed").With("class", "invalid")
	}
	if c := egressRefusal(a, addr); c != "" {
		return addr, app.ErrConflict("target_not_allowed").With("class", c)
	}
	return addr.Unmap(), nil
}

// dialTimeout bounds the TCP connect and the SSH handshake.
var dialTimeout = 10 * time.Second

// dialer connects only to want, after the egress rule.
func dialer(a *app.App, want netip.Addr) *net.Dialer {
	return &net.Dialer{Timeout: dialTimeout, Control: func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || ap.Addr().Unmap() != want || egressRefusal(a, ap.Addr()) != "" {
			return &egress.RefusedError{Addr: address, Class: "not_target"}
		}
		return nil
	}}
}
