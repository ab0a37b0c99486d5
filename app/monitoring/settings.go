package monitoring

import (
	"context"
	"database/sql"
	"net/netip"
	"net/url"
	"strings"
	"unicode/utf8"

	"xr/app"
	"xr/app/probes"
)

// Settings are the tenant's monitoring settings: the network ranges its
// devices may be probed in (besides its NAS, which always may). Empty
// means the default: private (RFC 1918) and carrier-grade NAT space.
// Loopback, link-local and public addresses are probed only once declared
// here — the SSRF rule of every probe (ping, SNMP, live traffic, poller).
//
// The map's tiles are loaded by the staff's browser from TileURL (a
// template with {z}, {x}, {y} and optionally {s}); empty shows the network
// on a blank background, for boxes without Internet access.
type Settings struct {
	NetworkRanges []string `json:"network_ranges"`
	Defaults      []string `json:"default_ranges"` // read-only: what empty means
	TileURL       string   `json:"tile_url"`
	Attribution   string   `json:"attribution"`
}

// SettingsInput is PUT /admin/monitoring/settings; an absent field keeps
// the stored value.
type SettingsInput struct {
	NetworkRanges *[]string `json:"network_ranges"`
	TileURL       *string   `json:"tile_url"`
	Attribution   *string   `json:"attribution"`
}

// MaxNetworkRanges bounds the declared ranges.
const MaxNetworkRanges = 100

// GetSettings answers GET /admin/monitoring/settings.
func GetSettings(ctx context.Context, act *app.Actor) (*Settings, error) {
	if err := act.Require(PermMonitoringView); err != nil {
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
	if err := act.Require(PermMonitoringManage); err != nil {
		return nil, err
	}
	var ranges []string
	if in.NetworkRanges != nil {
		ranges = *in.NetworkRanges
	}
	if len(ranges) > MaxNetworkRanges {
		return nil, app.ErrValidation("out_of_range", "network_ranges").With("max", MaxNetworkRanges)
	}
	clean := make([]string, 0, len(ranges))
	for i, r := range ranges {
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
	if in.TileURL != nil {
		*in.TileURL = strings.TrimSpace(*in.TileURL)
		if _, err := TileSource(*in.TileURL); err != nil {
			return nil, err
		}
	}
	if in.Attribution != nil {
		*in.Attribution = strings.TrimSpace(*in.Attribution)
		if utf8.RuneCountInString(*in.Attribution) > 200 {
			return nil, app.ErrValidation("too_long", "attribution").With("max", 200)
		}
	}
	var out *Settings
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if in.NetworkRanges != nil {
			if err := app.PutSetting(ctx, tx, probes.SettingMonitoringRanges.Key, strings.Join(clean, ",")); err != nil {
				return err
			}
		}
		if in.TileURL != nil {
			if err := app.PutSetting(ctx, tx, SettingMapTileURL.Key, *in.TileURL); err != nil {
				return err
			}
		}
		if in.Attribution != nil {
			if err := app.PutSetting(ctx, tx, SettingMapAttribution.Key, *in.Attribution); err != nil {
				return err
			}
		}
		var err error
		out, err = readSettings(ctx, tx)
		return err
	})
	return out, err
}

func readSettings(ctx context.Context, q app.Querier) (*Settings, error) {
	raw, err := probes.SettingMonitoringRanges.Get(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &Settings{NetworkRanges: []string{}, Defaults: strings.Split(probes.DefaultRanges, ",")}
	if out.TileURL, err = SettingMapTileURL.Get(ctx, q); err != nil {
		return nil, err
	}
	if out.Attribution, err = SettingMapAttribution.Get(ctx, q); err != nil {
		return nil, err
	}
	for _, r := range strings.Split(raw, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out.NetworkRanges = append(out.NetworkRanges, r)
		}
	}
	return out, nil
}

// TileSource checks a tile URL template and answers the origin the
// console's map page must allow images from (its CSP img-src): an http(s)
// URL with {z}, {x} and {y}, and {s} only as the first label of the host
// (then any subdomain is allowed). Empty is no base map (no source). A bad
// template is 400 invalid_tile_url.
func TileSource(tpl string) (string, error) {
	if tpl == "" {
		return "", nil
	}
	bad := app.ErrValidation("invalid_tile_url", "tile_url")
	if len(tpl) > 500 || !strings.Contains(tpl, "{z}") || !strings.Contains(tpl, "{x}") || !strings.Contains(tpl, "{y}") {
		return "", bad
	}
	u, err := url.Parse(strings.NewReplacer("{z}", "1", "{x}", "1", "{y}", "1", "{r}", "", "{s}", "s0").Replace(tpl))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil || u.Host == "" || u.RawQuery != "" && strings.ContainsAny(u.RawQuery, "'; ") {
		return "", bad
	}
	host := u.Host
	if strings.Contains(host, "s0") {
		if !strings.HasPrefix(host, "s0.") || strings.Count(host, "s0") != 1 {
			return "", bad
		}
		host = "*." + strings.TrimPrefix(host, "s0.")
	}
	for _, r := range host {
		if !(r == '.' || r == '-' || r == ':' || r == '*' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", bad
		}
	}
	return u.Scheme + "://" + host, nil
}

// The tenant settings the area reads, declared once and typed; the
// Module lists them (settingDecls), which puts them in the App's registry.
var (
	SettingMapTileURL     = app.StringSetting{Key: "monitoring_map_tile_url", Default: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", Description: "map: tile URL template ({z}/{x}/{y}, optional {s}) the console's map loads in the staff's browser (empty: no base map)"}
	SettingMapAttribution = app.StringSetting{Key: "monitoring_map_attribution", Default: "© OpenStreetMap contributors", Description: "map: attribution shown with the tiles"}
)

var settingDecls = []app.Setting{probes.SettingMonitoringRanges, SettingMapTileURL, SettingMapAttribution}
