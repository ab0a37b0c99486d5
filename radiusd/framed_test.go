package radiusd

import "testing"

// TestParseIPv6Prefix: Framed-IPv6-Prefix (RFC 3162 2.3) as sent by NASes,
// short forms included; malformed values are refused.
func TestParseIPv6Prefix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{[]byte{0, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2}, "2001:db8:1:2::/64"},
		{[]byte{0, 56, 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56}, "2001:db8:1234:5600::/56"},
		{append([]byte{0, 128}, make([]byte, 16)...), "::/128"},
		{[]byte{0, 0}, "::/0"},
	} {
		p, err := parseIPv6Prefix(c.in)
		if err != nil || p.String() != c.want {
			t.Errorf("% x: %v %v, want %s", c.in, p, err, c.want)
		}
	}
	for _, bad := range [][]byte{{}, {0}, {0, 129}, {0, 64, 0x20}, append([]byte{0, 64}, make([]byte, 17)...)} {
		if _, err := parseIPv6Prefix(bad); err == nil {
			t.Errorf("% x accepted", bad)
		}
	}
}
