package radiusd

import (
	"context"
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"xr/app/aaa"
)

// Decisions: what radiusd tells the backend about each Access-Request it
// answered (the auth log), the stale-session replacement it asks for, and
// the attributes of its answers written for a reader (the explainer).

// Results and reasons of a decision as the auth log records them. The
// Access-Reject says bad_credentials for both an unknown user and a wrong
// password (usernames must not leak); the log tells them apart.
const (
	resultAccept  = "accept"
	resultReject  = "reject"
	resultDropped = "dropped"

	ReasonUnknownUser  = aaa.ReasonUnknownUser
	ReasonBadPassword  = aaa.ReasonBadPassword
	reasonBackendError = "backend_error"
)

// Decision is one Access-Request outcome.
type Decision struct {
	NAS              *NAS
	Username         string
	CallingStationID string
	// Method is pap, chap, mschapv2, or the EAP method with the one
	// inside (eap-peap/mschapv2, eap-ttls/pap, eap-ttls/mschapv2,
	// eap-ttls/eap-mschapv2, eap-mschapv2; eap when none was agreed).
	Method  string
	Result  string // accept, reject, dropped
	Reason  string // "" on accept
	Latency time.Duration
	At      time.Time
}

// DecisionLogger is implemented by an Authorizer that keeps an auth log.
// LogDecision is called on the worker after the answer was sent; it must
// not block.
type DecisionLogger interface {
	LogDecision(d Decision)
}

// StaleReplacer is implemented by an Authorizer that may replace a stale
// session of a subscriber refused for simultaneous use, once the password
// was verified. It returns the decision made afterwards, and false when
// it replaced nothing (the refusal stands).
type StaleReplacer interface {
	ReplaceStale(ctx context.Context, req *AuthRequest) (Authorization, bool, error)
}

func (s *Server) logDecision(pb *packetBuf, req *AuthRequest, result, reason string) {
	dl, ok := s.Authorizer.(DecisionLogger)
	if !ok {
		return
	}
	d := Decision{NAS: pb.nas, Result: result, Reason: reason, Latency: time.Since(pb.recv), At: pb.recv}
	if req != nil {
		d.Username, d.CallingStationID, d.Method = req.Username, req.CallingStationID, string(req.Method)
	}
	dl.LogDecision(d)
}

func (s *Server) replaceStale(req *AuthRequest, az *Authorization) {
	sr, ok := s.Authorizer.(StaleReplacer)
	if !ok {
		return
	}
	next, replaced, err := sr.ReplaceStale(s.ctx, req)
	if err != nil {
		s.warn("stale session replacement failed", "nas", req.NAS.Name, "err", err)
		return
	}
	if replaced && next.Found {
		*az = next
	}
}

// addAcceptAttrs writes the decision's attributes of an Access-Accept for
// a NAS type (everything but the MS-CHAPv2 success attributes and
// Proxy-State, which depend on the request).
func addAcceptAttrs(w *packetWriter, nasType string, az *Authorization) {
	if az.SessionTimeout > 0 {
		w.addUint32(attrSessionTimeout, az.SessionTimeout)
	}
	if az.InterimInterval > 0 {
		w.addUint32(attrInterimInterval, az.InterimInterval)
	}
	if az.FramedIP.Is4() || az.FramedIP.Is4In6() {
		ip := az.FramedIP.Unmap().As4()
		w.add(attrFramedIP, ip[:])
	}
	if az.FramedPool != "" {
		w.addString(attrFramedPool, az.FramedPool)
	}
	w.addSplit(attrClass, az.Class)
	addRateLimit(w, nasType, az.RateDownKbps, az.RateUpKbps)
}

// ReplyAttributes writes the answer radiusd gives a decision for a NAS
// type and method (aaa.AuthMethods), the Access-Accept (reason "") or the
// Access-Reject, with the same code that answers the NAS, and decodes it
// for reading. What depends on the request is left out: Proxy-State, the
// MS-CHAP and EAP success texts, the MS-MPPE keys, User-Name.
func ReplyAttributes(nasType string, az *Authorization, reason, method string) []aaa.Attribute {
	var zero [16]byte
	code := codeAccessAccept
	if reason != "" {
		code = codeAccessReject
	}
	w := newPacket(make([]byte, 0, 512), code, 0, zero[:], true)
	if strings.HasPrefix(method, "eap") {
		if reason == "" {
			w.addEAPMessage(eapFinal(eapSuccess, 0))
		} else {
			w.addEAPMessage(eapFinal(eapFailure, 0))
		}
	}
	if reason == "" {
		addAcceptAttrs(&w, nasType, az)
	} else {
		msg := ""
		switch reason {
		case ReasonUnknownUser, ReasonBadPassword:
			msg = msgBadCredentials
		default:
			msg = replyMessageFor(reason, az.ReplyMessage)
		}
		w.addSplit(attrReplyMessage, []byte(msg))
	}
	return decodeAttrs(w.b[headerLen:])
}

// decodeAttrs names the attributes radiusd writes in its answers.
func decodeAttrs(b []byte) []aaa.Attribute {
	out := []aaa.Attribute{}
	for len(b) >= 2 && int(b[1]) >= 2 && int(b[1]) <= len(b) {
		t, v := b[0], b[2:b[1]]
		b = b[b[1]:]
		a := aaa.Attribute{Type: int(t), Value: string(v)}
		switch t {
		case attrMessageAuth:
			a.Name, a.Value = "Message-Authenticator", "(HMAC-MD5 of the packet)"
		case attrSessionTimeout:
			a.Name, a.Value = "Session-Timeout", uintValue(v)
		case attrInterimInterval:
			a.Name, a.Value = "Acct-Interim-Interval", uintValue(v)
		case attrFramedIP:
			a.Name = "Framed-IP-Address"
			if ip, ok := netip.AddrFromSlice(v); ok {
				a.Value = ip.String()
			}
		case attrFramedPool:
			a.Name = "Framed-Pool"
		case attrClass:
			a.Name = "Class"
		case attrReplyMessage:
			a.Name = "Reply-Message"
		case attrEAPMessage:
			a.Name, a.Value = "EAP-Message", "EAP-Success"
			if len(v) > 0 && v[0] == eapFailure {
				a.Value = "EAP-Failure"
			}
		case attrVendorSpecific:
			a.Name = "Vendor-Specific"
			if len(v) >= 6 && int(v[5]) >= 2 && 4+int(v[5]) <= len(v) {
				a.Vendor, a.VendorType = int(binary.BigEndian.Uint32(v)), int(v[4])
				vv := v[6 : 4+int(v[5])]
				a.Name, a.Value = vendorAttrName(a.Vendor, a.VendorType), string(vv)
				if a.Vendor == vendorWISPr {
					a.Value = uintValue(vv)
				}
			}
		}
		out = append(out, a)
	}
	return out
}

func vendorAttrName(vendor, vtype int) string {
	switch {
	case vendor == vendorMikrotik && vtype == mikrotikRateLimit:
		return "Mikrotik-Rate-Limit"
	case vendor == vendorCisco && vtype == ciscoAVPair:
		return "Cisco-AVPair"
	case vendor == vendorWISPr && vtype == wisprBandwidthMaxUp:
		return "WISPr-Bandwidth-Max-Up"
	case vendor == vendorWISPr && vtype == wisprBandwidthMaxDwn:
		return "WISPr-Bandwidth-Max-Down"
	}
	return "Vendor-Specific"
}

func uintValue(v []byte) string {
	if len(v) != 4 {
		return ""
	}
	return strconv.FormatUint(uint64(binary.BigEndian.Uint32(v)), 10)
}

// The adapter's side: the app's service keeps the auth log, replaces stale
// sessions and shows the answers' attributes in its explainer.

// LogDecision implements DecisionLogger.
func (b *AppBackend) LogDecision(d Decision) {
	n, ok := b.appNAS(d.NAS)
	if !ok {
		return
	}
	b.Svc.LogDecision(aaa.AuthDecision{NAS: n, Username: d.Username, CallingStationID: d.CallingStationID, Method: d.Method,
		Result: d.Result, Reason: d.Reason, Latency: d.Latency, At: d.At})
}

// ReplaceStale implements StaleReplacer.
func (b *AppBackend) ReplaceStale(ctx context.Context, req *AuthRequest) (Authorization, bool, error) {
	n, ok := b.appNAS(req.NAS)
	if !ok {
		return Authorization{}, false, nil
	}
	a, replaced, err := b.Svc.ReplaceStale(ctx, n, req.Username, req.CallingStationID)
	if err != nil || !replaced {
		return Authorization{}, false, err
	}
	return authorization(&a), true, nil
}

// replyAttributes is the service's ReplyAttributes hook.
func replyAttributes(n *aaa.NAS, a *aaa.Answer, reason, method string) []aaa.Attribute {
	az := authorization(a)
	return ReplyAttributes(n.Type, &az, reason, method)
}

func authorization(a *aaa.Answer) Authorization {
	return Authorization{Found: a.Found, Password: a.Password, Refusal: a.Refusal, ReplyMessage: a.ReplyMessage,
		SessionTimeout: a.SessionTimeout, InterimInterval: a.InterimInterval, RateDownKbps: a.RateDownKbps, RateUpKbps: a.RateUpKbps,
		FramedIP: a.FramedIP, FramedPool: a.FramedPool, Class: a.Class}
}
