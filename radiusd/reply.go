package radiusd

import (
	"strconv"
	"strings"
)

// Vendor dictionaries used for rate limits (values as in layeh.com/radius
// vendors/mikrotik and vendors/wispr, and the Cisco dictionary).
const (
	vendorMikrotik       = 14988
	mikrotikRateLimit    = 8
	vendorWISPr          = 14122
	wisprBandwidthMaxUp  = 7
	wisprBandwidthMaxDwn = 8
	vendorCisco          = 9
	ciscoAVPair          = 1
)

// addRateLimit writes the plan's rate limit in the NAS's dialect. The same
// attributes go into Access-Accept and into a CoA-Request (ChangeRate).
// "Up" is the subscriber's upload (NAS receive), "down" its download.
//
//   - mikrotik: Mikrotik-Rate-Limit (14988/8) = "<up>k/<down>k", MikroTik's
//     rx/tx order seen from the router; 0 means unlimited in that direction.
//   - cisco: two Cisco-AVPair (9/1) CAR lines applied to the virtual access
//     interface, in bits/s with a 1.5 s normal and 3 s excess burst:
//     "lcp:interface-config#1=rate-limit input <up*1000> <nb> <eb> conform-action transmit exceed-action drop"
//     "lcp:interface-config#2=rate-limit output <down*1000> <nb> <eb> conform-action transmit exceed-action drop"
//   - anything else (generic): WISPr-Bandwidth-Max-Up (14122/7) and
//     WISPr-Bandwidth-Max-Down (14122/8) in bits/s, understood by most
//     hotspot gateways (CoovaChilli, pfSense, UniFi, Aruba, ...).
//
// Nothing is written when both rates are 0.
func addRateLimit(w *packetWriter, nasType string, downKbps, upKbps int64) {
	if downKbps <= 0 && upKbps <= 0 {
		return
	}
	switch strings.ToLower(nasType) {
	case NASTypeMikrotik:
		var buf [48]byte
		b := strconv.AppendInt(buf[:0], max(upKbps, 0), 10)
		b = append(b, 'k', '/')
		b = strconv.AppendInt(b, max(downKbps, 0), 10)
		b = append(b, 'k')
		w.addVendor(vendorMikrotik, mikrotikRateLimit, b)
	case NASTypeCisco:
		if upKbps > 0 {
			w.addVendorString(vendorCisco, ciscoAVPair, ciscoCAR("lcp:interface-config#1=rate-limit input ", upKbps))
		}
		if downKbps > 0 {
			w.addVendorString(vendorCisco, ciscoAVPair, ciscoCAR("lcp:interface-config#2=rate-limit output ", downKbps))
		}
	default:
		if upKbps > 0 {
			w.addVendorUint32(vendorWISPr, wisprBandwidthMaxUp, clampUint32(upKbps*1000))
		}
		if downKbps > 0 {
			w.addVendorUint32(vendorWISPr, wisprBandwidthMaxDwn, clampUint32(downKbps*1000))
		}
	}
}

// ciscoCAR formats one Cisco committed-access-rate command. Bursts follow
// Cisco's guidance (normal = 1.5 s of traffic in bytes, excess = 2x normal),
// floored at the 8000-octet minimum IOS accepts.
func ciscoCAR(prefix string, kbps int64) string {
	bps := kbps * 1000
	normal := max(bps/8*3/2, 8000)
	return prefix + strconv.FormatInt(bps, 10) + " " + strconv.FormatInt(normal, 10) + " " +
		strconv.FormatInt(2*normal, 10) + " conform-action transmit exceed-action drop"
}

// Default Reply-Message texts for refusals whose backend left ReplyMessage
// empty. The credentials text is deliberately the same for unknown users
// and wrong passwords so that usernames do not leak.
const msgBadCredentials = "invalid username or password"

var defaultReplyMessages = map[string]string{
	"disabled":          "account disabled",
	"deleted":           msgBadCredentials,
	"expired":           "account expired",
	"quota_exhausted":   "quota exhausted",
	"mac_not_allowed":   "device not allowed for this account",
	"simultaneous_use":  "too many simultaneous sessions",
	"card_revoked":      "card revoked",
	"card_expired":      "card expired",
	"unsupported_auth":  "authentication method not supported",
	"bad_request":       "malformed request",
	"license_exhausted": "service unavailable",
	// A password imported hashed verifies by PAP only (legacyhash.go).
	ReasonPasswordReset: "password reset required: use PAP or ask for a new password",
	// EAP's own refusals (eap_session.go).
	ReasonEAPTLSFailed:         "secure connection failed: check the server certificate and the device's TLS settings",
	ReasonEAPMethodUnsupported: "authentication method not supported: use PEAP, TTLS or EAP-MSCHAPv2",
	ReasonEAPProtocol:          "authentication failed: unexpected message",
	ReasonEAPSessionUnknown:    "authentication timed out: try again",
}

func replyMessageFor(reason, msg string) string {
	if msg != "" {
		return msg
	}
	if m, ok := defaultReplyMessages[reason]; ok {
		return m
	}
	return "access denied"
}

// msCHAPErrorCode maps a refusal to the Windows error number reported in
// MS-CHAP-Error (RFC 2759 section 6): 647 account disabled, 691 otherwise
// (authentication failure; it also covers expiry so that clients do not
// start a password-change dialogue that 648 would trigger).
func msCHAPErrorCode(reason string) int {
	switch reason {
	case "disabled", "card_revoked":
		return 647
	}
	return 691
}
