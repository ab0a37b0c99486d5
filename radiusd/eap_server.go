package radiusd

import (
	"crypto/tls"
	"time"
)

// The RADIUS side of EAP (RFC 3579): an Access-Request with EAP-Message
// belongs to a conversation (its State), whose step answers with an
// Access-Challenge (the next EAP Request and the State), an Access-Accept
// (EAP-Success, MS-MPPE keys, the policy's attributes, and User-Name when
// the inner identity differs from the outer) or an Access-Reject
// (EAP-Failure and the Reply-Message). Only the final answer is a
// decision for the auth log and the reject counters, under the inner
// identity and the method (eap-peap/mschapv2, ...).

// prepareEAP sets the EAP defaults (called from prepare).
func (s *Server) prepareEAP() {
	if s.EAPMaxSessions <= 0 {
		s.EAPMaxSessions = defaultEAPMaxSessions
	}
	if s.EAPIdle <= 0 {
		s.EAPIdle = defaultEAPIdle
	}
	if s.EAPLifetime <= 0 {
		s.EAPLifetime = defaultEAPLifetime
	}
	s.eap = newEAPStore(s.EAPMaxSessions, s.EAPIdle, s.EAPLifetime)
	s.eapMethods = []byte{eapTypeMSCHAPv2}
	s.eapTLS = nil
	if s.EAPTLS != nil {
		c := s.EAPTLS.Clone()
		// TLS 1.2 only (see eap_tunnel.go), no resumption: every sign-in
		// runs the full handshake and the inner method.
		c.MinVersion, c.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		c.SessionTicketsDisabled = true
		c.ClientAuth = tls.NoClientCert
		s.eapTLS = c
		s.eapMethods = []byte{eapTypePEAP, eapTypeTTLS, eapTypeMSCHAPv2}
	}
	s.Metrics.setGauge("radius_eap_sessions", "EAP conversations in progress.", func() float64 { return float64(s.eap.len()) })
}

// sweepEAP drops expired conversations until the server stops, so that
// their TLS goroutines end even when no new conversation comes.
func (s *Server) sweepEAP() {
	t := time.NewTicker(max(time.Second, s.EAPIdle/4))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			s.eap.expire(now)
		}
	}
}

func (s *Server) handleEAP(ws *workerState, l *listener, pb *packetBuf) {
	p, nas, ix := pb.pkt, pb.nas, &pb.idx
	raw := eapMessage(ix, p, ws.eap[:0])
	ws.eap = raw[:0]
	ep, err := parseEAP(raw)
	if err != nil || ep.code != eapResponse {
		s.dropPacket(pb, dropMalformed)
		return
	}
	outer := ""
	if v, ok := ix.get(p, attrUserName); ok {
		outer = string(v)
	}
	env := eapEnv{tls: s.eapTLS, methods: s.eapMethods, check: func(user string, in *authInput) verdict {
		return s.decide(ws, newAuthRequest(nas, ix, p, user, in.method), in)
	}}
	var sess *eapSession
	var act eapAction
	if state, ok := ix.get(p, attrState); ok {
		if sess = s.eap.get(state, nas, pb.recv); sess == nil {
			s.eapEnd(ws, l, pb, nil, outer, s.fail0(ep.id, ReasonEAPSessionUnknown))
			return
		}
		sess.mu.Lock()
		act = sess.step(&env, ep, raw)
		sess.mu.Unlock()
	} else {
		if ep.typ != eapTypeIdentity {
			s.eapEnd(ws, l, pb, nil, outer, s.fail0(ep.id, ReasonEAPProtocol))
			return
		}
		if sess = s.eap.create(nas, pb.recv); sess == nil {
			s.dropPacket(pb, dropEAPSessionsFull)
			return
		}
		sess.mu.Lock()
		act = sess.start(&env, ep.id, string(ep.data))
		sess.mu.Unlock()
	}
	switch act.kind {
	case actChallenge:
		s.answer(ws, l, pb, codeAccessChallenge, func(w *packetWriter) error {
			w.addEAPMessage(act.eap)
			w.add(attrState, sess.key[:])
			return nil
		}, func() { s.Metrics.packet(codeAccessRequest, resChallenge) })
	case actDrop:
		if !act.v.dropped {
			s.dropPacket(pb, dropEAPOutOfStep)
			return
		}
		s.dropPacket(pb, dropBackendError)
		s.logDecision(pb, newAuthRequest(nas, ix, p, sess.inner, AuthMethod(sess.log)), resultDropped, reasonBackendError)
	default:
		s.eap.remove(sess)
		s.eapEnd(ws, l, pb, sess, outer, act)
	}
}

// fail0 is the failure of a Response outside any conversation.
func (s *Server) fail0(id byte, reason string) eapAction {
	return (&eapSession{}).fail(id, reason)
}

// eapEnd answers the end of a conversation (sess may be nil: none) and
// logs it as the decision.
func (s *Server) eapEnd(ws *workerState, l *listener, pb *packetBuf, sess *eapSession, outer string, act eapAction) {
	user, method := outer, AuthMethod(methodEAPUnknownMethod)
	if sess != nil {
		user = sess.inner
		if sess.log != "" {
			method = AuthMethod(sess.log)
		}
	}
	req := newAuthRequest(pb.nas, &pb.idx, pb.pkt, user, method)
	if act.kind == actReject {
		s.rejectWith(ws, l, pb, act.v.reason, act.v.message, func(w *packetWriter) { w.addEAPMessage(act.eap) })
		s.logDecision(pb, req, resultReject, act.v.logReason)
		return
	}
	nas := pb.nas
	s.answer(ws, l, pb, codeAccessAccept, func(w *packetWriter) error {
		w.addEAPMessage(act.eap)
		if user != outer && user != "" {
			// The NAS accounts the session under the name in the Accept
			// (RFC 2865 section 5.1), not an anonymous outer identity.
			w.addString(attrUserName, user)
		}
		if err := addMPPEKeys(w, act.send, act.recv, nas.Secret, pb.pkt[4:20]); err != nil {
			return err
		}
		addAcceptAttrs(w, nas.Type, &act.v.az)
		return nil
	}, func() { s.countAccept(pb) })
	if !pb.dropped {
		s.logDecision(pb, req, resultAccept, "")
	}
}
