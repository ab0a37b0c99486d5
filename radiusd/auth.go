package radiusd

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/netip"
	"strconv"

	"layeh.com/radius"
)

// Reject reasons produced by radiusd itself (the backend adds its own).
const (
	ReasonBadCredentials    = "bad_credentials"
	ReasonUnsupportedMethod = "unsupported_auth"
	ReasonBadRequest        = "bad_request"
)

// authInput is the decoded, method-specific part of an Access-Request.
type authInput struct {
	method AuthMethod
	pap    []byte // decrypted User-Password
	chapID byte
	chap   []byte // CHAP response (16 octets)
	chal   []byte // CHAP challenge
	ms     mschap2
	msName string // name the NT-Response was computed over, when not User-Name
	// msUser is the name to check the NT-Response against when it is not
	// the authorized username (EAP-MSCHAPv2 carries its own Name).
	msUser string
}

func (s *Server) handleAccessRequest(ws *workerState, l *listener, pb *packetBuf) {
	p, nas, ix := pb.pkt, pb.nas, &pb.idx

	// RFC 3579 / BlastRADIUS: verify whenever present, demand when required.
	if ix.ma >= 0 {
		if !messageAuthenticatorOK(ws.mac(nas.Secret), p, ix.ma, false) {
			s.dropPacket(pb, dropBadAuthenticator)
			return
		}
	} else if nas.RequireMessageAuthenticator || ix.has(p, attrEAPMessage) {
		s.dropPacket(pb, dropMissingMA)
		return
	}
	if ix.has(p, attrEAPMessage) {
		s.handleEAP(ws, l, pb)
		return
	}

	userRaw, ok := ix.get(p, attrUserName)
	if !ok || len(userRaw) == 0 {
		s.reject(ws, l, pb, nil, ReasonBadRequest, "")
		s.logDecision(pb, nil, resultReject, ReasonBadRequest)
		return
	}
	in, reason, err := decodeAuth(ix, p, nas.Secret)
	if err != nil {
		s.dropPacket(pb, dropMalformed)
		return
	}
	if reason != "" {
		s.reject(ws, l, pb, nil, reason, "")
		s.logDecision(pb, &AuthRequest{Username: string(userRaw)}, resultReject, reason)
		return
	}

	req := newAuthRequest(nas, ix, p, string(userRaw), in.method)
	v := s.decide(ws, req, &in)
	switch {
	case v.dropped:
		s.dropPacket(pb, dropBackendError)
	case v.reason != "":
		s.reject(ws, l, pb, &in, v.reason, v.message)
	default:
		s.accept(ws, l, pb, &in, req.Username, &v.az)
	}
	s.logDecision(pb, req, v.result(), v.logReason)
}

// newAuthRequest is the backend's view of an Access-Request for a username.
func newAuthRequest(nas *NAS, ix *attrIndex, p []byte, user string, method AuthMethod) *AuthRequest {
	req := &AuthRequest{NAS: nas, Username: user, Method: method}
	if v, ok := ix.get(p, attrCallingStationID); ok {
		req.CallingStationID = string(v)
	}
	if v, ok := ix.get(p, attrNASPortID); ok {
		req.NASPortID = string(v)
	}
	if v, ok := ix.get(p, attrFramedIP); ok && len(v) == 4 {
		req.FramedIP = netip.AddrFrom4([4]byte(v))
	}
	return req
}

// verdict is the outcome of the policy for one set of credentials.
type verdict struct {
	az        Authorization
	dropped   bool   // backend error: no answer
	reason    string // "" accepts; else the Access-Reject's reason
	message   string // its Reply-Message ("" = the reason's default)
	logReason string // what the auth log records (unknown_user, bad_password, ...)
}

func (v *verdict) result() string {
	switch {
	case v.dropped:
		return resultDropped
	case v.reason != "":
		return resultReject
	}
	return resultAccept
}

// decide runs the policy of one set of credentials, the same for PAP,
// CHAP, MS-CHAPv2 and the credentials inside EAP: Authorize, then the
// password (also against an empty one for unknown users, so both failures
// cost and answer the same), then the refusal, replacing stale sessions
// first when the refusal is simultaneous use.
func (s *Server) decide(ws *workerState, req *AuthRequest, in *authInput) verdict {
	az, err := s.Authorizer.Authorize(s.ctx, req)
	if err != nil {
		s.warn("authorizer failed", "nas", req.NAS.Name, "err", err)
		return verdict{dropped: true, logReason: reasonBackendError}
	}
	pw := az.Password
	if !az.Found {
		pw = ""
	}
	if kind, hash, ok := legacyHash(pw); ok && az.Found {
		// A password imported hashed (radiusd/legacyhash.go): PAP only.
		if in.method != MethodPAP {
			return verdict{az: az, reason: ReasonPasswordReset, logReason: ReasonPasswordReset}
		}
		if !verifyLegacyPAP(kind, hash, in.pap) {
			pw = "\x00" // matches no PAP password: the bad-password path below
		} else {
			pw = string(in.pap)
		}
	}
	var pwHash [16]byte
	if in.method == MethodMSCHAPv2 {
		pwHash = ntPasswordHash(pw)
	}
	if !verifyPassword(ws, in, req.Username, pw, pwHash) || !az.Found {
		v := verdict{az: az, reason: ReasonBadCredentials, message: msgBadCredentials, logReason: ReasonBadPassword}
		if !az.Found {
			v.logReason = ReasonUnknownUser
		}
		return v
	}
	if az.Refusal == "simultaneous_use" {
		// Verified, but over the limit: the backend may replace a stale
		// session (a lost Stop) and decide again.
		s.replaceStale(req, &az)
	}
	if az.Refusal != "" {
		return verdict{az: az, reason: az.Refusal, message: replyMessageFor(az.Refusal, az.ReplyMessage), logReason: az.Refusal}
	}
	return verdict{az: az}
}

// decodeAuth finds the method and decodes its attributes. A malformed
// method attribute is an error (the packet is dropped); a method radiusd
// does not implement is a reject reason.
func decodeAuth(ix *attrIndex, p, secret []byte) (authInput, string, error) {
	var in authInput
	if v, ok := ix.get(p, attrUserPassword); ok {
		// layeh's RFC 2865 cipher; it checks the 16..128, multiple-of-16 size.
		pw, err := radius.UserPassword(v, secret, p[4:20])
		if err != nil {
			return in, "", errBadAttrFormat
		}
		in.method, in.pap = MethodPAP, pw
		return in, "", nil
	}
	if v, ok := ix.get(p, attrCHAPPassword); ok {
		if len(v) != 17 {
			return in, "", errBadAttrFormat
		}
		in.method, in.chapID, in.chap = MethodCHAP, v[0], v[1:]
		in.chal = p[4:20] // RFC 2865 5.3: the Request Authenticator unless CHAP-Challenge
		if c, ok := ix.get(p, attrCHAPChallenge); ok {
			if len(c) == 0 {
				return in, "", errBadAttrFormat
			}
			in.chal = c
		}
		return in, "", nil
	}
	if resp, ok := ix.vendor(p, vendorMicrosoft, msCHAP2Response); ok {
		chal, _ := ix.vendor(p, vendorMicrosoft, msCHAPChallenge)
		m, err := decodeMSCHAPv2(chal, resp)
		if err != nil {
			return in, "", err
		}
		in.method, in.ms = MethodMSCHAPv2, m
		return in, "", nil
	}
	// MS-CHAPv1, EAP, or no credentials at all.
	return in, ReasonUnsupportedMethod, nil
}

// verifyPassword checks the credentials of in against the cleartext pw in
// constant time (for equal lengths).
func verifyPassword(ws *workerState, in *authInput, user, pw string, pwHash [16]byte) bool {
	switch in.method {
	case MethodPAP:
		return subtle.ConstantTimeCompare(in.pap, []byte(pw)) == 1
	case MethodCHAP:
		// RFC 1994: MD5(Identifier + secret + challenge).
		h := ws.md5
		h.Reset()
		h.Write([]byte{in.chapID})
		h.Write([]byte(pw))
		h.Write(in.chal)
		var sum [16]byte
		return subtle.ConstantTimeCompare(h.Sum(sum[:0]), in.chap) == 1
	case MethodMSCHAPv2:
		if in.msUser != "" {
			user = in.msUser
		}
		name, ok := verifyMSCHAPv2(&in.ms, user, pwHash)
		if ok && name != user {
			in.msName = name
		}
		return ok
	}
	return false
}

func (s *Server) reject(ws *workerState, l *listener, pb *packetBuf, in *authInput, reason, msg string) {
	s.rejectWith(ws, l, pb, reason, msg, func(w *packetWriter) {
		if in != nil && in.method == MethodMSCHAPv2 {
			addMSCHAPError(w, in.ms.ident, reason)
		}
	})
}

// rejectWith answers an Access-Reject with its Reply-Message and what
// extra adds (MS-CHAP-Error, EAP-Failure).
func (s *Server) rejectWith(ws *workerState, l *listener, pb *packetBuf, reason, msg string, extra func(*packetWriter)) {
	if msg == "" {
		msg = replyMessageFor(reason, "")
	}
	s.answer(ws, l, pb, codeAccessReject, func(w *packetWriter) error {
		w.addSplit(attrReplyMessage, []byte(msg))
		extra(w)
		return nil
	}, func() {
		s.Metrics.packet(codeAccessRequest, resReject)
		s.Metrics.reject(reason)
		pb.stats.rejects.Add(1)
	})
}

// addMSCHAPError writes the RFC 2759 failure text: E=<err> R=<retry>
// C=<challenge> V=3.
func addMSCHAPError(w *packetWriter, ident byte, reason string) {
	var c [16]byte
	rand.Read(c[:])
	var buf [64]byte
	b := append(buf[:0], ident)
	b = append(b, "E="...)
	b = strconv.AppendInt(b, int64(msCHAPErrorCode(reason)), 10)
	b = append(b, " R=0 C="...)
	b = hex.AppendEncode(b, c[:])
	b = append(b, " V=3"...)
	w.addVendor(vendorMicrosoft, msCHAPError, b)
}

// answer builds (with build), signs, caches and sends an answer to the
// Access-Request: Message-Authenticator first, Proxy-State copied; count
// records it just before it is sent. An answer that cannot be built is
// dropped instead.
func (s *Server) answer(ws *workerState, l *listener, pb *packetBuf, code byte, build func(*packetWriter) error, count func()) {
	p, nas := pb.pkt, pb.nas
	w := newPacket(ws.buf[:0], code, p[1], p[4:20], true)
	if err := build(&w); err != nil {
		s.dropPacket(pb, dropMalformed)
		return
	}
	w.copyProxyState(&pb.idx, p)
	b, err := w.finishResponse(ws.mac(nas.Secret), ws.md5, nas.Secret)
	if err != nil {
		s.warn("answer too large", "nas", nas.Name, "code", code, "err", err)
		s.dropPacket(pb, dropMalformed)
		return
	}
	count()
	s.reply(ws, l, pb, b)
}

func (s *Server) accept(ws *workerState, l *listener, pb *packetBuf, in *authInput, user string, az *Authorization) {
	nas := pb.nas
	s.answer(ws, l, pb, codeAccessAccept, func(w *packetWriter) error {
		if in.method == MethodMSCHAPv2 {
			if in.msName != "" {
				user = in.msName
			}
			if err := addMSCHAPv2Success(w, &in.ms, user, az.Password, nas.Secret, pb.pkt[4:20]); err != nil {
				return err
			}
		}
		addAcceptAttrs(w, nas.Type, az)
		return nil
	}, func() { s.countAccept(pb) })
}

func (s *Server) countAccept(pb *packetBuf) {
	s.Metrics.packet(codeAccessRequest, resAccept)
	pb.stats.accepts.Add(1)
}

// addMSCHAPv2Success adds MS-CHAP2-Success and the MPPE keys.
func addMSCHAPv2Success(w *packetWriter, m *mschap2, user, password string, secret, reqAuth []byte) error {
	ar, err := authenticatorResponse(password, m.ntResponse[:], m.peerChallenge[:], m.authChallenge[:], user)
	if err != nil {
		return err
	}
	var succ [43]byte
	succ[0] = m.ident
	copy(succ[1:], ar)
	w.addVendor(vendorMicrosoft, msCHAP2Success, succ[:])

	send, recv, err := mppeKeys(password, m.ntResponse[:])
	if err != nil {
		return err
	}
	return addMPPEKeys(w, send, recv, secret, reqAuth)
}

// addMPPEKeys writes MS-MPPE-Recv-Key and MS-MPPE-Send-Key (RFC 2548
// 2.4.2/2.4.3: salted with the Request Authenticator, the same scheme as
// RFC 2868 Tunnel-Password, which layeh implements) and the encryption
// policy and types.
func addMPPEKeys(w *packetWriter, send, recv, secret, reqAuth []byte) error {
	var salt [4]byte
	rand.Read(salt[:])
	salt[0] |= 0x80 // RFC 2548: the salt's high bit must be set
	salt[2] = salt[0]
	salt[3] = salt[1] ^ 1 // and the two salts of a packet must differ
	rk, err := radius.NewTunnelPassword(recv, salt[2:4], secret, reqAuth)
	if err != nil {
		return err
	}
	sk, err := radius.NewTunnelPassword(send, salt[0:2], secret, reqAuth)
	if err != nil {
		return err
	}
	w.addVendor(vendorMicrosoft, msMPPERecvKey, rk)
	w.addVendor(vendorMicrosoft, msMPPESendKey, sk)
	w.addVendorUint32(vendorMicrosoft, msMPPEEncryptionPolicy, mppePolicyAllowed)
	w.addVendorUint32(vendorMicrosoft, msMPPEEncryptionTypes, mppeTypesRC4Either40or128)
	return nil
}
