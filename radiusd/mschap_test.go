package radiusd

import (
	"bytes"
	"fmt"
	"testing"

	"layeh.com/radius/rfc2759"
	"layeh.com/radius/rfc3079"
)

// RFC 2759 section 9.2 and RFC 3079 section 3.5.3 test vectors (User
// "User", password "clientPass").
func TestMSCHAPv2RFCVectors(t *testing.T) {
	t.Parallel()
	hexs := func(b []byte) string { return fmt.Sprintf("%X", b) }

	pwHash := ntPasswordHash("clientPass")
	if got := hexs(pwHash[:]); got != "44EBBA8D5312B8D611474411F56989AE" {
		t.Errorf("NtPasswordHash %s", got)
	}
	hh := rfc2759.NTPasswordHash(pwHash[:])
	if got := hexs(hh); got != "41C00C584BD2D91C4017A2A12FA59F3F" {
		t.Errorf("PasswordHashHash %s", got)
	}
	if got := hexs(rfc2759.ChallengeHash(rfcPeerChallenge, rfcAuthChallenge, []byte("User"))); got != "D02E4386BCE91226" {
		t.Errorf("ChallengeHash %s", got)
	}
	nt := generateNTResponse(rfcAuthChallenge, rfcPeerChallenge, "User", pwHash)
	if !bytes.Equal(nt[:], rfcNTResponse) {
		t.Errorf("NT-Response %X", nt)
	}
	if got, err := authenticatorResponse("clientPass", nt[:], rfcPeerChallenge, rfcAuthChallenge, "User"); err != nil || got != "S=407A5589115FD0D6209F510FE9C04566932CDA56" {
		t.Errorf("AuthenticatorResponse %s %v", got, err)
	}
	if got := hexs(rfc3079.GetMasterKey(hh, nt[:])); got != "FDECE3717A8C838CB388E527AE3CDD31" {
		t.Errorf("MasterKey %s", got)
	}
	// The RFC's SendStartKey128 is derived on the server side (magic 3):
	// the key the NAS sends with, i.e. MS-MPPE-Send-Key.
	send, recv, err := mppeKeys("clientPass", nt[:])
	if err != nil {
		t.Fatal(err)
	}
	if got := hexs(send); got != "8B7CDC149B993A1BA118CB153F56DCCB" {
		t.Errorf("SendStartKey128 %s", got)
	}
	// The receive key uses magic 2; it is the peer's send key. Value as
	// computed by other independent implementations of RFC 3079.
	if got := hexs(recv); got != "D5F0E9521E3EA9589645E86051C82226" {
		t.Errorf("ReceiveStartKey128 %s", got)
	}
}

func TestMSCHAPv2Verify(t *testing.T) {
	t.Parallel()
	m, err := decodeMSCHAPv2(rfcAuthChallenge, append(append(append([]byte{1, 0}, rfcPeerChallenge...), make([]byte, 8)...), rfcNTResponse...))
	if err != nil {
		t.Fatal(err)
	}
	h := ntPasswordHash("clientPass")
	if name, ok := verifyMSCHAPv2(&m, "User", h); !ok || name != "User" {
		t.Fatal("RFC vector not verified")
	}
	if name, ok := verifyMSCHAPv2(&m, `DOMAIN\User`, h); !ok || name != "User" {
		t.Fatal("domain prefix not stripped for the challenge hash")
	}
	if _, ok := verifyMSCHAPv2(&m, "User", ntPasswordHash("clientPasS")); ok {
		t.Fatal("wrong password verified")
	}
	if _, err := decodeMSCHAPv2(rfcAuthChallenge[:15], make([]byte, 50)); err == nil {
		t.Fatal("short challenge accepted")
	}
	if _, err := decodeMSCHAPv2(rfcAuthChallenge, make([]byte, 49)); err == nil {
		t.Fatal("short response accepted")
	}
	// Non-ASCII passwords hash as UTF-16LE, astral characters as pairs.
	if a, b := ntPasswordHash("pä𝄞"), ntPasswordHash("pa𝄞"); a == b {
		t.Fatal("non-ASCII characters ignored")
	}
	// Not UTF-8: the octets read as Latin-1 ("\xe4" is "ä").
	if a, b := ntPasswordHash("p\xe4ss"), ntPasswordHash("päss"); a != b {
		t.Fatal("a Latin-1 password hashes unlike its UTF-8 spelling")
	}
}
