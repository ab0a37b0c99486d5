package radiusd

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// PEAP and TTLS: the TLS handshake carried in EAP, then what each runs in
// the tunnel. Keys (the Accept's MS-MPPE-Recv-Key and Send-Key) are the
// first and second 32 octets of the TLS exporter with the method's label
// (PEAPv0: "client EAP encryption"; TTLS, RFC 5281 section 8: "ttls keying
// material"). Both are TLS 1.2 only (TLS 1.3 for them is RFC 9427, which
// peers do not commonly speak yet; FreeRADIUS' default caps them at 1.2).

const (
	peapKeyLabel       = "client EAP encryption"
	ttlsKeyLabel       = "ttls keying material"
	ttlsChallengeLabel = "ttls challenge"
)

// tlsStep takes one PEAP/TTLS Response.
func (s *eapSession) tlsStep(env *eapEnv, p eapPacket, raw []byte) eapAction {
	f, err := parseTLSFrame(p.data)
	if err != nil || f.flags&tlsVersionBits != 0 { // version 0 is the one offered
		return s.fail(p.id, ReasonEAPProtocol)
	}
	next := p.id + 1
	if s.outb.pending() {
		// The peer acknowledges a fragment with an empty Response.
		if len(f.data) != 0 || f.flags&tlsFlagMore != 0 {
			return s.fail(p.id, ReasonEAPProtocol)
		}
		return s.challenge(eapBuild(eapRequest, next, s.method, s.outb.next(0)))
	}
	if s.phase == phProposed {
		t, err := newTLSTunnel(env.tls)
		if err != nil {
			return s.fail(p.id, ReasonEAPTLSFailed)
		}
		s.tunnel.Store(t)
		if s.ended.Load() { // expired meanwhile: end() may have missed it
			t.close()
			return eapAction{kind: actDrop}
		}
		s.phase = phHandshake
	}
	done, err := s.reasm.add(f)
	if err != nil {
		return s.fail(p.id, ReasonEAPProtocol)
	}
	if !done { // acknowledge the fragment
		return s.challenge(eapBuild(eapRequest, next, s.method, []byte{0}))
	}
	msg := s.reasm.take()
	t := s.tunnel.Load()
	var st tunnelStep
	switch {
	case s.retry != nil && bytes.Equal(s.retry.raw, raw):
		st.appData = s.retry.app
	case len(msg) > 0:
		if st, err = t.feed(msg); err != nil {
			return s.fail(p.id, ReasonEAPTLSFailed)
		}
	}
	s.retry = nil
	if st.handshakeDone {
		s.phase = phTunnel // the server's Finished goes out now
	} else if s.phase >= phTunnel {
		plain, end := s.inside(env, p.id, next, st.appData)
		if end != nil {
			if end.kind == actDrop {
				s.retry = &eapRetry{raw: append([]byte(nil), raw...), app: st.appData}
			}
			return *end
		}
		if plain != nil {
			rec, err := t.write(plain)
			if err != nil {
				return s.fail(p.id, ReasonEAPTLSFailed)
			}
			st.out = append(st.out, rec...)
		}
	}
	if len(st.out) == 0 {
		return s.fail(p.id, ReasonEAPProtocol) // nothing to say and not done: the peer is out of step
	}
	s.outb.buf = st.out
	return s.challenge(eapBuild(eapRequest, next, s.method, s.outb.next(0)))
}

// inside runs the tunnelled method on one round trip's application data:
// the plaintext to answer with, or the end of the conversation.
func (s *eapSession) inside(env *eapEnv, respID, next byte, app [][]byte) ([]byte, *eapAction) {
	data := bytes.Join(app, nil)
	if s.method == eapTypePEAP {
		return s.peapInside(env, respID, next, data)
	}
	return s.ttlsInside(env, respID, next, data)
}

// keysAccept ends a tunnelled conversation: the verdict, with the tunnel's
// keys when it accepts.
func (s *eapSession) keysAccept(respID byte, v verdict, label string) *eapAction {
	a := s.final(respID, v, nil, nil)
	if a.kind == actAccept {
		k, err := s.tunnel.Load().exportKey(label, 64)
		if err != nil {
			// TLS 1.2 without Extended Master Secret (RFC 7627): crypto/tls
			// refuses its exporter, and so does xr.
			a = s.fail(respID, ReasonEAPTLSFailed)
			return &a
		}
		a.recv, a.send = k[:32], k[32:]
	}
	return &a
}

func (s *eapSession) protocolError(respID byte) *eapAction {
	a := s.fail(respID, ReasonEAPProtocol)
	return &a
}

// PEAPv0 (draft-kamath-pppext-peapv0): inner EAP packets travel without
// their 4-octet header (type and data only), except the Result TLV
// (EAP type 33), which keeps it.

// peapResultTLV writes the Extensions Request with a mandatory Result TLV.
func peapResultTLV(id byte, success bool) []byte {
	status := byte(2)
	if success {
		status = 1
	}
	return eapBuild(eapRequest, id, eapTypeTLV, []byte{0x80, 0x03, 0x00, 0x02, 0x00, status})
}

func (s *eapSession) peapInside(env *eapEnv, respID, next byte, data []byte) ([]byte, *eapAction) {
	switch s.phase {
	case phTunnel: // the peer acknowledged the Finished: ask who it is
		if len(data) != 0 {
			return nil, s.protocolError(respID)
		}
		s.phase = phInnerID
		return []byte{eapTypeIdentity}, nil
	case phInnerID:
		if len(data) < 1 || data[0] != eapTypeIdentity {
			return nil, s.protocolError(respID)
		}
		s.inner, s.phase = string(data[1:]), phInnerMSCHAP
		s.log = methodPEAPMSCHAPv2
		return s.ms.start(next), nil
	case phInnerMSCHAP:
		if len(data) < 1 {
			return nil, s.protocolError(respID)
		}
		if data[0] == eapTypeNak {
			a := s.fail(respID, ReasonEAPMethodUnsupported)
			return nil, &a
		}
		if data[0] != eapTypeMSCHAPv2 {
			return nil, s.protocolError(respID)
		}
		reply, end := s.mschap(env, respID, data[1:])
		switch {
		case end == nil:
			return reply, nil
		case end.kind != actAccept:
			return nil, end
		}
		s.phase = phTLV // verified and acknowledged: confirm with the Result TLV
		return peapResultTLV(next, true), nil
	case phTLV:
		if !peapResultSuccess(data) {
			return nil, s.protocolError(respID)
		}
		return nil, s.keysAccept(respID, s.ms.verdict, peapKeyLabel)
	}
	return nil, s.protocolError(respID)
}

// peapResultSuccess reports whether an Extensions Response (full header)
// carries a Result TLV of success and no mandatory TLV xr does not know.
func peapResultSuccess(b []byte) bool {
	p, err := parseEAP(b)
	if err != nil || p.code != eapResponse || p.typ != eapTypeTLV {
		return false
	}
	ok := false
	for d := p.data; len(d) > 0; {
		if len(d) < 4 {
			return false
		}
		typ, n := binary.BigEndian.Uint16(d)&0x3fff, int(binary.BigEndian.Uint16(d[2:4]))
		mandatory := d[0]&0x80 != 0
		if len(d) < 4+n {
			return false
		}
		v := d[4 : 4+n]
		switch {
		case typ == 3 && n == 2:
			ok = binary.BigEndian.Uint16(v) == 1
		case mandatory:
			return false
		}
		d = d[4+n:]
	}
	return ok
}

// TTLS (RFC 5281): the peer sends its credentials as Diameter AVPs.

// AVP codes read and written (RFC 5281 section 11; vendor 311: RFC 2548).
const (
	avpUserName        = 1
	avpUserPassword    = 2
	avpEAPMessage      = 79
	avpMSCHAPChallenge = 11 // vendor 311
	avpMSCHAP2Response = 25 // vendor 311
	avpMSCHAP2Success  = 26 // vendor 311
	avpFlagVendor      = 0x80
	avpFlagMandatory   = 0x40
)

var errAVP = errors.New("eap-ttls: malformed or unsupported mandatory AVP")

// ttlsAVPs are the AVPs xr reads from the tunnel.
type ttlsAVPs struct {
	user, password, eap, challenge, response []byte
	hasPassword                              bool
}

// parseAVPs reads Diameter AVPs (RFC 6733 section 4.1: Code, Flags,
// Length of header and data, the Vendor-ID when V, data padded to 4
// octets). An unknown AVP marked mandatory fails the exchange, as RFC
// 5281 section 10.1 requires.
func parseAVPs(b []byte) (ttlsAVPs, error) {
	var a ttlsAVPs
	for len(b) > 0 {
		if len(b) < 8 {
			return a, errAVP
		}
		code, flags := binary.BigEndian.Uint32(b), b[4]
		n := int(b[5])<<16 | int(b[6])<<8 | int(b[7])
		hdr := 8
		var vendor uint32
		if flags&avpFlagVendor != 0 {
			if len(b) < 12 {
				return a, errAVP
			}
			vendor, hdr = binary.BigEndian.Uint32(b[8:12]), 12
		}
		if n < hdr || n > len(b) {
			return a, errAVP
		}
		v := b[hdr:n]
		switch {
		case vendor == 0 && code == avpUserName:
			a.user = v
		case vendor == 0 && code == avpUserPassword:
			a.password, a.hasPassword = v, true
		case vendor == 0 && code == avpEAPMessage:
			a.eap = append(a.eap, v...)
		case vendor == vendorMicrosoft && code == avpMSCHAPChallenge:
			a.challenge = v
		case vendor == vendorMicrosoft && code == avpMSCHAP2Response:
			a.response = v
		case flags&avpFlagMandatory != 0:
			return a, errAVP
		}
		pad := (n + 3) &^ 3
		if pad > len(b) {
			pad = len(b) // the last AVP's padding may be left out
		}
		b = b[pad:]
	}
	return a, nil
}

// appendAVP writes one AVP (mandatory; with a vendor when vendor != 0).
func appendAVP(b []byte, code, vendor uint32, v []byte) []byte {
	flags, hdr := byte(avpFlagMandatory), 8
	if vendor != 0 {
		flags, hdr = flags|avpFlagVendor, 12
	}
	n := hdr + len(v)
	b = binary.BigEndian.AppendUint32(b, code)
	b = append(b, flags, byte(n>>16), byte(n>>8), byte(n))
	if vendor != 0 {
		b = binary.BigEndian.AppendUint32(b, vendor)
	}
	b = append(b, v...)
	for n%4 != 0 {
		b = append(b, 0)
		n++
	}
	return b
}

func (s *eapSession) ttlsInside(env *eapEnv, respID, next byte, data []byte) ([]byte, *eapAction) {
	if s.phase == phTTLSSuccess { // the peer acknowledged MS-CHAP2-Success
		if len(data) != 0 {
			return nil, s.protocolError(respID)
		}
		return nil, s.keysAccept(respID, s.ms.verdict, ttlsKeyLabel)
	}
	a, err := parseAVPs(data)
	if err != nil {
		return nil, s.protocolError(respID)
	}
	if s.phase == phTunnel && len(a.user) > 0 {
		s.inner = string(a.user)
	}
	switch {
	case len(a.eap) > 0 || s.innerEAP:
		return s.ttlsEAP(env, respID, next, a.eap)
	case s.phase != phTunnel:
		return nil, s.protocolError(respID)
	case a.hasPassword:
		s.log = methodTTLSPAP
		// RFC 5281 section 11.2.5: the password is padded with NULs to a
		// multiple of 16 octets.
		pw := bytes.TrimRight(a.password, "\x00")
		if len(pw) > 128 {
			return nil, s.protocolError(respID)
		}
		v := env.check(s.inner, &authInput{method: MethodPAP, pap: pw})
		if v.dropped {
			return nil, backendDrop()
		}
		return nil, s.keysAccept(respID, v, ttlsKeyLabel)
	case a.response != nil:
		return s.ttlsMSCHAPv2(env, respID, a)
	}
	return nil, s.protocolError(respID)
}

// ttlsMSCHAPv2 checks MS-CHAP-Challenge against the one the tunnel implies
// (RFC 5281 section 11.2.4: the first 16 octets of the exporter "ttls
// challenge", the 17th the identifier), then the response by the policy.
func (s *eapSession) ttlsMSCHAPv2(env *eapEnv, respID byte, a ttlsAVPs) ([]byte, *eapAction) {
	s.log = methodTTLSMSCHAPv2
	want, err := s.tunnel.Load().exportKey(ttlsChallengeLabel, 17)
	if err != nil {
		a := s.fail(respID, ReasonEAPTLSFailed)
		return nil, &a
	}
	m, err := decodeMSCHAPv2(a.challenge, a.response)
	if err != nil || subtle.ConstantTimeCompare(a.challenge, want[:16]) != 1 || m.ident != want[16] {
		return nil, s.protocolError(respID)
	}
	in := authInput{method: MethodMSCHAPv2, ms: m}
	v := env.check(s.inner, &in)
	if v.dropped {
		return nil, &eapAction{kind: actDrop}
	}
	if v.reason != "" {
		a := s.final(respID, v, nil, nil)
		return nil, &a
	}
	user := s.inner
	if in.msName != "" {
		user = in.msName
	}
	ar, err := authenticatorResponse(v.az.Password, m.ntResponse[:], m.peerChallenge[:], m.authChallenge[:], user)
	if err != nil {
		return nil, s.protocolError(respID)
	}
	s.ms.verdict, s.phase = v, phTTLSSuccess
	return appendAVP(nil, avpMSCHAP2Success, vendorMicrosoft, append([]byte{m.ident}, ar...)), nil
}

// ttlsEAP runs EAP-MSCHAPv2 inside TTLS: inner EAP packets (with their
// headers) in EAP-Message AVPs; the inner Success ends the conversation.
func (s *eapSession) ttlsEAP(env *eapEnv, respID, next byte, b []byte) ([]byte, *eapAction) {
	p, err := parseEAP(b)
	if err != nil || p.code != eapResponse {
		return nil, s.protocolError(respID)
	}
	wrap := func(typeData []byte) []byte { return appendAVP(nil, avpEAPMessage, 0, eapWrap(next, typeData)) }
	switch {
	case s.phase == phTunnel && p.typ == eapTypeIdentity:
		s.innerEAP, s.phase, s.log = true, phInnerMSCHAP, methodTTLSEAPMSCHAPv2
		if len(p.data) > 0 {
			s.inner = string(p.data)
		}
		return wrap(s.ms.start(next)), nil
	case s.phase == phInnerMSCHAP && p.typ == eapTypeNak:
		a := s.fail(respID, ReasonEAPMethodUnsupported)
		return nil, &a
	case s.phase == phInnerMSCHAP && p.typ == eapTypeMSCHAPv2:
		reply, end := s.mschap(env, respID, p.data)
		switch {
		case end == nil:
			return wrap(reply), nil
		case end.kind != actAccept:
			return nil, end
		}
		return nil, s.keysAccept(respID, s.ms.verdict, ttlsKeyLabel)
	}
	return nil, s.protocolError(respID)
}
