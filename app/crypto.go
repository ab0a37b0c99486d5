package app

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	"golang.org/x/crypto/argon2"
)

// NewUUID returns a random v4 UUID (github.com/google/uuid), lower-case.
func NewUUID() string { return uuid.NewString() }

// RandomToken returns n random bytes as base64url without padding.
func RandomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Keys are the instance secrets: one for signing tokens, one for encrypting
// recoverable secrets (RADIUS passwords, NAS secrets, API tokens for reveal).
// During a rotation (xr keys rotate) Open also accepts values sealed under
// the previous encryption keys; Seal always uses the current one.
type Keys struct {
	Sign []byte
	Enc  []byte // current sealing key; read it through sealing()

	mu   sync.RWMutex
	prev [][]byte // older sealing keys Open still accepts
}

// sealing returns the current sealing key and the previous ones.
func (k *Keys) sealing() ([]byte, [][]byte) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.Enc, k.prev
}

// setSealing swaps the sealing keys in place, so every holder of k (the
// running server) seals under the new key from now on.
func (k *Keys) setSealing(enc []byte, prev [][]byte) {
	k.mu.Lock()
	k.Enc, k.prev = enc, prev
	k.mu.Unlock()
}

// Seal encrypts plaintext with AES-256-GCM under the current key; the nonce
// is prepended.
func (k *Keys) Seal(plaintext []byte) []byte {
	enc, _ := k.sealing()
	return sealWith(enc, plaintext, nil)
}

// Open decrypts what Seal produced, under the current key or, during a
// rotation, a previous one.
func (k *Keys) Open(sealed []byte) ([]byte, error) {
	enc, prev := k.sealing()
	p, err := openWith(enc, sealed, nil)
	if err == nil {
		return p, nil
	}
	for _, old := range prev {
		if p, err2 := openWith(old, sealed, nil); err2 == nil {
			return p, nil
		}
	}
	return nil, err
}

// sealWith is AES-256-GCM under key with a random nonce, prepended.
func sealWith(key, plaintext, aad []byte) []byte {
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("app: sealing key: " + err.Error()) // keys are 32 bytes by construction
	}
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	return gcm.Seal(nonce, nonce, plaintext, aad)
}

// openWith reverses sealWith.
func openWith(key, sealed, aad []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if len(sealed) < gcm.NonceSize() {
		return nil, errors.New("sealed value too short")
	}
	return gcm.Open(nil, sealed[:gcm.NonceSize()], sealed[gcm.NonceSize():], aad)
}

// MAC is HMAC-SHA256 of msg under the signing key.
func (k *Keys) MAC(msg []byte) []byte {
	m := hmac.New(sha256.New, k.Sign)
	m.Write(msg)
	return m.Sum(nil)
}

// SHA256 hashes a secret for lookup (API tokens, refresh tokens).
func SHA256(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// argon2id parameters: OWASP's minimum (19 MiB, 2 passes, 1 lane), which
// keeps a login near 30 ms on a 2-core box.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

// Test cost: 1 pass over 64 KiB. Hashing with the real cost was 40 % of
// the web tests' CPU (every tenant's owner, every manager and every
// login); what the tests check (a hash verifies, a wrong password does
// not, the encoding) does not depend on the cost, which the hash carries.
const (
	argonTestTime   = 1
	argonTestMemory = 64
)

// lowPasswordCost is set by LowerPasswordCostForTests, never by xr.
var lowPasswordCost atomic.Bool

// LowerPasswordCostForTests makes HashPassword use the test cost for the
// rest of the process. Only test kits call it (internal/xrtest); xr's
// binary never does, and TestPasswordCost holds the production cost.
func LowerPasswordCostForTests() { lowPasswordCost.Store(true) }

// argonCost is the passes and memory (KiB) HashPassword uses.
func argonCost(low bool) (passes, kib uint32) {
	if low {
		return argonTestTime, argonTestMemory
	}
	return argonTime, argonMemory
}

// HashPassword returns an encoded argon2id hash.
func HashPassword(pw string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	passes, kib := argonCost(lowPasswordCost.Load())
	key := argon2.IDKey([]byte(pw), salt, passes, kib, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", kib, passes, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// dummyHash is verified against when the account does not exist, so an
// unknown user costs the same time as a wrong password. It is made on
// first use: argon2 takes 19 MiB, which an idle server need not hold.
var dummyHash = sync.OnceValue(func() string { return HashPassword("xr-dummy-password") })

// VerifyPassword checks pw against an encoded hash in constant time. An
// empty hash (unknown account) is checked against a dummy, always false.
func VerifyPassword(encoded, pw string) bool {
	if encoded == "" {
		verify(dummyHash(), pw)
		return false
	}
	return verify(encoded, pw)
}

func verify(encoded, pw string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// CheckPasswordStrength is the policy for staff and portal passwords:
// at least 8 characters, not all of one class.
func CheckPasswordStrength(pw, field string) error {
	if len(pw) < 8 {
		return ErrValidation("password_too_short", field)
	}
	if len(pw) > 256 {
		return ErrValidation("password_too_long", field)
	}
	var lower, upper, digit, other bool
	for _, r := range pw {
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	n := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			n++
		}
	}
	if n < 2 {
		return ErrValidation("password_too_weak", field)
	}
	return nil
}

// RandomBytes returns n random bytes.
func RandomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}
