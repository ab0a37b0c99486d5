package radiusd

import (
	"context"
	"net/netip"
	"strconv"
	"sync/atomic"

	"xr/app/aaa"
)

// AppBackend adapts the app's RADIUS service (xr/app/aaa) to the server's
// Directory, Authorizer and Accounter, and its Disconnect/CoA hooks to a
// CoAClient. It only converts types; every decision is aaa's.
type AppBackend struct {
	Svc *aaa.Service
	CoA *CoAClient
	// metrics is the serving server's (health.go); CoA.Metrics before.
	metrics atomic.Pointer[Metrics]
}

// NewAppBackend wires svc to the wire layer, including quota enforcement
// through coa.
func NewAppBackend(svc *aaa.Service, coa *CoAClient) *AppBackend {
	b := &AppBackend{Svc: svc, CoA: coa}
	if coa.Metrics != nil {
		coa.Metrics.SessionTruth = svc.DisconnectsUnconfirmed
	}
	svc.ReplyAttributes = replyAttributes // the explainer shows what accept/reject write
	svc.Disconnect = func(ctx context.Context, n *aaa.NAS, user, sid string, ip netip.Addr) (string, error) {
		r, err := coa.Disconnect(ctx, wireNAS(n), DisconnectRequest{Username: user, AcctSessionID: sid, FramedIP: ip})
		b.coaDone(n, r.Outcome, err)
		return r.Outcome, err
	}
	svc.ChangeRate = func(ctx context.Context, n *aaa.NAS, user, sid string, down, up int64) (string, error) {
		r, err := coa.ChangeRate(ctx, wireNAS(n), DisconnectRequest{Username: user, AcctSessionID: sid}, down, up)
		b.coaDone(n, r.Outcome, err)
		return r.Outcome, err
	}
	return b
}

// wireNAS converts once per directory entry and caches the result on it.
func wireNAS(n *aaa.NAS) *NAS {
	if w, ok := n.Wire.Load().(*NAS); ok {
		return w
	}
	w := &NAS{TenantSlug: n.TenantSlug, ID: n.ID, Name: n.Name, IP: n.IP, Secret: n.Secret, Type: n.Type,
		CoAPort: n.CoAPort, RequireMessageAuthenticator: n.RequireMessageAuthenticator}
	n.Wire.Store(w)
	return w
}

// wireRadSecNAS is the NAS as its RadSec connection sees it (the secret
// is RFC 6614's), cached like wireNAS.
func wireRadSecNAS(n *aaa.NAS) *NAS {
	if w, ok := n.WireRadSec.Load().(*NAS); ok {
		return w
	}
	w := *wireNAS(n)
	w.Secret, w.RadSec = []byte(RadSecSecret), true
	n.WireRadSec.Store(&w)
	return &w
}

// LookupRadSecNAS implements RadSecDirectory.
func (b *AppBackend) LookupRadSecNAS(fingerprint [32]byte) (*NAS, bool) {
	n, ok := b.Svc.LookupRadSec(fingerprint)
	if !ok {
		return nil, false
	}
	return wireRadSecNAS(n), true
}

// LookupNAS implements Directory.
func (b *AppBackend) LookupNAS(ip netip.Addr) (*NAS, bool) {
	n, ok := b.Svc.LookupNAS(ip)
	if !ok {
		return nil, false
	}
	return wireNAS(n), true
}

// appNAS finds the directory's entry of a wire NAS: by address for UDP,
// by tenant and id for RadSec (its address says nothing).
func (b *AppBackend) appNAS(n *NAS) (*aaa.NAS, bool) {
	if n.RadSec {
		return b.Svc.NASByID(n.TenantSlug, n.ID)
	}
	return b.Svc.LookupNAS(n.IP)
}

// Authorize implements Authorizer.
func (b *AppBackend) Authorize(ctx context.Context, req *AuthRequest) (Authorization, error) {
	n, ok := b.appNAS(req.NAS)
	if !ok {
		return Authorization{}, nil
	}
	a, err := b.Svc.Authorize(ctx, n, req.Username, req.CallingStationID)
	if err != nil {
		return Authorization{}, err
	}
	return Authorization{Found: a.Found, Password: a.Password, Refusal: a.Refusal, ReplyMessage: a.ReplyMessage,
		SessionTimeout: a.SessionTimeout, InterimInterval: a.InterimInterval, RateDownKbps: a.RateDownKbps, RateUpKbps: a.RateUpKbps,
		FramedIP: a.FramedIP, FramedPool: a.FramedPool, Class: a.Class}, nil
}

// RecordAccounting implements Accounter.
func (b *AppBackend) RecordAccounting(ctx context.Context, recs []AcctRecord) error {
	evs := make([]aaa.AcctEvent, 0, len(recs))
	for i := range recs {
		r := &recs[i]
		n, ok := b.appNAS(r.NAS)
		if !ok {
			continue
		}
		evs = append(evs, aaa.AcctEvent{NAS: n, Status: int(r.Status), SessionID: r.SessionID, Username: r.Username,
			InputOctets: r.InputOctets, OutputOctets: r.OutputOctets, InputPackets: r.InputPackets, OutputPackets: r.OutputPackets,
			SessionTime: r.SessionTime, FramedIP: r.FramedIP, FramedIPv6Prefix: r.FramedIPv6Prefix, CallingStationID: r.CallingStationID, NASPortID: r.NASPortID,
			TerminateCause: terminateCause(r.TerminateCause), EventTime: r.EventTime})
	}
	return b.Svc.RecordAccounting(ctx, evs)
}

// terminateCause names an Acct-Terminate-Cause (RFC 2866 §5.10, RFC 3580).
func terminateCause(v uint32) string {
	names := [...]string{"", "User-Request", "Lost-Carrier", "Lost-Service", "Idle-Timeout", "Session-Timeout", "Admin-Reset",
		"Admin-Reboot", "Port-Error", "NAS-Error", "NAS-Request", "NAS-Reboot", "Port-Unneeded", "Port-Preempted",
		"Port-Suspended", "Service-Unavailable", "Callback", "User-Error", "Host-Request", "Supplicant-Restart",
		"Reauthentication-Failure", "Port-Reinitialized", "Port-Administratively-Disabled"}
	if int(v) < len(names) {
		return names[v]
	}
	return "Cause-" + strconv.FormatUint(uint64(v), 10)
}
