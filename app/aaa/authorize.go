package aaa

import (
	"context"
	"math"
	"net/netip"
	"strconv"
	"strings"

	"xr/app"
)

// Answer is the decision about a username, before radiusd checks the
// password against Password.
type Answer struct {
	Found           bool
	Password        string
	Refusal         string // "" = accept
	ReplyMessage    string
	SessionTimeout  uint32
	InterimInterval uint32
	RateDownKbps    int64
	RateUpKbps      int64
	FramedIP        netip.Addr
	FramedPool      string
	Class           []byte
}

// Refusal reasons and their Reply-Message texts.
var replyMessages = map[string]string{
	"disabled":         "Your account is suspended.",
	"deleted":          "Your account does not exist.",
	"expired":          "Your subscription has expired.",
	"not_activated":    "Your subscription is not active yet.",
	"quota_exhausted":  "Your data quota is used up.",
	"time_exhausted":   "Your time quota is used up.",
	"mac_not_allowed":  "This device is not allowed on your account.",
	"simultaneous_use": "Your account is already connected from another device.",
	"plan_disabled":    "Your plan is not available.",
	"tenant_locked":    "Service is suspended for this provider.",
}

func refuse(pw, reason string) Answer {
	return Answer{Found: true, Password: pw, Refusal: reason, ReplyMessage: replyMessages[reason]}
}

// Authorize decides from memory; no query per packet. The order of checks
// is fixed: enabled, deleted, expiry (or the plan's expired pool), quota
// (or the plan's FUP rate), MAC lock, simultaneous use.
func (s *Service) Authorize(ctx context.Context, nas *NAS, username, mac string) (Answer, error) {
	ti, err := s.tenant(ctx, nas.TenantSlug)
	if err != nil {
		return Answer{}, err
	}
	ti.mu.RLock()
	r := ti.users[strings.ToLower(username)]
	if r == nil {
		ti.mu.RUnlock()
		if s.Vouchers != nil {
			if a, ok := s.Vouchers(ctx, ti.t, username); ok {
				if a.InterimInterval == 0 {
					a.InterimInterval = ti.interim
				}
				return *a, nil
			}
		}
		return Answer{}, nil
	}
	defer ti.mu.RUnlock()
	// A blocked or expired tenant gets no service; being over the subscriber
	// cap locks only the admin surface.
	if info, ok := s.app.TenantBySlug(ti.slug); ok {
		if lic := (&app.Tenant{TenantInfo: info}).License(0); lic.Status == "blocked" || lic.Status == "expired" {
			return refuse(r.password, "tenant_locked"), nil
		}
	}
	if r.deleted {
		return refuse(r.password, "deleted"), nil
	}
	if !r.enabled {
		return refuse(r.password, "disabled"), nil
	}
	p := ti.plans[r.profileID]
	now := app.Now()
	a := Answer{Found: true, Password: r.password, InterimInterval: ti.interim}
	if p != nil {
		if !p.enabled {
			return refuse(r.password, "plan_disabled"), nil
		}
		a.RateDownKbps, a.RateUpKbps = p.rateDown, p.rateUp
	}
	switch {
	case r.expiration.IsZero():
		if p == nil || p.expiredPool == "" {
			return refuse(r.password, "not_activated"), nil
		}
		a.FramedPool, a.RateDownKbps, a.RateUpKbps = p.expiredPool, 0, 0
	case !r.expiration.After(now):
		if p == nil || p.expiredPool == "" {
			return refuse(r.password, "expired"), nil
		}
		// Expired but the plan parks such subscribers in a pool (a captive
		// page to renew from) instead of refusing them.
		a.FramedPool, a.RateDownKbps, a.RateUpKbps = p.expiredPool, 0, 0
	default:
		a.SessionTimeout = clampSeconds(r.expiration.Sub(now).Seconds())
	}
	if r.bytesLimit > 0 && r.usedBytes >= r.bytesLimit {
		if p == nil || (p.fupDown == 0 && p.fupUp == 0) {
			return refuse(r.password, "quota_exhausted"), nil
		}
		a.RateDownKbps, a.RateUpKbps = p.fupDown, p.fupUp
	}
	if r.secondsLimit > 0 {
		left := r.secondsLimit - r.usedSecs
		if left <= 0 {
			return refuse(r.password, "time_exhausted"), nil
		}
		if a.SessionTimeout == 0 || uint32(left) < a.SessionTimeout {
			a.SessionTimeout = uint32(min(left, math.MaxUint32))
		}
	}
	if r.macLock && !r.macs[normMAC(mac)] {
		return refuse(r.password, "mac_not_allowed"), nil
	}
	limit := 1
	if p != nil {
		limit = p.simultaneousUse
	}
	if limit > 0 && len(r.live) >= limit {
		return refuse(r.password, "simultaneous_use"), nil
	}
	if r.staticIP != "" {
		if ip, err := netip.ParseAddr(r.staticIP); err == nil {
			a.FramedIP = ip
		}
	}
	a.Class = []byte("xr:" + ti.slug + ":" + strconv.FormatInt(r.id, 10))
	return a, nil
}

func clampSeconds(f float64) uint32 {
	if f <= 0 {
		return 1
	}
	if f > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(f)
}
