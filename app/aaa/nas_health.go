package aaa

import (
	"context"
	"fmt"
	"strings"
	"time"

	"xr/app"
)

// WireHealth is what the wire layer observed of one NAS since it started
// serving. Zero times mean "never seen".
type WireHealth struct {
	LastAccessRequest time.Time
	// SendsMessageAuthenticator is whether the last Access-Request carried
	// a Message-Authenticator; nil before the first one.
	SendsMessageAuthenticator *bool
	LastAccounting            time.Time
	// ClockSkew is server time minus the NAS's Event-Timestamp (less
	// Acct-Delay-Time) of the last accounting packet that carried one, in
	// seconds; nil when none did.
	ClockSkew *int64
	// LastCoA is when the last Disconnect/CoA exchange with the NAS ended,
	// LastCoAOutcome how (ok, nak, unreachable, error).
	LastCoA        time.Time
	LastCoAOutcome string
	// BadAuthenticatorLastHour counts packets from the NAS dropped for a
	// wrong Request Authenticator or Message-Authenticator (usually a
	// wrong shared secret) in the last hour.
	BadAuthenticatorLastHour uint64
}

// WireStatus is what a serving wire layer tells the data side: the UDP
// ports it listens on and a view of its per-NAS counters.
type WireStatus struct {
	AuthPort, AcctPort int
	RadSecPort         int // 0: no RadSec listener
	// Health returns the counters of one NAS of a tenant.
	Health func(slug string, nasID int64) WireHealth
}

// SetStandbyAddress records the standby server's address as NASes reach
// it (xr serve --standby-address): the setup scripts list it as the
// second RADIUS server. "" removes it.
func (s *Service) SetStandbyAddress(addr string) error {
	if addr = strings.TrimSpace(addr); addr != "" {
		if _, _, ok := parseServerAddress(addr); !ok {
			return fmt.Errorf("standby address %q: want an IP address or a host name", addr)
		}
	}
	s.standby.Store(&addr)
	return nil
}

// StandbyAddress is the standby's address, "" without one.
func (s *Service) StandbyAddress() string {
	if s == nil {
		return ""
	}
	if p := s.standby.Load(); p != nil {
		return *p
	}
	return ""
}

// SetWire records the serving wire layer (radiusd calls it when a server
// starts serving this service).
func (s *Service) SetWire(w *WireStatus) { s.wire.Store(w) }

// Wire returns what the serving wire layer reported; nil when none serves
// (or s is nil).
func (s *Service) Wire() *WireStatus {
	if s == nil {
		return nil
	}
	return s.wire.Load()
}

// NASHealth is the answer of GET /admin/nas/{id}/health. The counters live
// in memory: they start empty when xr starts.
type NASHealth struct {
	NASID int64 `json:"nas_id"`
	// RadiusRunning is false when this process serves no RADIUS (every
	// other field is then empty).
	RadiusRunning       bool     `json:"radius_running"`
	LastAccessRequestAt app.Time `json:"last_access_request_at"`
	LastAccountingAt    app.Time `json:"last_accounting_at"`
	LastCoAAt           app.Time `json:"last_coa_at"`
	// LastCoAOutcome is ok, nak, unreachable or error; null before the
	// first Disconnect/CoA.
	LastCoAOutcome *string `json:"last_coa_outcome"`
	// SendsMessageAuthenticator: whether the last Access-Request carried
	// one; null before the first Access-Request.
	SendsMessageAuthenticator   *bool `json:"sends_message_authenticator"`
	RequireMessageAuthenticator bool  `json:"require_message_authenticator"`
	// ClockSkewSeconds is server time − Event-Timestamp (corrected by
	// Acct-Delay-Time) of the last accounting packet that carried one:
	// positive when the NAS clock is behind. Null when none did.
	ClockSkewSeconds *int64 `json:"clock_skew_seconds"`
	// BadAuthenticatorDropsLastHour counts packets dropped for a bad
	// authenticator (a wrong secret, or forgery) in the last hour.
	BadAuthenticatorDropsLastHour uint64 `json:"bad_authenticator_drops_last_hour"`
}

// GetNASHealth reads one NAS of the caller's tenant (404 when missing) and
// what the wire layer saw of it. svc may be nil (no RADIUS in this process).
func GetNASHealth(ctx context.Context, svc *Service, act *app.Actor, id int64) (*NASHealth, error) {
	n, err := GetNAS(ctx, act, id)
	if err != nil {
		return nil, err
	}
	out := &NASHealth{NASID: n.ID, RequireMessageAuthenticator: n.RequireMessageAuthenticator}
	w := svc.Wire()
	if w == nil || w.Health == nil {
		return out, nil
	}
	out.RadiusRunning = true
	h := w.Health(act.Tenant.Slug, n.ID)
	out.LastAccessRequestAt = app.T(h.LastAccessRequest)
	out.LastAccountingAt = app.T(h.LastAccounting)
	out.LastCoAAt = app.T(h.LastCoA)
	if h.LastCoAOutcome != "" {
		o := h.LastCoAOutcome
		out.LastCoAOutcome = &o
	}
	out.SendsMessageAuthenticator = h.SendsMessageAuthenticator
	out.ClockSkewSeconds = h.ClockSkew
	out.BadAuthenticatorDropsLastHour = h.BadAuthenticatorLastHour
	return out, nil
}
