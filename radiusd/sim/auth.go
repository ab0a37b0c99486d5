package sim

import (
	"crypto/subtle"
	"encoding/binary"

	"layeh.com/radius/rfc2759"
	"layeh.com/radius/rfc2865"
)

// Authentication methods of Access-Requests (--auth-method).
const (
	AuthPAP      = "pap"
	AuthCHAP     = "chap"
	AuthMSCHAPv2 = "mschapv2"
)

const (
	attrVendorSpecific = 26
	vendorMicrosoft    = 311
	msCHAPChallenge    = 11
	msCHAP2Response    = 25
	msCHAP2Success     = 26
)

// appendCHAP writes CHAP-Password (RFC 2865 section 5.3) over the Request
// Authenticator as the challenge (no CHAP-Challenge attribute).
func (c *client) appendCHAP(b []byte, pass string, auth []byte) []byte {
	ident := byte(c.rng.Uint32())
	c.md.Reset()
	c.md.Write([]byte{ident})
	c.md.Write([]byte(pass))
	c.md.Write(auth)
	b = append(b, byte(rfc2865.CHAPPassword_Type), 19, ident)
	return c.md.Sum(b)
}

// msState is what an MS-CHAPv2 exchange needs to check the server's
// MS-CHAP2-Success (RFC 2759 section 8.7): the NAS proves the server knew
// the password too.
type msState struct {
	ident              byte
	authChal, peerChal [16]byte
	ntResponse         []byte
	user, pass         string
}

func vsa(b []byte, vendorType byte, v []byte) []byte {
	b = append(b, attrVendorSpecific, byte(len(v)+8))
	b = binary.BigEndian.AppendUint32(b, vendorMicrosoft)
	b = append(b, vendorType, byte(len(v)+2))
	return append(b, v...)
}

// appendMSCHAPv2 writes MS-CHAP-Challenge and MS-CHAP2-Response (RFC 2548)
// computed with layeh.com/radius/rfc2759.
func (c *client) appendMSCHAPv2(b []byte, user, pass string) ([]byte, *msState, error) {
	m := &msState{ident: byte(c.rng.Uint32()), user: user, pass: pass}
	binary.LittleEndian.PutUint64(m.authChal[:8], c.rng.Uint64())
	binary.LittleEndian.PutUint64(m.authChal[8:], c.rng.Uint64())
	binary.LittleEndian.PutUint64(m.peerChal[:8], c.rng.Uint64())
	binary.LittleEndian.PutUint64(m.peerChal[8:], c.rng.Uint64())
	nt, err := rfc2759.GenerateNTResponse(m.authChal[:], m.peerChal[:], []byte(user), []byte(pass))
	if err != nil {
		return b, nil, err
	}
	m.ntResponse = nt
	resp := make([]byte, 0, 50)
	resp = append(resp, m.ident, 0)
	resp = append(resp, m.peerChal[:]...)
	resp = append(resp, make([]byte, 8)...)
	resp = append(resp, nt...)
	b = vsa(b, msCHAPChallenge, m.authChal[:])
	return vsa(b, msCHAP2Response, resp), m, nil
}

// verifySuccess checks the MS-CHAP2-Success of an Access-Accept: ident and
// "S=<authenticator response>".
func (m *msState) verifySuccess(reply []byte) bool {
	want, err := rfc2759.GenerateAuthenticatorResponse(m.authChal[:], m.peerChal[:], m.ntResponse, []byte(m.user), []byte(m.pass))
	if err != nil {
		return false
	}
	for off := 20; off+2 <= len(reply); {
		l := int(reply[off+1])
		if l < 2 || off+l > len(reply) {
			return false
		}
		v := reply[off+2 : off+l]
		if reply[off] == attrVendorSpecific && len(v) > 6 && binary.BigEndian.Uint32(v) == vendorMicrosoft && v[4] == msCHAP2Success {
			s := v[6:]
			return len(s) >= 1 && s[0] == m.ident && subtle.ConstantTimeCompare(s[1:], []byte(want)) == 1
		}
		off += l
	}
	return false
}
