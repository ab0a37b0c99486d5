package aaa

import (
	"crypto/des"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// The cipher under the unperturbed expansion is DES: the same blocks as
// crypto/des for random keys and blocks.
func TestDESMatchesCryptoDES(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		key, block := r.Uint64(), r.Uint64()
		var k, in, want [8]byte
		binary.BigEndian.PutUint64(k[:], key)
		binary.BigEndian.PutUint64(in[:], block)
		c, err := des.NewCipher(k[:])
		if err != nil {
			t.Fatal(err)
		}
		c.Encrypt(want[:], in[:])
		ks := desKeySchedule(key)
		if got := desEncrypt(block, &ks, &desE); got != binary.BigEndian.Uint64(want[:]) {
			t.Fatalf("key %x block %x: %x, want %x", key, block, got, want)
		}
	}
}

// Hashes written by the system's crypt(3) (perl's crypt on glibc):
// passwords past 8 bytes count their first 8 only, bytes above 127 lose
// their high bit, every salt character class.
func TestDESCryptVectors(t *testing.T) {
	t.Parallel()
	for _, v := range [][2]string{
		{"test", "abgOeLfPimXQo"},
		{"test", "./H7.I.sVn7zo"},
		{"test", "zZ2FT51eQDxN6"},
		{"test", "SALwWlL5CAfNE"},
		{"test", "9/GYZzPv6a5V2"},
		{"password", "abJnggxhB/yWI"},
		{"password", "./xZjzHv5vzVE"},
		{"password", "zZDDIZ0NOlPzw"},
		{"password", "SA01VjfokepR."},
		{"password", "9/jR6Pjlc5.qY"},
		{"a,b \"c\"", "abMuaTtPgOhYM"},
		{"a,b \"c\"", "./CzYCbQvJ9E6"},
		{"a,b \"c\"", "zZ9N.Mwqlj3Zk"},
		{"a,b \"c\"", "SAB1pv4zB2ff2"},
		{"a,b \"c\"", "9/YQ1gooUXIyI"},
		{"longerthan8chars", "abNyxOnyxSgjw"},
		{"longerthan8chars", "./haKoGjqSo/Y"},
		{"longerthan8chars", "zZTmz5tm4KJnQ"},
		{"longerthan8chars", "SAiWfEtE8B/6A"},
		{"longerthan8chars", "9/xYu2kz5scKU"},
		{"", "abmF1QH4PEr.E"},
		{"", "./Una9Fi.seRo"},
		{"", "zZO7u0HfQST3A"},
		{"", "SA5pDi1UPZdys"},
		{"", "9/fPnaaPEtmu6"},
		{"\xe9t\xe9", "abGXCZdt888ZI"},
		{"\xe9t\xe9", "./V5Xz9UojhhI"},
		{"\xe9t\xe9", "zZabAhOSzWXYE"},
		{"\xe9t\xe9", "SAob38r1yJ.q."},
		{"\xe9t\xe9", "9/2JHYAWFUKAs"},
		{"P@ss w0rd!", "abi9Cj9mJ9Gpw"},
		{"P@ss w0rd!", "./YVfuP0AFlNE"},
		{"P@ss w0rd!", "zZzskn/7ivFq6"},
		{"P@ss w0rd!", "SAr9Ss.gVyGe6"},
		{"P@ss w0rd!", "9/fmDXDDlkUFQ"}} {
		if got := desCrypt([]byte(v[0]), v[1][:2]); got != v[1] {
			t.Errorf("crypt(%q, %q) = %q, want %q", v[0], v[1][:2], got, v[1])
		}
		if !verifyDESCrypt(v[1], []byte(v[0])) || verifyDESCrypt(v[1], []byte(v[0]+"x")) && len(v[0]) < 8 {
			t.Errorf("verify %q against %q", v[0], v[1])
		}
	}
	for _, h := range []string{"", "abgOeLfPimXQ", "abgOeLfPimXQoo", "ab gOeLfPimXQ", "$1$abc$defghij"} {
		if isDESCrypt(h) {
			t.Errorf("%q taken for a DES crypt", h)
		}
	}
}
