package sim

import (
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"hash"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

// client is one simulated in-flight slot: its own sockets (so the server
// sees distinct source ports), hashes and scratch buffers, one request at a
// time.
type client struct {
	cfg        *Config
	nasIP      [4]byte
	auth, acct *net.UDPConn
	mac, md    hash.Hash
	rng        *rand.Rand
	id         byte
	out        [4096]byte
	in         [4097]byte
	st         stats
	live       *liveCounters // shared, read by the progress line
	lastReply  []byte        // the last valid answer (aliases in)
}

func (c *client) close() {
	// Closing a connected UDP socket has nothing to flush; its error tells
	// nothing the run can act on.
	if c.auth != nil {
		_ = c.auth.Close()
	}
	if c.acct != nil {
		_ = c.acct.Close()
	}
}

// Attribute helpers over a byte slice being built.
func attr(b []byte, t radius.Type, v []byte) []byte {
	b = append(b, byte(t), byte(len(v)+2))
	return append(b, v...)
}

func attrString(b []byte, t radius.Type, s string) []byte {
	b = append(b, byte(t), byte(len(s)+2))
	return append(b, s...)
}

func attrUint32(b []byte, t radius.Type, v uint32) []byte {
	b = append(b, byte(t), 6)
	return binary.BigEndian.AppendUint32(b, v)
}

func (c *client) nextID() byte {
	c.id++
	return c.id
}

// access sends user i's Access-Request (AuthMethod) and reports an Accept.
func (c *client) access(i int) bool { return c.accessWith(i, format(c.cfg.PasswordFormat, i)) }

// accessWith sends user i's Access-Request with the password given.
func (c *client) accessWith(i int, pass string) bool {
	user := format(c.cfg.UserFormat, i)
	b := append(c.out[:0], byte(radius.CodeAccessRequest), c.nextID(), 0, 0)
	var auth [16]byte
	binary.LittleEndian.PutUint64(auth[:8], c.rng.Uint64())
	binary.LittleEndian.PutUint64(auth[8:], c.rng.Uint64())
	b = append(b, auth[:]...)
	maOff := -1
	if !c.cfg.NoMessageAuthenticator {
		maOff = len(b)
		b = append(b, byte(rfc2869.MessageAuthenticator_Type), 18)
		b = append(b, make([]byte, 16)...)
	}
	b = attrString(b, rfc2865.UserName_Type, user)
	var ms *msState
	switch c.cfg.AuthMethod {
	case AuthCHAP:
		b = c.appendCHAP(b, pass, auth[:])
	case AuthMSCHAPv2:
		var err error
		if b, ms, err = c.appendMSCHAPv2(b, user, pass); err != nil {
			c.st.failed++
			return false
		}
	default:
		b = c.appendPassword(b, pass, auth[:])
	}
	b = attr(b, rfc2865.NASIPAddress_Type, c.nasIP[:])
	b = attrString(b, rfc2865.NASIdentifier_Type, "xr-sim")
	b = attrUint32(b, rfc2865.NASPortType_Type, 15) // Ethernet
	b = attrUint32(b, rfc2865.ServiceType_Type, 2)  // Framed-User
	b = attrUint32(b, rfc2865.FramedProtocol_Type, 1)
	b = attrString(b, rfc2865.CallingStationID_Type, mac(i))
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	if maOff >= 0 {
		c.mac.Reset()
		c.mac.Write(b)
		c.mac.Sum(b[maOff+2 : maOff+2])
	}
	code, ok := c.exchange(c.auth, b, auth[:])
	switch {
	case !ok:
		return false
	case code == byte(radius.CodeAccessAccept):
		if ms != nil && !ms.verifySuccess(c.lastReply) {
			c.st.bad++
			c.live.bad.Add(1)
			return false
		}
		c.st.accepted++
		c.live.accepted.Add(1)
		return true
	case code == byte(radius.CodeAccessReject):
		c.st.rejected++
		c.live.rejected.Add(1)
	}
	return false
}

// appendPassword writes User-Password hidden per RFC 2865 section 5.2.
func (c *client) appendPassword(b []byte, pass string, auth []byte) []byte {
	n := max((len(pass)+15)/16*16, 16)
	if n > 128 {
		n = 128
	}
	b = append(b, byte(rfc2865.UserPassword_Type), byte(n+2))
	start := len(b)
	b = append(b, make([]byte, n)...)
	copy(b[start:], pass)
	prev := auth
	var sum [16]byte
	for off := start; off < start+n; off += 16 {
		c.md.Reset()
		c.md.Write([]byte(c.cfg.Secret))
		c.md.Write(prev)
		c.md.Sum(sum[:0])
		for j := range 16 {
			b[off+j] ^= sum[j]
		}
		prev = b[off : off+16]
	}
	return b
}

func mac(i int) string {
	const hexd = "0123456789ABCDEF"
	b := []byte("02:00:00:00:00:00")
	for k, shift := 0, 24; k < 4; k, shift = k+1, shift-8 {
		v := byte(i >> shift)
		b[6+3*k], b[7+3*k] = hexd[v>>4], hexd[v&15]
	}
	return string(b)
}

// interim sends Interim-Update number round of session s.
func (c *client) interim(s, round int) bool {
	in := uint64(round)*7_000_000 + uint64(s)
	out := uint64(round) * 90_000_000 // passes 4 GiB after ~48 rounds: gigawords
	return c.accounting(3, s, func(b []byte) []byte {
		b = attrUint32(b, rfc2866.AcctInputOctets_Type, uint32(in))
		b = attrUint32(b, rfc2869.AcctInputGigawords_Type, uint32(in>>32))
		b = attrUint32(b, rfc2866.AcctOutputOctets_Type, uint32(out))
		b = attrUint32(b, rfc2869.AcctOutputGigawords_Type, uint32(out>>32))
		b = attrUint32(b, rfc2866.AcctInputPackets_Type, uint32(in/1000))
		b = attrUint32(b, rfc2866.AcctOutputPackets_Type, uint32(out/1000))
		return attrUint32(b, rfc2866.AcctSessionTime_Type, uint32(round*300))
	})
}

func (c *client) start(s int) bool { return c.accounting(1, s, nil) }

// churn plays session s from Start to Stop: Start, Interims 1 and 2, and a
// Stop with the counters of round 3. A packet that is never answered ends
// the session early (the NAS would give up too).
func (c *client) churn(s int) {
	if !c.start(s) || !c.interim(s, 1) || !c.interim(s, 2) {
		return
	}
	c.stop(s, 3)
}

// stop sends the Accounting-Stop of session s with round's counters.
func (c *client) stop(s, round int) bool {
	in := uint64(round)*7_000_000 + uint64(s)
	out := uint64(round) * 90_000_000
	return c.accounting(2, s, func(b []byte) []byte {
		b = attrUint32(b, rfc2866.AcctInputOctets_Type, uint32(in))
		b = attrUint32(b, rfc2869.AcctInputGigawords_Type, uint32(in>>32))
		b = attrUint32(b, rfc2866.AcctOutputOctets_Type, uint32(out))
		b = attrUint32(b, rfc2869.AcctOutputGigawords_Type, uint32(out>>32))
		b = attrUint32(b, rfc2866.AcctSessionTime_Type, uint32(round*300))
		return attrUint32(b, rfc2866.AcctTerminateCause_Type, 1) // User-Request
	})
}

// accountingOnOff sends Accounting-On (7) or -Off (8) for the whole NAS.
func (c *client) accountingOnOff(status uint32) bool {
	b := append(c.out[:0], byte(radius.CodeAccountingRequest), c.nextID(), 0, 0)
	b = append(b, make([]byte, 16)...)
	b = attrUint32(b, rfc2866.AcctStatusType_Type, status)
	b = attr(b, rfc2865.NASIPAddress_Type, c.nasIP[:])
	b = attrString(b, rfc2865.NASIdentifier_Type, "xr-sim")
	b = attrString(b, rfc2866.AcctSessionID_Type, "00000000")
	return c.sendAccounting(b)
}

func (c *client) accounting(status uint32, s int, counters func([]byte) []byte) bool {
	b := append(c.out[:0], byte(radius.CodeAccountingRequest), c.nextID(), 0, 0)
	b = append(b, make([]byte, 16)...)
	b = attrUint32(b, rfc2866.AcctStatusType_Type, status)
	var sid [8]byte
	const hexd = "0123456789abcdef"
	for k := range sid {
		sid[k] = hexd[(s>>(28-4*k))&15]
	}
	b = attr(b, rfc2866.AcctSessionID_Type, sid[:])
	b = attrString(b, rfc2865.UserName_Type, format(c.cfg.UserFormat, s%c.cfg.Users))
	b = attr(b, rfc2865.NASIPAddress_Type, c.nasIP[:])
	b = attrString(b, rfc2865.NASIdentifier_Type, "xr-sim")
	b = attr(b, rfc2865.FramedIPAddress_Type, []byte{10, byte(s >> 16), byte(s >> 8), byte(s)})
	b = attrString(b, rfc2865.CallingStationID_Type, mac(s))
	b = attrUint32(b, rfc2866.AcctDelayTime_Type, 0)
	if counters != nil {
		b = counters(b)
	}
	return c.sendAccounting(b)
}

// sendAccounting signs an Accounting-Request (RFC 2866 Request
// Authenticator) and exchanges it.
func (c *client) sendAccounting(b []byte) bool {
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	c.md.Reset()
	c.md.Write(b)
	c.md.Write([]byte(c.cfg.Secret))
	c.md.Sum(b[4:4])
	var auth [16]byte
	copy(auth[:], b[4:20])
	code, ok := c.exchange(c.acct, b, auth[:])
	if ok && code == byte(radius.CodeAccountingResponse) {
		c.st.acked++
		c.live.acked.Add(1)
		return true
	}
	return false
}

// exchange sends pkt and waits for a valid answer, retransmitting the same
// bytes after each Timeout. It returns the answer's code.
func (c *client) exchange(conn *net.UDPConn, pkt, reqAuth []byte) (byte, bool) {
	start := time.Now()
	for try := 0; try <= c.cfg.Retries; try++ {
		c.st.sent++
		if _, err := conn.Write(pkt); err != nil {
			c.st.timeouts++
			time.Sleep(c.cfg.Timeout)
			continue
		}
		deadline := time.Now().Add(c.cfg.Timeout)
		if err := conn.SetReadDeadline(deadline); err != nil {
			c.st.failed++
			return 0, false
		}
		for {
			n, err := conn.Read(c.in[:])
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) {
					c.st.timeouts++
					c.live.timeouts.Add(1)
					break
				}
				if time.Now().Before(deadline) {
					continue // ICMP error from an earlier datagram
				}
				c.st.timeouts++
				c.live.timeouts.Add(1)
				break
			}
			resp := c.in[:n]
			if n < 20 || resp[1] != pkt[1] {
				continue // a late answer to an earlier request
			}
			if !c.valid(resp, reqAuth) {
				c.st.bad++
				c.live.bad.Add(1)
				continue
			}
			c.st.requests++
			c.live.requests.Add(1)
			c.st.lat.add(time.Since(start))
			c.lastReply = resp[:int(binary.BigEndian.Uint16(resp[2:4]))]
			return resp[0], true
		}
	}
	c.st.failed++
	return 0, false
}

// valid checks the Response Authenticator and, when present, the
// Message-Authenticator of an answer.
func (c *client) valid(resp, reqAuth []byte) bool {
	l := int(binary.BigEndian.Uint16(resp[2:4]))
	if l < 20 || l > len(resp) {
		return false
	}
	resp = resp[:l]
	var got, sum [16]byte
	copy(got[:], resp[4:20])
	copy(resp[4:20], reqAuth)
	c.md.Reset()
	c.md.Write(resp)
	c.md.Write([]byte(c.cfg.Secret))
	c.md.Sum(sum[:0])
	if !hmac.Equal(sum[:], got[:]) {
		return false
	}
	ok := true
	for off := 20; off+2 <= l; {
		al := int(resp[off+1])
		if al < 2 || off+al > l {
			return false
		}
		if resp[off] == byte(rfc2869.MessageAuthenticator_Type) && al == 18 {
			var ma [16]byte
			copy(ma[:], resp[off+2:off+18])
			clear(resp[off+2 : off+18])
			c.mac.Reset()
			c.mac.Write(resp) // authenticator field holds reqAuth here
			ok = hmac.Equal(c.mac.Sum(sum[:0]), ma[:])
			copy(resp[off+2:off+18], ma[:])
		}
		off += al
	}
	copy(resp[4:20], got[:])
	return ok
}

// MAC is the Calling-Station-Id the simulator sends for user i in
// Access-Requests (so a MAC lock can be set to match it).
func MAC(i int) string { return mac(i) }
