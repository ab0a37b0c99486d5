package portalentry

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"

	"xr/app"
	"xr/app/portal"
)

// Tunnel identification (portal feature "tunnel"): a request from inside
// the ISP's network carries the subscriber's framed IP as its source
// address. When that address lies in the tenant's configured ranges
// (setting portal_tunnel_ranges) and a live RADIUS session holds it, the
// subscriber is identified and gets a one-time exchange code for a
// one-click login. Anything else — no range configured, an address outside
// them, no live session, a disabled subscriber — answers like an unknown
// subscriber: 404 subscriber_not_identified.

// TunnelIdentity is the answer of POST /portal/tunnel-identify and
// /portal/tunnel-tenant.
type TunnelIdentity struct {
	TenantSlug string `json:"tenant_slug"`
	UserID     int64  `json:"user_id"`
	Username   string `json:"username"`
	ExchangeCode
}

func errNotIdentified() error {
	e := app.ErrNotFound()
	e.Reason = "subscriber_not_identified"
	return e
}

// inRanges reports whether ip lies in one of the comma-separated CIDRs.
func inRanges(ranges string, ip netip.Addr) bool {
	for _, r := range splitList(ranges) {
		p, err := netip.ParsePrefix(r)
		if err == nil && p.Contains(ip) {
			return true
		}
	}
	return false
}

// identify finds the subscriber whose live session holds ip on t and
// issues its exchange code; errNotIdentified otherwise.
func identify(ctx context.Context, t *app.Tenant, ip netip.Addr) (*TunnelIdentity, error) {
	ranges, err := SettingTunnelRanges.Get(ctx, t.DB.R)
	if err != nil {
		return nil, err
	}
	if !inRanges(ranges, ip) {
		return nil, errNotIdentified()
	}
	out := &TunnelIdentity{TenantSlug: t.Slug}
	err = t.Write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT u.id, u.username FROM radius_sessions s JOIN users u ON u.id = s.user_id
			WHERE s.framed_ip = ? AND s.stop_time IS NULL AND s.kind = 'subscriber' AND u.enabled = 1 AND u.deleted_at IS NULL
			ORDER BY s.update_time DESC, s.id DESC LIMIT 1`, ip.String()).Scan(&out.UserID, &out.Username)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotIdentified()
		}
		if err != nil {
			return err
		}
		code, err := newExchangeCode(ctx, tx, t, out.UserID, 0, "tunnel")
		if err != nil {
			return err
		}
		out.ExchangeCode = *code
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func parseClientIP(s string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return ip.Unmap().WithZone(""), true
}

// IdentifyTunnel is POST /portal/tunnel-identify on a tenant host: 403
// feature_disabled when the tenant has tunnel login off.
func IdentifyTunnel(ctx context.Context, t *app.Tenant, clientIP string) (*TunnelIdentity, error) {
	if err := requireTenantFeature(ctx, t, portal.FeatureTunnel); err != nil {
		return nil, err
	}
	ip, ok := parseClientIP(clientIP)
	if !ok {
		return nil, errNotIdentified()
	}
	return identify(ctx, t, ip)
}

// IdentifyTunnelTenant is POST /portal/tunnel-tenant: on a tenant host the
// same as IdentifyTunnel; on the apex host (t nil) it looks through every
// tenant that has the portal and tunnel login on and answers the first whose
// ranges and live sessions identify the client, naming the tenant. A tenant
// with the feature off is skipped, so it answers like an unknown subscriber.
func IdentifyTunnelTenant(ctx context.Context, a *app.App, t *app.Tenant, clientIP string) (*TunnelIdentity, error) {
	if t != nil {
		return IdentifyTunnel(ctx, t, clientIP)
	}
	ip, ok := parseClientIP(clientIP)
	if !ok {
		return nil, errNotIdentified()
	}
	for _, slug := range a.TenantSlugs() {
		out, err := identifyIn(ctx, a, slug, ip)
		if err == nil {
			return out, nil
		}
		var ae *app.Error
		if !errors.As(err, &ae) {
			return nil, err
		}
	}
	return nil, errNotIdentified()
}

func identifyIn(ctx context.Context, a *app.App, slug string, ip netip.Addr) (*TunnelIdentity, error) {
	t, release, err := a.Acquire(slug)
	if err != nil {
		return nil, errNotIdentified()
	}
	defer release()
	if err := portal.RequireFeature(ctx, t, portal.FeatureTunnel); err != nil {
		return nil, err
	}
	return identify(ctx, t, ip)
}
