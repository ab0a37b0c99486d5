package radiusd

import (
	"crypto/subtle"
	"errors"
	"unicode/utf8"

	"layeh.com/radius/rfc2759"
	"layeh.com/radius/rfc3079"
)

// MS-CHAPv2 (RFC 2759) and MPPE key derivation (RFC 3079, carried per RFC
// 2548) through layeh.com/radius's rfc2759 and rfc3079 packages; this file
// decodes the attributes, keeps the NT hash computed once per request and
// adds the domain-stripping retry.

// Microsoft vendor attributes (RFC 2548), vendor 311.
const (
	vendorMicrosoft           = 311
	msCHAPResponse            = 1 // MS-CHAP v1, refused
	msCHAPError               = 2
	msMPPEEncryptionPolicy    = 7
	msMPPEEncryptionTypes     = 8
	msCHAPChallenge           = 11
	msMPPESendKey             = 16
	msMPPERecvKey             = 17
	msCHAP2Response           = 25
	msCHAP2Success            = 26
	mppePolicyAllowed         = 1 // Encryption-Allowed
	mppeTypesRC4Either40or128 = 6 // RC4 40 or 128 bit
)

var (
	errMSCHAPChallenge = errors.New("mschapv2: MS-CHAP-Challenge is not 16 octets")
	errMSCHAPResponse  = errors.New("mschapv2: MS-CHAP2-Response is not 50 octets")
)

// mschap2 is a decoded MS-CHAPv2 exchange as carried in an Access-Request.
type mschap2 struct {
	ident         byte
	authChallenge [16]byte
	peerChallenge [16]byte
	ntResponse    [24]byte
}

// decodeMSCHAPv2 decodes MS-CHAP-Challenge and MS-CHAP2-Response (RFC 2548
// section 2.3.2: Ident, Flags, Peer-Challenge[16], Reserved[8], Response[24]).
func decodeMSCHAPv2(challenge, response []byte) (mschap2, error) {
	var m mschap2
	if len(challenge) != 16 {
		return m, errMSCHAPChallenge
	}
	if len(response) != 50 {
		return m, errMSCHAPResponse
	}
	m.ident = response[0]
	copy(m.authChallenge[:], challenge)
	copy(m.peerChallenge[:], response[2:18])
	copy(m.ntResponse[:], response[26:50])
	return m, nil
}

// mschapPassword is the password as MS-CHAP hashes it: UTF-8 text as is,
// anything else read as Latin-1 octets (as Windows would for a single-byte
// code page), so the UTF-16LE form rfc2759.ToUTF16 makes is always defined.
func mschapPassword(password string) []byte {
	if utf8.ValidString(password) {
		return []byte(password)
	}
	u := make([]byte, 0, 2*len(password))
	for i := 0; i < len(password); i++ {
		u = utf8.AppendRune(u, rune(password[i]))
	}
	return u
}

// ntPasswordHash is MD4 over the UTF-16LE password (RFC 2759 section 8.3),
// through layeh.com/radius/rfc2759.
func ntPasswordHash(password string) [16]byte {
	var out [16]byte
	u, err := rfc2759.ToUTF16(mschapPassword(password))
	if err != nil {
		return out // unreachable: the input is valid UTF-8; a zero hash matches nothing real
	}
	copy(out[:], rfc2759.NTPasswordHash(u))
	return out
}

// generateNTResponse computes the peer's expected NT-Response (RFC 2759
// section 8.1: ChallengeResponse over ChallengeHash), given the NT hash of
// the password, so a request hashes the password once.
func generateNTResponse(auth, peer []byte, user string, pwHash [16]byte) [24]byte {
	var out [24]byte
	copy(out[:], rfc2759.ChallengeResponse(rfc2759.ChallengeHash(peer, auth, []byte(user)), pwHash[:]))
	return out
}

// authenticatorResponse is the "S=<40 hex>" string the server returns in
// MS-CHAP2-Success (RFC 2759 section 8.7).
func authenticatorResponse(password string, nt, peer, auth []byte, user string) (string, error) {
	return rfc2759.GenerateAuthenticatorResponse(auth, peer, nt, []byte(user), mschapPassword(password))
}

// mppeKeys returns the server's (the NAS's) 128-bit send and receive keys
// (RFC 3079 section 3.4 through layeh.com/radius/rfc3079):
// MS-MPPE-Send-Key is the key the NAS sends with (magic 3 on the server
// side), MS-MPPE-Recv-Key the one it receives with (magic 2).
func mppeKeys(password string, nt []byte) (send, recv []byte, err error) {
	pw := mschapPassword(password)
	if send, err = rfc3079.MakeKey(nt, pw, true); err != nil {
		return nil, nil, err
	}
	if recv, err = rfc3079.MakeKey(nt, pw, false); err != nil {
		return nil, nil, err
	}
	return send, recv, nil
}

// verifyMSCHAPv2 checks the NT-Response in constant time. Windows clients
// put "DOMAIN\user" in User-Name but hash only "user", so on failure the
// part after the last backslash is tried as well (FreeRADIUS'
// with_ntdomain_hack). It returns the name that matched.
func verifyMSCHAPv2(m *mschap2, user string, pwHash [16]byte) (string, bool) {
	want := generateNTResponse(m.authChallenge[:], m.peerChallenge[:], user, pwHash)
	if subtle.ConstantTimeCompare(want[:], m.ntResponse[:]) == 1 {
		return user, true
	}
	for i := len(user) - 1; i >= 0; i-- {
		if user[i] == '\\' {
			short := user[i+1:]
			want = generateNTResponse(m.authChallenge[:], m.peerChallenge[:], short, pwHash)
			if subtle.ConstantTimeCompare(want[:], m.ntResponse[:]) == 1 {
				return short, true
			}
			break
		}
	}
	return "", false
}
