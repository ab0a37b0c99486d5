// Package radiusd is xr's RADIUS authentication and accounting server (RFC 2865,
// 2866, 2869, 3579, 5080) and its RFC 5176 Disconnect/CoA client.
//
// The package knows nothing about the database: the app layer implements the
// small interfaces in this file (Directory, Authorizer, Accounter) and radiusd
// does everything that is about the wire: validation, authenticators,
// password checks, duplicate detection, batching and metrics.
package radiusd

import (
	"context"
	"net/netip"
	"time"
)

// NAS types known to the reply builder; anything else is treated as generic.
const (
	NASTypeMikrotik = "mikrotik"
	NASTypeCisco    = "cisco"
	NASTypeGeneric  = "generic"
)

// DefaultCoAPort is the RFC 5176 port used when NAS.CoAPort is 0.
const DefaultCoAPort = 3799

// NAS is one RADIUS client as known from the instance NAS index.
type NAS struct {
	TenantSlug                  string
	ID                          int64
	Name                        string
	IP                          netip.Addr
	Secret                      []byte
	Type                        string // "mikrotik", "cisco", "generic"
	CoAPort                     int    // default 3799
	RequireMessageAuthenticator bool
	// RadSec marks the NAS as reached over RadSec: Secret is RadSecSecret,
	// and IP is only what the NAS row says (its packets come from anywhere).
	RadSec bool
}

// Directory resolves a packet's source address to its NAS. Must be fast
// (in-memory): it is called for every datagram by the socket reader.
type Directory interface {
	LookupNAS(ip netip.Addr) (*NAS, bool)
}

// AuthMethod is the password scheme of an Access-Request.
type AuthMethod string

// Supported authentication methods.
const (
	MethodPAP      AuthMethod = "pap"
	MethodCHAP     AuthMethod = "chap"
	MethodMSCHAPv2 AuthMethod = "mschapv2"
)

// AuthRequest is what the backend needs to decide about a username.
type AuthRequest struct {
	NAS              *NAS
	Username         string
	Method           AuthMethod
	CallingStationID string // MAC as sent
	NASPortID        string
	FramedIP         netip.Addr
}

// Authorization is the backend's answer about a username, BEFORE the
// password is checked by radiusd.
type Authorization struct {
	Found bool
	// Password is the cleartext (needed for CHAP/MS-CHAPv2); radiusd verifies
	// it per method, in constant time.
	Password string
	// Refusal is "" to accept; else a stable reason key: disabled, deleted,
	// expired, quota_exhausted, mac_not_allowed, simultaneous_use,
	// card_revoked, card_expired, ...
	Refusal         string
	ReplyMessage    string // human text for Reply-Message on refusal
	SessionTimeout  uint32 // seconds, 0 = none
	InterimInterval uint32 // seconds, 0 = none
	RateDownKbps    int64  // 0 = none
	RateUpKbps      int64  // 0 = none
	FramedIP        netip.Addr
	FramedPool      string
	Class           []byte
}

// Authorizer looks a username up. It is called once per (non-duplicate)
// Access-Request, concurrently from the worker pool; an error drops the
// request unanswered (the NAS retries or fails over) and is counted as
// backend_error.
type Authorizer interface {
	Authorize(ctx context.Context, req *AuthRequest) (Authorization, error)
}

// AcctStatus is the Acct-Status-Type of an accounting record.
type AcctStatus int

// Acct-Status-Type values handled by the server (RFC 2866).
const (
	AcctStart         AcctStatus = 1
	AcctStop          AcctStatus = 2
	AcctInterimUpdate AcctStatus = 3
	AcctAccountingOn  AcctStatus = 7
	AcctAccountingOff AcctStatus = 8
)

func (s AcctStatus) String() string {
	switch s {
	case AcctStart:
		return "start"
	case AcctStop:
		return "stop"
	case AcctInterimUpdate:
		return "interim-update"
	case AcctAccountingOn:
		return "accounting-on"
	case AcctAccountingOff:
		return "accounting-off"
	}
	return "unknown"
}

// AcctRecord is one decoded Accounting-Request.
type AcctRecord struct {
	NAS                         *NAS
	Status                      AcctStatus
	SessionID, Username         string
	InputOctets, OutputOctets   uint64 // gigawords already folded in
	InputPackets, OutputPackets uint64
	SessionTime                 uint32
	FramedIP                    netip.Addr
	FramedIPv6Prefix            netip.Prefix
	CallingStationID, NASPortID string
	TerminateCause              uint32
	DelayTime                   uint32
	EventTime                   time.Time // receive time minus Acct-Delay-Time
}

// Accounter applies a batch durably (one group commit per tenant) and returns
// only after commit. It must be idempotent at record level (the backend
// dedupes by session+status+counters); radiusd need not care. The batch
// may mix tenants and NAS; the slice is reused after the call returns, so
// it must not be retained (the records' strings may be). Calls are serial.
type Accounter interface {
	RecordAccounting(ctx context.Context, recs []AcctRecord) error
}
