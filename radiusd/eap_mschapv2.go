package radiusd

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
)

// EAP-MSCHAPv2 (draft-kamath-pppext-eap-mschapv2-02), the server side:
// Challenge, then the peer's Response is checked by the policy, then a
// Success-Request (with the authenticator response) or a Failure-Request,
// each acknowledged by the peer. The same state machine serves EAP-MSCHAPv2
// on its own, inside PEAP and inside TTLS; it reads and writes the type
// and its data only, the container adds the EAP header (or not: PEAPv0).

// MS-CHAPv2 op codes.
const (
	msOpChallenge = 1
	msOpResponse  = 2
	msOpSuccess   = 3
	msOpFailure   = 4
)

// eapServerName is the Name in the Challenge (informational for peers).
const eapServerName = "xr"

var errMSCHAPFormat = errors.New("eap-mschapv2: malformed packet")

type msState uint8

const (
	msIdle msState = iota
	msChallenged
	msSucceeded // Success-Request sent: waiting for the peer's acknowledgement
	msFailed    // Failure-Request sent
)

// eapMSCHAPv2 is one exchange.
type eapMSCHAPv2 struct {
	state     msState
	id        byte // MS-CHAPv2-ID: the EAP Identifier of the Challenge
	challenge [16]byte
	verdict   verdict
	send      []byte // MPPE keys of a success (RFC 3079), for the outer EAP-MSCHAPv2
	recv      []byte
}

// msOutcome is what processing one Response produced.
type msOutcome struct {
	reply []byte // type and data of the next Request; nil when done
	done  bool   // acknowledged: verdict is final
}

// start writes the Challenge (type and data) for the EAP Identifier id.
func (m *eapMSCHAPv2) start(id byte) []byte {
	rand.Read(m.challenge[:])
	m.id, m.state = id, msChallenged
	body := make([]byte, 0, 22+len(eapServerName))
	body = append(body, eapTypeMSCHAPv2, msOpChallenge, id, 0, 0, 16)
	body = append(body, m.challenge[:]...)
	body = append(body, eapServerName...)
	binary.BigEndian.PutUint16(body[3:5], uint16(len(body)-1))
	return body
}

// process takes the peer's packet (type 26 data, after the type octet).
// check runs the policy on the decoded credentials (msUser: the Name the
// NT-Response is computed over).
func (m *eapMSCHAPv2) process(data []byte, check func(in *authInput) verdict) (msOutcome, error) {
	if len(data) < 1 {
		return msOutcome{}, errMSCHAPFormat
	}
	switch {
	case m.state == msChallenged && data[0] == msOpResponse:
		// OpCode, ID, MS-Length(2), Value-Size(1)=49, Peer-Challenge(16),
		// Reserved(8), NT-Response(24), Flags(1), Name.
		if len(data) < 4+1+49 || data[4] != 49 || data[1] != m.id {
			return msOutcome{}, errMSCHAPFormat
		}
		in := authInput{method: MethodMSCHAPv2, msUser: string(data[54:])}
		in.ms.ident = m.id
		in.ms.authChallenge = m.challenge
		copy(in.ms.peerChallenge[:], data[5:21])
		copy(in.ms.ntResponse[:], data[29:53])
		m.verdict = check(&in)
		if m.verdict.dropped {
			return msOutcome{}, nil
		}
		if m.verdict.reason != "" {
			m.state = msFailed
			return msOutcome{reply: m.failure()}, nil
		}
		user := in.msUser
		if in.msName != "" {
			user = in.msName
		}
		ar, err := authenticatorResponse(m.verdict.az.Password, in.ms.ntResponse[:], in.ms.peerChallenge[:], m.challenge[:], user)
		if err != nil {
			return msOutcome{}, err
		}
		if m.send, m.recv, err = mppeKeys(m.verdict.az.Password, in.ms.ntResponse[:]); err != nil {
			return msOutcome{}, err
		}
		m.state = msSucceeded
		return msOutcome{reply: m.message(msOpSuccess, ar+" M=welcome")}, nil
	case m.state == msSucceeded && data[0] == msOpSuccess,
		m.state == msFailed && data[0] == msOpFailure:
		return msOutcome{done: true}, nil
	}
	return msOutcome{}, errMSCHAPFormat
}

// failure writes the Failure-Request (RFC 2759 section 6 text): E=691
// (647 for a disabled account), no retry.
func (m *eapMSCHAPv2) failure() []byte {
	var c [16]byte
	rand.Read(c[:])
	text := "E=" + strconv.Itoa(msCHAPErrorCode(m.verdict.reason)) + " R=0 C=" + hex.EncodeToString(c[:]) + " V=3 M=" +
		replyMessageFor(m.verdict.reason, m.verdict.message)
	return m.message(msOpFailure, text)
}

// message writes a Success- or Failure-Request: OpCode, MS-CHAPv2-ID (the
// Response's), MS-Length, Message.
func (m *eapMSCHAPv2) message(op byte, text string) []byte {
	body := make([]byte, 0, 5+len(text))
	body = append(body, eapTypeMSCHAPv2, op, m.id, 0, 0)
	body = append(body, text...)
	binary.BigEndian.PutUint16(body[3:5], uint16(len(body)-1))
	return body
}
