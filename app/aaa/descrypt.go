package aaa

import (
	"crypto/subtle"
	"encoding/binary"
)

// Traditional DES crypt(3): the Crypt-Password that MySQL's ENCRYPT() and
// PHP's crypt() with a two-character salt write, which daloRADIUS stores.
// No maintained Go library verifies it (GehirnInc/crypt, go-crypt/crypt
// and tredoe/osutil have the $n$ schemes only) and crypto/des cannot: the
// salt perturbs DES's expansion, which the package does not expose. So
// DES is written out here, for verifying imported hashes only (xr never
// creates one), after FIPS 46-3 with the tables in crypto/des's bit order
// (each entry counts bits from the least significant). The tests hold it
// to crypto/des for the cipher and to the system's crypt(3) for the hash.
//
// A hash is 2 salt characters and 11 of the 64-bit result, both in crypt's
// alphabet ./0-9A-Za-z. The key is the first 8 bytes of the password, 7
// bits of each; a block of zeros is encrypted 25 times with the salt's 12
// bits each swapping a pair of the expansion's outputs.

// desAlphabet is crypt's base-64 alphabet.
const desAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// isDESCrypt reports whether hash has the form of a traditional DES crypt.
func isDESCrypt(hash string) bool {
	if len(hash) != 13 {
		return false
	}
	for i := 0; i < len(hash); i++ {
		if desIndex(hash[i]) < 0 {
			return false
		}
	}
	return true
}

func desIndex(c byte) int {
	switch {
	case c == '.' || c == '/':
		return int(c - '.')
	case c >= '0' && c <= '9':
		return int(c-'0') + 2
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 12
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 38
	}
	return -1
}

// verifyDESCrypt checks pw against a DES crypt hash.
func verifyDESCrypt(hash string, pw []byte) bool {
	return isDESCrypt(hash) && subtle.ConstantTimeCompare([]byte(desCrypt(pw, hash[:2])), []byte(hash)) == 1
}

// desCrypt is crypt(3) of pw with a two-character salt.
func desCrypt(pw []byte, salt string) string {
	var key [8]byte
	for i := 0; i < len(key) && i < len(pw); i++ {
		key[i] = pw[i] << 1
	}
	e := desE
	saltBits := desIndex(salt[0]) | desIndex(salt[1])<<6
	for i := 0; i < 12; i++ {
		if saltBits>>i&1 == 1 {
			e[i], e[i+24] = e[i+24], e[i]
		}
	}
	ks := desKeySchedule(binary.BigEndian.Uint64(key[:]))
	var block uint64
	for range 25 {
		block = desEncrypt(block, &ks, &e)
	}
	out := make([]byte, 0, 13)
	out = append(out, salt[0], salt[1])
	for i := 0; i < 11; i++ { // 66 bits: the 64 and two zeros
		shift := 58 - 6*i
		var v uint64
		if shift >= 0 {
			v = block >> shift
		} else {
			v = block << -shift
		}
		out = append(out, desAlphabet[v&0x3f])
	}
	return string(out)
}

// desPermute builds a value of len(table) bits whose bit at each position
// (from the most significant) is src's bit numbered by the table entry.
func desPermute(table []byte, src uint64) uint64 {
	var out uint64
	for pos, n := range table {
		out |= (src >> n & 1) << (len(table) - 1 - pos)
	}
	return out
}

// desKeySchedule is the 16 round keys (48 bits each) of a 64-bit key.
func desKeySchedule(key uint64) [16]uint64 {
	var ks [16]uint64
	cd := desPermute(desPC1[:], key)
	c, d := uint32(cd>>28)&0x0fffffff, uint32(cd)&0x0fffffff
	rot := func(v uint32, n uint8) uint32 { return (v<<n | v>>(28-n)) & 0x0fffffff }
	for i, n := range desRotations {
		c, d = rot(c, n), rot(d, n)
		ks[i] = desPermute(desPC2[:], uint64(c)<<28|uint64(d))
	}
	return ks
}

// desEncrypt enciphers one block with expansion table e.
func desEncrypt(block uint64, ks *[16]uint64, e *[48]byte) uint64 {
	b := desPermute(desIP[:], block)
	l, r := uint32(b>>32), uint32(b)
	for i := range ks {
		l, r = r, l^desF(r, ks[i], e)
	}
	return desPermute(desFP[:], uint64(r)<<32|uint64(l))
}

// desF is the round function.
func desF(r uint32, k uint64, e *[48]byte) uint32 {
	x := desPermute(e[:], uint64(r)) ^ k
	var s uint32
	for i := range 8 {
		six := x >> (42 - 6*i) & 0x3f
		row, col := six>>4&2|six&1, six>>1&0xf
		s |= uint32(desS[i][row][col]) << (28 - 4*i)
	}
	return uint32(desPermute(desP[:], uint64(s)))
}

// The tables of FIPS 46-3, as crypto/des (const.go) writes them.

var desIP = [64]byte{
	6, 14, 22, 30, 38, 46, 54, 62,
	4, 12, 20, 28, 36, 44, 52, 60,
	2, 10, 18, 26, 34, 42, 50, 58,
	0, 8, 16, 24, 32, 40, 48, 56,
	7, 15, 23, 31, 39, 47, 55, 63,
	5, 13, 21, 29, 37, 45, 53, 61,
	3, 11, 19, 27, 35, 43, 51, 59,
	1, 9, 17, 25, 33, 41, 49, 57,
}

var desFP = [64]byte{
	24, 56, 16, 48, 8, 40, 0, 32,
	25, 57, 17, 49, 9, 41, 1, 33,
	26, 58, 18, 50, 10, 42, 2, 34,
	27, 59, 19, 51, 11, 43, 3, 35,
	28, 60, 20, 52, 12, 44, 4, 36,
	29, 61, 21, 53, 13, 45, 5, 37,
	30, 62, 22, 54, 14, 46, 6, 38,
	31, 63, 23, 55, 15, 47, 7, 39,
}

var desE = [48]byte{
	0, 31, 30, 29, 28, 27, 28, 27,
	26, 25, 24, 23, 24, 23, 22, 21,
	20, 19, 20, 19, 18, 17, 16, 15,
	16, 15, 14, 13, 12, 11, 12, 11,
	10, 9, 8, 7, 8, 7, 6, 5,
	4, 3, 4, 3, 2, 1, 0, 31,
}

var desP = [32]byte{
	16, 25, 12, 11, 3, 20, 4, 15,
	31, 17, 9, 6, 27, 14, 1, 22,
	30, 24, 8, 18, 0, 5, 29, 23,
	13, 19, 2, 26, 10, 21, 28, 7,
}

var desPC1 = [56]byte{
	7, 15, 23, 31, 39, 47, 55, 63,
	6, 14, 22, 30, 38, 46, 54, 62,
	5, 13, 21, 29, 37, 45, 53, 61,
	4, 12, 20, 28, 1, 9, 17, 25,
	33, 41, 49, 57, 2, 10, 18, 26,
	34, 42, 50, 58, 3, 11, 19, 27,
	35, 43, 51, 59, 36, 44, 52, 60,
}

var desPC2 = [48]byte{
	42, 39, 45, 32, 55, 51, 53, 28,
	41, 50, 35, 46, 33, 37, 44, 52,
	30, 48, 40, 49, 29, 36, 43, 54,
	15, 4, 25, 19, 9, 1, 26, 16,
	5, 11, 23, 8, 12, 7, 17, 0,
	22, 3, 10, 14, 6, 20, 27, 24,
}

var desS = [8][4][16]uint8{
	// S-box 1
	{
		{14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7},
		{0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8},
		{4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0},
		{15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13},
	},
	// S-box 2
	{
		{15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10},
		{3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5},
		{0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15},
		{13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9},
	},
	// S-box 3
	{
		{10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8},
		{13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1},
		{13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7},
		{1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12},
	},
	// S-box 4
	{
		{7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15},
		{13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9},
		{10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4},
		{3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14},
	},
	// S-box 5
	{
		{2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9},
		{14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6},
		{4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14},
		{11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3},
	},
	// S-box 6
	{
		{12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11},
		{10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8},
		{9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6},
		{4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13},
	},
	// S-box 7
	{
		{4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1},
		{13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6},
		{1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2},
		{6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12},
	},
	// S-box 8
	{
		{13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7},
		{1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2},
		{7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8},
		{2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11},
	},
}

var desRotations = [16]uint8{1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1}
