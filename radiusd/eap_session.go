package radiusd

import (
	"bytes"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"time"
)

// One EAP conversation: the server side of EAP-PEAPv0 (MSCHAPv2 inside),
// EAP-TTLSv0 (PAP, MSCHAPv2 or EAP-MSCHAPv2 inside) and EAP-MSCHAPv2 on
// its own. Every round trip is one step: it takes the peer's Response and
// answers with the next Request (an Access-Challenge), or ends with a
// verdict (Access-Accept with EAP-Success, Access-Reject with
// EAP-Failure). The credentials found inside are decided by the same
// policy as PAP (Server.decide).
//
//	Identity ─▶ method Request (PEAP/TTLS Start, or the MSCHAPv2 Challenge)
//	   │ Nak: the peer's first supported method instead (once)
//	PEAP/TTLS: TLS handshake (fragments, acks) ─▶ tunnel up
//	   PEAP: ack ─▶ inner Identity ─▶ MSCHAPv2 Challenge ─▶ Success/Failure
//	         ─▶ ack ─▶ Result TLV (success) ─▶ Accept; failure ─▶ Reject
//	   TTLS: AVPs: User-Password ─▶ Accept/Reject
//	               MS-CHAP-Challenge + MS-CHAP2-Response ─▶ MS-CHAP2-Success ─▶ ack ─▶ Accept
//	               EAP-Message ─▶ inner EAP-MSCHAPv2 as above ─▶ Accept/Reject
//	MSCHAPv2: Response ─▶ Success/Failure ─▶ ack ─▶ Accept/Reject

// Reject reasons of EAP itself (the policy's reasons come from decide).
const (
	ReasonEAPTLSFailed         = "eap_tls_failed"         // handshake failed or the TLS session broke
	ReasonEAPMethodUnsupported = "eap_method_unsupported" // the peer wants no method xr offers
	ReasonEAPProtocol          = "eap_protocol_error"     // a packet out of place or malformed inside
	ReasonEAPSessionUnknown    = "eap_session_unknown"    // State unknown, expired or of another NAS
)

type eapPhase uint8

const (
	phProposed    eapPhase = iota // a method Request is out (Nak allowed)
	phHandshake                   // TLS handshake in progress
	phTunnel                      // tunnel up: PEAP waits for the ack, TTLS for the AVPs
	phInnerID                     // PEAP: inner Identity Request out
	phInnerMSCHAP                 // MSCHAPv2 inside (or on its own) in progress
	phTLV                         // PEAP: Result TLV out
	phTTLSSuccess                 // TTLS: MS-CHAP2-Success out, waiting for the ack
)

// eapMethodNames are the auth log's names of the methods (outer/inner).
const (
	methodPEAPMSCHAPv2     = "eap-peap/mschapv2" // AuthMethod values of the auth log
	methodTTLSPAP          = "eap-ttls/pap"
	methodTTLSMSCHAPv2     = "eap-ttls/mschapv2"
	methodTTLSEAPMSCHAPv2  = "eap-ttls/eap-mschapv2"
	methodEAPMSCHAPv2      = "eap-mschapv2"
	methodEAPUnknownMethod = "eap"
)

type eapSession struct {
	mu      sync.Mutex
	key     eapKey
	nas     nasRef
	created time.Time
	touched time.Time // under the store's lock

	tunnel atomic.Pointer[tlsTunnel]
	ended  atomic.Bool

	rounds   int
	lastID   byte // Identifier of the last Request sent
	identity string
	inner    string // the identity the credentials are for (inner, else outer)
	method   byte
	phase    eapPhase
	proposed bool // the method Request is out and unanswered: a Nak may come
	nakked   bool
	reasm    tlsReassembly
	outb     tlsOutbound
	ms       eapMSCHAPv2
	innerEAP bool // TTLS: the inner method is EAP (EAP-Message AVPs)
	log      string
	// retry keeps what a round trip decrypted when the policy could not be
	// asked (backend error): the NAS's retransmission of the same Response
	// is answered from it, as the tunnel cannot decrypt the same records
	// twice.
	retry *eapRetry
}

type eapRetry struct {
	raw []byte
	app [][]byte
}

// end stops the conversation's TLS session, whatever holds it.
func (s *eapSession) end() {
	s.ended.Store(true)
	if t := s.tunnel.Load(); t != nil {
		t.close()
	}
}

// eapAction is what a step answers.
type eapAction struct {
	kind       int
	eap        []byte  // the EAP packet of a Challenge, Accept or Reject
	v          verdict // Accept and Reject
	send, recv []byte  // MS-MPPE keys of an Accept
}

const (
	actChallenge = iota + 1
	actAccept
	actReject
	actDrop // no answer (backend error; the NAS retransmits)
)

// eapEnv is what a step needs from the server.
type eapEnv struct {
	tls     *tls.Config // nil: PEAP and TTLS are not offered
	methods []byte      // offered, in the server's order of preference
	check   func(user string, in *authInput) verdict
}

// start answers the peer's Identity with the server's preferred method.
func (s *eapSession) start(env *eapEnv, id byte, identity string) eapAction {
	s.identity, s.inner = identity, identity
	return s.propose(env, env.methods[0], id)
}

func (s *eapSession) propose(env *eapEnv, method, respID byte) eapAction {
	s.method, s.phase, s.proposed = method, phProposed, true
	id := respID + 1
	switch method {
	case eapTypePEAP, eapTypeTTLS:
		return s.challenge(eapBuild(eapRequest, id, method, []byte{tlsFlagStart}))
	}
	s.phase = phInnerMSCHAP
	return s.challenge(eapWrap(id, s.ms.start(id)))
}

func (s *eapSession) challenge(eap []byte) eapAction {
	s.lastID = eap[1]
	return eapAction{kind: actChallenge, eap: eap}
}

// eapWrap adds an EAP Request header to a method's type and data.
func eapWrap(id byte, typeData []byte) []byte {
	return eapBuild(eapRequest, id, typeData[0], typeData[1:])
}

// step takes one Response of the conversation.
func (s *eapSession) step(env *eapEnv, p eapPacket, raw []byte) eapAction {
	if p.id != s.lastID {
		return eapAction{kind: actDrop} // RFC 3748 section 4.1: not the answer to the Request out
	}
	if s.rounds++; s.rounds > eapMaxRounds {
		return s.fail(p.id, ReasonEAPProtocol)
	}
	if p.typ == eapTypeNak {
		return s.nak(env, p)
	}
	s.proposed = false
	if p.typ != s.method {
		return s.fail(p.id, ReasonEAPProtocol)
	}
	if s.method == eapTypeMSCHAPv2 {
		s.log = methodEAPMSCHAPv2
		reply, end := s.mschap(env, p.id, p.data)
		if end != nil {
			return *end
		}
		return s.challenge(eapWrap(p.id+1, reply))
	}
	return s.tlsStep(env, p, raw)
}

// nak switches to the first method of the peer's list the server offers,
// once and only in answer to the first proposal (RFC 3748 section 5.3.1).
func (s *eapSession) nak(env *eapEnv, p eapPacket) eapAction {
	if s.nakked || !s.proposed {
		return s.fail(p.id, ReasonEAPProtocol)
	}
	s.nakked = true
	for _, want := range p.data {
		if want != s.method && bytes.IndexByte(env.methods, want) >= 0 {
			s.ms = eapMSCHAPv2{}
			return s.propose(env, want, p.id)
		}
	}
	return s.fail(p.id, ReasonEAPMethodUnsupported)
}

// mschap runs one step of MSCHAPv2 (on its own or inside a tunnel): the
// next Request's type and data, for the container to carry, or the end of
// the conversation (whose Accept carries the MSCHAPv2 keys: a tunnel
// replaces them with its own).
func (s *eapSession) mschap(env *eapEnv, respID byte, data []byte) ([]byte, *eapAction) {
	out, err := s.ms.process(data, func(in *authInput) verdict { return env.check(s.inner, in) })
	switch {
	case err != nil:
		a := s.fail(respID, ReasonEAPProtocol)
		return nil, &a
	case s.ms.verdict.dropped && out.reply == nil && !out.done:
		return nil, backendDrop()
	case out.reply != nil:
		return out.reply, nil
	}
	a := s.final(respID, s.ms.verdict, s.ms.send, s.ms.recv)
	return nil, &a
}

// final ends the conversation with the verdict: EAP-Success and the keys,
// or EAP-Failure.
func (s *eapSession) final(respID byte, v verdict, send, recv []byte) eapAction {
	if v.reason != "" {
		return eapAction{kind: actReject, eap: eapFinal(eapFailure, respID), v: v}
	}
	return eapAction{kind: actAccept, eap: eapFinal(eapSuccess, respID), v: v, send: send, recv: recv}
}

// backendDrop leaves a Response unanswered: the policy could not be asked.
func backendDrop() *eapAction {
	return &eapAction{kind: actDrop, v: verdict{dropped: true, logReason: reasonBackendError}}
}

// fail ends the conversation with one of EAP's own reasons.
func (s *eapSession) fail(respID byte, reason string) eapAction {
	return eapAction{kind: actReject, eap: eapFinal(eapFailure, respID),
		v: verdict{reason: reason, logReason: reason}}
}
