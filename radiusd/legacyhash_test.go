package radiusd

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"testing"
)

func TestLegacyHashPAP(t *testing.T) {
	t.Parallel()
	md := md5.Sum([]byte("password"))
	salt := []byte("NaCl")
	sh := sha1.Sum(append([]byte("password"), salt...))
	smd := md5.Sum(append([]byte("password"), salt...))
	nt := ntPasswordHash("password")
	for _, c := range []struct{ kind, hash string }{
		{"md5", hex.EncodeToString(md[:])},
		{"md5", base64.StdEncoding.EncodeToString(md[:])},
		{"ssha", base64.StdEncoding.EncodeToString(append(sh[:], salt...))},
		{"smd5", base64.StdEncoding.EncodeToString(append(smd[:], salt...))},
		{"nt", hex.EncodeToString(nt[:])},
	} {
		kind, hash, ok := legacyHash(LegacyHashPrefix + c.kind + ":" + c.hash)
		if !ok || !verifyLegacyPAP(kind, hash, []byte("password")) {
			t.Errorf("%s %s: the right password is refused", c.kind, c.hash)
		}
		if verifyLegacyPAP(kind, hash, []byte("Password")) {
			t.Errorf("%s: a wrong password passes", c.kind)
		}
	}
	if _, _, ok := legacyHash("plain"); ok {
		t.Fatal("a clear password read as a hash")
	}
	if verifyLegacyPAP("crypt", "$1$abc$def", []byte("password")) {
		t.Fatal("an unsupported kind matched")
	}
}
