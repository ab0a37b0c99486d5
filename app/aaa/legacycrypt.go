package aaa

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/GehirnInc/crypt"
	_ "github.com/GehirnInc/crypt/md5_crypt"    // $1$
	_ "github.com/GehirnInc/crypt/sha256_crypt" // $5$
	_ "github.com/GehirnInc/crypt/sha512_crypt" // $6$
	"golang.org/x/crypto/bcrypt"
)

// Crypt and SHA-2 legacy hashes (beside LegacyHashKinds' md5, smd5, sha,
// ssha, nt):
//
//   - crypt: FreeRADIUS's Crypt-Password ({crypt}): MD5-crypt $1$,
//     SHA-256-crypt $5$ and SHA-512-crypt $6$ through
//     github.com/GehirnInc/crypt, bcrypt $2a$/$2b$/$2y$ through
//     golang.org/x/crypto/bcrypt, and traditional DES crypt (13
//     characters, daloRADIUS's) in descrypt.go. Others (yescrypt $y$,
//     BSDi's _ DES) are not importable: the subscriber needs a new
//     password.
//   - sha2: SHA2-Password, an unsalted SHA-224/256/384/512 digest (the
//     length tells which), hex or base64.
//   - ssha2-256, ssha2-512 (and ssha2-224, ssha2-384): SSHA2-256-Password
//     and its siblings, the digest followed by the salt, hex or base64;
//     ssha2 (a {ssha2} header) tries every size.

// CryptSupported reports whether a Crypt-Password value can be verified.
func CryptSupported(hash string) bool {
	return strings.HasPrefix(hash, "$1$") || strings.HasPrefix(hash, "$5$") || strings.HasPrefix(hash, "$6$") || isBcrypt(hash) || isDESCrypt(hash)
}

// isBcrypt reports whether hash names a bcrypt version x/crypto/bcrypt
// reads.
func isBcrypt(hash string) bool {
	return strings.HasPrefix(hash, "$2a$") || strings.HasPrefix(hash, "$2b$") || strings.HasPrefix(hash, "$2y$")
}

// LegacyKindSupported reports whether PAP can verify a legacy hash of
// this kind and value (the value matters for crypt only).
func LegacyKindSupported(kind, hash string) bool {
	if kind == "crypt" {
		return CryptSupported(strings.TrimSpace(hash))
	}
	_, salted := ssha2Sizes[kind]
	return LegacyHashKinds[kind] || kind == "sha2" || salted
}

// ssha2Sizes are the digest sizes of each salted SHA-2 kind.
var ssha2Sizes = map[string][]int{"ssha2": {sha512.Size, sha512.Size384, sha256.Size, sha256.Size224},
	"ssha2-512": {sha512.Size}, "ssha2-384": {sha512.Size384}, "ssha2-256": {sha256.Size}, "ssha2-224": {sha256.Size224}}

// VerifyLegacyCrypt checks a PAP password against a crypt or SHA-2
// legacy hash; handled is false for the other kinds.
func VerifyLegacyCrypt(kind, hash string, pap []byte) (ok, handled bool) {
	switch kind {
	case "crypt":
		hash = strings.TrimSpace(hash)
		if isDESCrypt(hash) {
			return verifyDESCrypt(hash, pap), true
		}
		if isBcrypt(hash) {
			return bcrypt.CompareHashAndPassword([]byte(hash), pap) == nil, true
		}
		if !CryptSupported(hash) || !crypt.IsHashSupported(hash) {
			return false, true
		}
		return crypt.NewFromHash(hash).Verify(hash, pap) == nil, true
	case "sha2", "ssha2", "ssha2-224", "ssha2-256", "ssha2-384", "ssha2-512":
		want := decodeDigest(hash)
		sizes, salted := ssha2Sizes[kind]
		if !salted {
			sizes = ssha2Sizes["ssha2"]
		}
		for _, size := range sizes {
			if len(want) < size || (!salted && len(want) != size) || (salted && len(want) == size) {
				continue
			}
			if subtle.ConstantTimeCompare(sha2Sum(size, pap, want[size:]), want[:size]) == 1 {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

func sha2Sum(size int, pap, salt []byte) []byte {
	b := append(append([]byte{}, pap...), salt...)
	switch size {
	case sha512.Size:
		s := sha512.Sum512(b)
		return s[:]
	case sha512.Size384:
		s := sha512.Sum384(b)
		return s[:]
	case sha256.Size:
		s := sha256.Sum256(b)
		return s[:]
	default:
		s := sha256.Sum224(b)
		return s[:]
	}
}

// decodeDigest reads a digest written in hex or base64 (with or without
// padding); nil when neither.
func decodeDigest(s string) []byte {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) > 0 {
		return b
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) > 0 {
			return b
		}
	}
	return nil
}
