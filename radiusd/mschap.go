package radiusd

import (
	"crypto/des"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/crypto/md4" //nolint:staticcheck // MS-CHAP mandates MD4 (RFC 2759)
)

// MS-CHAPv2 (RFC 2759) and MPPE key derivation (RFC 3079, carried per RFC
// 2548). Only standard primitives are used: MD4 from x/crypto, SHA-1 and DES
// from the standard library; this file is the RFC's composition of them.

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

// ntPasswordHash is MD4 over the UTF-16LE password (RFC 2759 section 8.3).
func ntPasswordHash(password string) [16]byte {
	var buf [512]byte
	u := buf[:0]
	if utf8.ValidString(password) {
		for _, r := range password {
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				u = append(u, byte(r1), byte(r1>>8), byte(r2), byte(r2>>8))
			} else {
				u = append(u, byte(r), byte(r>>8))
			}
		}
	} else {
		// Not UTF-8: treat octets as Latin-1, as Windows would for a
		// single-byte code page.
		for i := 0; i < len(password); i++ {
			u = append(u, password[i], 0)
		}
	}
	h := md4.New()
	h.Write(u)
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// hashNTPasswordHash is MD4 of the NT hash (RFC 2759 section 8.4).
func hashNTPasswordHash(h [16]byte) [16]byte {
	d := md4.New()
	d.Write(h[:])
	var out [16]byte
	d.Sum(out[:0])
	return out
}

// challengeHash is SHA1(PeerChallenge+AuthenticatorChallenge+UserName)[:8]
// (RFC 2759 section 8.2).
func challengeHash(peer, auth []byte, user string) [8]byte {
	h := sha1.New()
	h.Write(peer)
	h.Write(auth)
	h.Write([]byte(user))
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var out [8]byte
	copy(out[:], sum[:8])
	return out
}

// desKey spreads 7 key octets over the 8 octets DES expects; crypto/des
// ignores the parity bits, so they stay zero (RFC 2759 section 8.6).
func desKey(k []byte) [8]byte {
	return [8]byte{
		k[0],
		k[0]<<7 | k[1]>>1,
		k[1]<<6 | k[2]>>2,
		k[2]<<5 | k[3]>>3,
		k[3]<<4 | k[4]>>4,
		k[4]<<3 | k[5]>>5,
		k[5]<<2 | k[6]>>6,
		k[6] << 1,
	}
}

// challengeResponse DES-encrypts the challenge under the three 7-octet
// thirds of the zero-padded password hash (RFC 2759 section 8.5).
func challengeResponse(ch [8]byte, pwHash [16]byte) [24]byte {
	var z [21]byte
	copy(z[:], pwHash[:])
	var out [24]byte
	for i := 0; i < 3; i++ {
		k := desKey(z[i*7 : i*7+7])
		c, err := des.NewCipher(k[:])
		if err != nil {
			panic(err) // unreachable: the key is always 8 octets
		}
		c.Encrypt(out[i*8:i*8+8], ch[:])
	}
	return out
}

// generateNTResponse computes the peer's expected NT-Response (RFC 2759
// section 8.1), given the NT hash of the password.
func generateNTResponse(auth, peer []byte, user string, pwHash [16]byte) [24]byte {
	return challengeResponse(challengeHash(peer, auth, user), pwHash)
}

var (
	// RFC 2759 section 8.7 constants.
	authMagic1 = []byte("Magic server to client signing constant")
	authMagic2 = []byte("Pad to make it do more than one iteration")
	// RFC 3079 section 3.4 constants.
	mppeMagic1 = []byte("This is the MPPE Master Key")
	mppeMagic2 = []byte("On the client side, this is the send key; on the server side, it is the receive key.")
	mppeMagic3 = []byte("On the client side, this is the receive key; on the server side, it is the send key.")
	shsPad1    = make([]byte, 40)
	shsPad2    = []byte{
		0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
		0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
		0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
		0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2, 0xf2,
	}
)

// authenticatorResponse is the "S=<40 hex>" string the server returns in
// MS-CHAP2-Success (RFC 2759 section 8.7).
func authenticatorResponse(pwHash [16]byte, nt, peer, auth []byte, user string) string {
	hh := hashNTPasswordHash(pwHash)
	h := sha1.New()
	h.Write(hh[:])
	h.Write(nt)
	h.Write(authMagic1)
	var digest [sha1.Size]byte
	h.Sum(digest[:0])
	ch := challengeHash(peer, auth, user)
	h.Reset()
	h.Write(digest[:])
	h.Write(ch[:])
	h.Write(authMagic2)
	h.Sum(digest[:0])
	var out [2 + 2*sha1.Size]byte
	out[0], out[1] = 'S', '='
	hex.Encode(out[2:], digest[:])
	for i := 2; i < len(out); i++ { // the RFC prints upper-case hex
		if out[i] >= 'a' {
			out[i] -= 'a' - 'A'
		}
	}
	return string(out[:])
}

// masterKey is RFC 3079 section 3.4 GetMasterKey.
func masterKey(pwHashHash [16]byte, nt []byte) [16]byte {
	h := sha1.New()
	h.Write(pwHashHash[:])
	h.Write(nt)
	h.Write(mppeMagic1)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var out [16]byte
	copy(out[:], sum[:16])
	return out
}

// asymmetricStartKey is RFC 3079 GetAsymmetricStartKey for a 128-bit key,
// with the magic chosen by the caller.
func asymmetricStartKey(master [16]byte, magic []byte) [16]byte {
	h := sha1.New()
	h.Write(master[:])
	h.Write(shsPad1)
	h.Write(magic)
	h.Write(shsPad2)
	var sum [sha1.Size]byte
	h.Sum(sum[:0])
	var out [16]byte
	copy(out[:], sum[:16])
	return out
}

// mppeKeys returns the server's (the NAS's) 128-bit send and receive keys:
// MS-MPPE-Send-Key is the key the NAS sends with (RFC 3079 magic 3 on the
// server side), MS-MPPE-Recv-Key the one it receives with (magic 2).
func mppeKeys(pwHash [16]byte, nt []byte) (send, recv [16]byte) {
	mk := masterKey(hashNTPasswordHash(pwHash), nt)
	return asymmetricStartKey(mk, mppeMagic3), asymmetricStartKey(mk, mppeMagic2)
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
