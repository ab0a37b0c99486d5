package monitoring

import (
	"context"
	"database/sql"
	"net/netip"
	"strings"

	"xr/app"
	"xr/app/probes"
)

// Settings are the tenant's monitoring settings: the network ranges its
// devices may be probed in (besides its NAS, which always may). Empty
// means the default: private (RFC 1918) and carrier-grade NAT space.
// Loopback, link-local and public addresses are probed only once declared
// here — the SSRF rule of every probe (ping, SNMP, live traffic, poller).
type Settings struct {
	NetworkRanges []string `json:"network_ranges"`
	Defaults      []string `json:"default_ranges"` // read-only: what empty means
}

// SettingsInput is PUT /admin/monitoring/settings.
type SettingsInput struct {
	NetworkRanges []string `json:"network_ranges"`
}

// MaxNetworkRanges bounds the declared ranges.
const MaxNetworkRanges = 100

// GetSettings answers GET /admin/monitoring/settings.
func GetSettings(ctx context.Context, act *app.Actor) (*Settings, error) {
	if err := act.Require(app.PermMonitoringView); err != nil {
		return nil, err
	}
	var out *Settings
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = readSettings(ctx, tx)
		return err
	})
	return out, err
}

// UpdateSettings answers PUT /admin/monitoring/settings: each range is a
// CIDR prefix or a single address (stored as given, masked); a bad one is
// 400 invalid_cidr naming it, and nothing is stored.
func UpdateSettings(ctx context.Context, act *app.Actor, in SettingsInput) (*Settings, error) {
	if err := act.Require(app.PermMonitoringManage); err != nil {
		return nil, err
	}
	if len(in.NetworkRanges) > MaxNetworkRanges {
		return nil, app.ErrValidation("out_of_range", "network_ranges").With("max", MaxNetworkRanges)
	}
	clean := make([]string, 0, len(in.NetworkRanges))
	for i, r := range in.NetworkRanges {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		p, err := netip.ParsePrefix(r)
		if err != nil {
			a, aerr := netip.ParseAddr(r)
			if aerr != nil {
				return nil, app.ErrValidation("invalid_cidr", "network_ranges").With("index", i).With("value", r)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		clean = append(clean, p.Masked().String())
	}
	var out *Settings
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := app.PutSetting(ctx, tx, app.SettingMonitoringRanges.Key, strings.Join(clean, ",")); err != nil {
			return err
		}
		var err error
		out, err = readSettings(ctx, tx)
		return err
	})
	return out, err
}

func readSettings(ctx context.Context, q app.Querier) (*Settings, error) {
	raw, err := app.SettingMonitoringRanges.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &Settings{NetworkRanges: []string{}, Defaults: strings.Split(probes.DefaultRanges, ",")}
	for _, r := range strings.Split(raw, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out.NetworkRanges = append(out.NetworkRanges, r)
		}
	}
	return out, nil
}
