package aaa

import "testing"

// Vectors: `openssl passwd -1/-5/-6 -salt saltsalt password` and `openssl
// dgst -sha256/-sha512` of the password (salted: password+salt, the salt
// appended to the digest); DES, bcrypt and yescrypt from perl's crypt on
// glibc.
func TestVerifyLegacyCrypt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ kind, hash string }{
		{"crypt", "$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/"},
		{"crypt", "$5$saltsalt$gOjOtoMpVhru2uyjeJSEc/JaLQWOXMNmlOnj6T4AtC."},
		{"crypt", "$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/"},
		{"sha2", "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
		{"sha2", "sQnzu7wkTrgkQZF+0G1hi5AI3Qmzvv0bXgc5THBqi7mAsdd4Xll27ASbRt9fEyavWi6m0QP9B8lThf+rDKy8hg=="},
		{"ssha2-256", "LIxUxUSS3lk6ukbn/o44aJ1cM0AjQ2vGuFDalIXUuK5OYUNsIQ=="},
		{"ssha2", "LIxUxUSS3lk6ukbn/o44aJ1cM0AjQ2vGuFDalIXUuK5OYUNsIQ=="},
		{"ssha2-512", "7542291488234e03d5c2cc832aaf77449b65fd92d6021ded11bdfaa51b565f47acf7dd28a6138ad7d6ed4a2ed57ffc4719db0423cc43a9311f7c08ef2ee95e54706570706572"},
		{"crypt", "abJnggxhB/yWI"}, // DES (descrypt.go)
		{"crypt", "$2b$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"},
		{"crypt", "$2y$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"},
	} {
		if !LegacyKindSupported(c.kind, c.hash) {
			t.Errorf("%s %s: not supported", c.kind, c.hash)
		}
		if ok, handled := VerifyLegacyCrypt(c.kind, c.hash, []byte("password")); !ok || !handled {
			t.Errorf("%s %s: the right password is refused", c.kind, c.hash)
		}
		if ok, _ := VerifyLegacyCrypt(c.kind, c.hash, []byte("Password")); ok {
			t.Errorf("%s %s: a wrong password passes", c.kind, c.hash)
		}
	}
	// yescrypt has no library: not importable, never matches.
	const yescrypt = "$y$j9T$F5Jx5fExrKuJdUYqS1Wv0.$1vN6DwfmwY70eSy8F0LznewUNGgawEDicCXeiCeMyl7"
	if LegacyKindSupported("crypt", yescrypt) {
		t.Fatal("yescrypt reported supported")
	}
	if ok, handled := VerifyLegacyCrypt("crypt", yescrypt, []byte("password")); ok || !handled {
		t.Fatal("yescrypt matched")
	}
	if _, handled := VerifyLegacyCrypt("md5", "x", nil); handled {
		t.Fatal("md5 is radiusd's")
	}
}
