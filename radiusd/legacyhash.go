package radiusd

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"xr/app/aaa"
)

// Passwords imported hashed from a legacy system (app/dataimport) are
// stored as LegacyHashPrefix + kind + ":" + the hash as FreeRADIUS held
// it. PAP verifies them; CHAP and MS-CHAP cannot (they need the clear
// password), so such a subscriber is refused with ReasonPasswordReset
// until the password is reset.
const LegacyHashPrefix = aaa.LegacyHashPrefix

// ReasonPasswordReset refuses CHAP/MS-CHAP for a hashed legacy password.
const ReasonPasswordReset = aaa.ReasonPasswordReset

// legacyHash splits a stored legacy hash; ok false for a clear password.
func legacyHash(pw string) (kind, hash string, ok bool) {
	rest, found := strings.CutPrefix(pw, LegacyHashPrefix)
	if !found {
		return "", "", false
	}
	kind, hash, ok = strings.Cut(rest, ":")
	return kind, hash, ok
}

// decodeHash reads a hash written in hex or base64.
func decodeHash(s string, size int) []byte {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) >= size {
		return b
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) >= size {
		return b
	}
	return nil
}

// verifyLegacyPAP checks a PAP password against a legacy hash: md5
// (MD5-Password), smd5 (salted MD5), sha (SHA1-Password), ssha (salted
// SHA-1), nt (NT-Password). Unknown kinds never match.
func verifyLegacyPAP(kind, hash string, pap []byte) bool {
	switch kind {
	case "md5", "smd5":
		want := decodeHash(hash, md5.Size)
		if want == nil || (kind == "md5" && len(want) != md5.Size) {
			return false
		}
		h := md5.New()
		h.Write(pap)
		h.Write(want[md5.Size:])
		return subtle.ConstantTimeCompare(h.Sum(nil), want[:md5.Size]) == 1
	case "sha", "ssha":
		want := decodeHash(hash, sha1.Size)
		if want == nil || (kind == "sha" && len(want) != sha1.Size) {
			return false
		}
		h := sha1.New()
		h.Write(pap)
		h.Write(want[sha1.Size:])
		return subtle.ConstantTimeCompare(h.Sum(nil), want[:sha1.Size]) == 1
	case "nt":
		want := decodeHash(hash, 16)
		if len(want) != 16 {
			return false
		}
		got := ntPasswordHash(string(pap))
		return subtle.ConstantTimeCompare(got[:], want) == 1
	}
	// crypt ($1$ $5$ $6$), sha2, ssha2 (app/aaa/legacycrypt.go).
	ok, _ := aaa.VerifyLegacyCrypt(kind, hash, pap)
	return ok
}
