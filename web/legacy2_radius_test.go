package web_test

import (
	"crypto/hmac"
	"crypto/md5"
	"strings"
	"testing"
	"xr/internal/webtest"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"
)

// Passwords imported as Crypt (MD5-crypt $1$, SHA-256-crypt $5$,
// SHA-512-crypt $6$, also behind Password-With-Header's {crypt}) and SHA-2
// (SHA2-Password, SSHA2-256/512-Password, hex or base64) verify by PAP
// through the real RADIUS server, as do a traditional DES crypt
// (daloRADIUS's) and bcrypt; a yescrypt is refused by the import
// (password_hashed); CHAP answers password_reset_required.
// Vectors: `openssl passwd -1/-5/-6 -salt saltsalt password`, `openssl
// dgst -sha256/-sha512` of the password (and salt), perl's crypt on glibc
// for DES, bcrypt and yescrypt.
func TestLegacyCryptAndSHA2OverRadius(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	hashes := [][2]string{
		{"Crypt-Password", "$1$saltsalt$qjXMvbEw8oaL.CzflDtaK/"},
		{"Crypt-Password", "$5$saltsalt$gOjOtoMpVhru2uyjeJSEc/JaLQWOXMNmlOnj6T4AtC."},
		{"Crypt-Password", "$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/"},
		{"Password-With-Header", "{crypt}$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/"},
		{"SHA2-Password", "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"},
		{"SHA2-Password", "sQnzu7wkTrgkQZF+0G1hi5AI3Qmzvv0bXgc5THBqi7mAsdd4Xll27ASbRt9fEyavWi6m0QP9B8lThf+rDKy8hg=="},
		{"SSHA2-256-Password", "LIxUxUSS3lk6ukbn/o44aJ1cM0AjQ2vGuFDalIXUuK5OYUNsIQ=="},
		{"SSHA2-512-Password", "7542291488234e03d5c2cc832aaf77449b65fd92d6021ded11bdfaa51b565f47acf7dd28a6138ad7d6ed4a2ed57ffc4719db0423cc43a9311f7c08ef2ee95e54706570706572"},
		{"Crypt-Password", "abJnggxhB/yWI"}, // DES
		{"Crypt-Password", "$2y$04$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"},
		{"Crypt-Password", "$y$j9T$F5Jx5fExrKuJdUYqS1Wv0.$1vN6DwfmwY70eSy8F0LznewUNGgawEDicCXeiCeMyl7"}, // yescrypt: no library, refused
	}
	pw := map[int]string{6: "password", 7: "password"} // the salted ones hash password+salt
	var dump strings.Builder
	names := make([]string, len(hashes))
	dump.WriteString("INSERT INTO `radcheck` (`username`,`attribute`,`op`,`value`) VALUES ")
	for i, h := range hashes {
		names[i] = "lc-" + webtest.Itoa(int64(i))
		if i > 0 {
			dump.WriteString(",")
		}
		dump.WriteString("('" + names[i] + "','" + h[0] + "',':=','" + h[1] + "'),('" + names[i] + "','Expiration',':=','January 02 2030')")
	}
	dump.WriteString(";\nINSERT INTO `radusergroup` (`username`,`groupname`,`priority`) VALUES ")
	for i, n := range names {
		if i > 0 {
			dump.WriteString(",")
		}
		dump.WriteString("('" + n + "','Home',1)")
	}
	dump.WriteString(";\n")
	r := diUpload(k.Kit, "/admin/legacy/import/jobs", k.Tok, "radius.sql", dump.String())
	if r.Status != 202 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	id := webtest.Itoa(int64(r.Data()["id"].(float64)))
	diRunJobs(t, k.Kit)
	r = k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+id, k.Tok, nil)
	pwk, _ := r.Data()["analysis"].(map[string]any)["passwords"].(map[string]any)
	if pwk["crypt"] != float64(7) || pwk["sha2"] != float64(2) || pwk["ssha2-256"] != float64(1) || pwk["ssha2-512"] != float64(1) {
		t.Fatalf("password kinds %v", pwk)
	}
	if r = k.Do("POST", "acme", "/api/v1/admin/legacy/import/jobs/"+id+"/start", k.Tok, map[string]any{"partial": true}); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	diRunJobs(t, k.Kit)
	r = k.Do("GET", "acme", "/api/v1/admin/legacy/import/jobs/"+id, k.Tok, nil)
	lines, _ := r.Data()["lines"].([]any)
	if r.Data()["state"] != "done" || r.Data()["created"] != float64(len(hashes)-1) || len(lines) != 1 ||
		lines[0].(map[string]any)["reason"] != "password_hashed" || lines[0].(map[string]any)["username"] != names[len(names)-1] {
		t.Fatalf("%s", r.Body)
	}
	if n := k.Scalar(`SELECT count(*) FROM users WHERE username = ?`, names[len(names)-1]); n.Int64 != 0 {
		t.Fatal("the yescrypt subscriber was imported")
	}
	for i, n := range names[:len(names)-1] {
		right := "password"
		if p, ok := pw[i]; ok {
			right = p
		}
		if got := k.Auth(n, right); got != radius.CodeAccessAccept {
			t.Errorf("%s (%s): PAP with the right password: %v", n, hashes[i][0], got)
		}
		if got := k.Auth(n, "Password"); got != radius.CodeAccessReject {
			t.Errorf("%s (%s): PAP with a wrong password: %v", n, hashes[i][0], got)
		}
	}
	// CHAP cannot verify a hash: password_reset_required.
	p := radius.New(radius.CodeAccessRequest, []byte(webtest.RadiusSecret))
	rfc2865.UserName_SetString(p, names[2])
	h := md5.New()
	h.Write([]byte{7})
	h.Write([]byte("password"))
	h.Write(p.Authenticator[:])
	rfc2865.CHAPPassword_Set(p, append([]byte{7}, h.Sum(nil)...))
	rfc2869.MessageAuthenticator_Set(p, make([]byte, 16))
	b, _ := p.Encode()
	mac := hmac.New(md5.New, []byte(webtest.RadiusSecret))
	mac.Write(b)
	rfc2869.MessageAuthenticator_Set(p, mac.Sum(nil))
	res := k.Exchange(p, k.AuthAddr)
	if msg := rfc2865.ReplyMessage_GetString(res); res.Code != radius.CodeAccessReject || !strings.Contains(msg, "password reset required") {
		t.Fatalf("CHAP of a crypt password: %v %q", res.Code, msg)
	}
}
