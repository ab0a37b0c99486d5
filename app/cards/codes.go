package cards

import (
	"crypto/rand"
	"math"
	"strings"
)

// Code alphabets. Codes are upper-case: lookups normalise what a person
// typed (upper-case, spaces and dashes dropped) before comparing.
// alnum_no_ambig drops the characters people confuse when reading a
// scratch card aloud: 0/O and 1/I (and lower-case l, which never appears).
var charsets = map[string]string{
	"numeric":        "0123456789",
	"alpha":          "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"alnum":          "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"alnum_no_ambig": "23456789ABCDEFGHJKLMNPQRSTUVWXYZ",
}

// Charsets lists the accepted code_charset values.
var Charsets = []string{"numeric", "alpha", "alnum", "alnum_no_ambig"}

const (
	// GuessBound is the probability that one guessed code names a live
	// card: live_codes / charset^length ≤ GuessBound. With the per-operator
	// card_redeem bucket (60/min) and the public per-IP bucket, an attacker
	// needs on the order of 1/GuessBound = 10^6 attempts for one expected
	// hit, i.e. about 11.5 days of saturating one bucket.
	GuessBound = 1e-6
	// MinCodeLength and MaxCodeLength bound code_length.
	MinCodeLength = 6
	MaxCodeLength = 32
	// loginAlphabet: usernames of prepaid logins (lower-case, no 0/o/1/l/i).
	loginAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"
	loginLength   = 10
	// passwordAlphabet: digits are easy to type on a phone's captive page.
	passwordAlphabet = "0123456789"
	passwordLength   = 8
)

// RequiredCodeLength is the shortest code length over charset that keeps
// the guess probability at most GuessBound once the tenant holds live codes
// (unused cards, the new series included): charset^L ≥ live / GuessBound.
func RequiredCodeLength(charset string, live int64) int {
	n := float64(len(charsets[charset]))
	if n < 2 {
		return MaxCodeLength
	}
	live = max(live, 1)
	need := float64(live) / GuessBound
	l := int(math.Ceil(math.Log(need)/math.Log(n) - 1e-9))
	// Float rounding: make sure n^l really reaches the target.
	for math.Pow(n, float64(l)) < need {
		l++
	}
	return min(max(l, MinCodeLength), MaxCodeLength)
}

// NormalizeCode is what a typed or scanned code is compared as: the QR
// prefix xr:c: removed, upper-case, spaces and dashes dropped.
func NormalizeCode(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= len(QRPrefix) && strings.EqualFold(s[:len(QRPrefix)], QRPrefix) {
		s = s[len(QRPrefix):]
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case ' ', '-', '\t':
			continue
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// QRPrefix starts the payload of a card's QR code: "xr:c:" + code. A
// scanner strips it (lookups accept it too), as xr:u: for subscribers.
const QRPrefix = "xr:c:"

// randSource draws uniform symbols from crypto/rand, reading in blocks.
type randSource struct {
	buf []byte
	pos int
}

func newRandSource() *randSource { return &randSource{buf: make([]byte, 4096), pos: 4096} }

func (r *randSource) byte() byte {
	if r.pos == len(r.buf) {
		if _, err := rand.Read(r.buf); err != nil {
			panic("crypto/rand: " + err.Error()) // never fails on supported platforms
		}
		r.pos = 0
	}
	b := r.buf[r.pos]
	r.pos++
	return b
}

// str returns n symbols of alphabet, uniformly (rejection sampling).
func (r *randSource) str(alphabet string, n int) string {
	k := len(alphabet)
	limit := 256 - 256%k
	out := make([]byte, n)
	for i := 0; i < n; {
		b := int(r.byte())
		if b >= limit {
			continue
		}
		out[i] = alphabet[b%k]
		i++
	}
	return string(out)
}
