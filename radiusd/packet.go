package radiusd

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"hash"
	"math"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2869"
	"layeh.com/radius/rfc3162"
)

// Wire limits (RFC 2865 section 3).
const (
	headerLen    = 20
	maxPacketLen = radius.MaxPacketLength // 4096

	// MaxAttributes caps the attribute count of a request. Real NAS packets
	// carry 10-40; the cap bounds the work a hostile 4 KiB datagram can
	// cause and sizes the zero-allocation attribute index.
	MaxAttributes = 255
)

// Attribute types used on the hot path, taken from layeh's dictionaries.
const (
	attrUserName         = byte(rfc2865.UserName_Type)
	attrUserPassword     = byte(rfc2865.UserPassword_Type)
	attrCHAPPassword     = byte(rfc2865.CHAPPassword_Type)
	attrFramedIP         = byte(rfc2865.FramedIPAddress_Type)
	attrReplyMessage     = byte(rfc2865.ReplyMessage_Type)
	attrClass            = byte(rfc2865.Class_Type)
	attrVendorSpecific   = byte(rfc2865.VendorSpecific_Type)
	attrSessionTimeout   = byte(rfc2865.SessionTimeout_Type)
	attrCallingStationID = byte(rfc2865.CallingStationID_Type)
	attrCHAPChallenge    = byte(rfc2865.CHAPChallenge_Type)
	attrProxyState       = byte(rfc2865.ProxyState_Type)
	attrEventTimestamp   = byte(rfc2869.EventTimestamp_Type)
	attrEAPMessage       = byte(rfc2869.EAPMessage_Type)
	attrMessageAuth      = byte(rfc2869.MessageAuthenticator_Type)
	attrInterimInterval  = byte(rfc2869.AcctInterimInterval_Type)
	attrNASPortID        = byte(rfc2869.NASPortID_Type)
	attrFramedPool       = byte(rfc2869.FramedPool_Type)
	attrFramedIPv6Prefix = byte(rfc3162.FramedIPv6Prefix_Type)
)

// Packet codes as bytes.
const (
	codeAccessRequest      = byte(radius.CodeAccessRequest)
	codeAccessAccept       = byte(radius.CodeAccessAccept)
	codeAccessReject       = byte(radius.CodeAccessReject)
	codeAccessChallenge    = byte(radius.CodeAccessChallenge)
	codeAccountingRequest  = byte(radius.CodeAccountingRequest)
	codeAccountingResponse = byte(radius.CodeAccountingResponse)
	codeStatusServer       = byte(radius.CodeStatusServer)
	codeDisconnectRequest  = byte(radius.CodeDisconnectRequest)
	codeDisconnectACK      = byte(radius.CodeDisconnectACK)
	codeDisconnectNAK      = byte(radius.CodeDisconnectNAK)
	codeCoARequest         = byte(radius.CodeCoARequest)
	codeCoAACK             = byte(radius.CodeCoAACK)
	codeCoANAK             = byte(radius.CodeCoANAK)
)

// Validation failures. They are values, not wrapped errors, so the reader
// loop can reject garbage without allocating.
var (
	errTooShort      = errors.New("radius: datagram shorter than 20 octets")
	errTooLong       = errors.New("radius: datagram longer than 4096 octets")
	errBadLength     = errors.New("radius: length field disagrees with datagram")
	errAttrType0     = errors.New("radius: attribute type 0")
	errAttrLength    = errors.New("radius: attribute length below 2 or overrunning the packet")
	errTooManyAttrs  = errors.New("radius: too many attributes")
	errMultipleMA    = errors.New("radius: more than one Message-Authenticator")
	errMALength      = errors.New("radius: Message-Authenticator is not 16 octets")
	errBadAttrFormat = errors.New("radius: attribute value has the wrong size")
)

// attrIndex records where each attribute of a validated packet starts, so
// lookups need neither allocation nor re-validation.
type attrIndex struct {
	n   int
	off [MaxAttributes]uint16
	ma  int // offset of the Message-Authenticator attribute, -1 when absent
}

// parsePacket strictly validates one datagram and fills idx. It returns the
// packet cut to its Length field (RFC 2865: octets past Length are padding).
func parsePacket(b []byte, idx *attrIndex) ([]byte, error) {
	if len(b) < headerLen {
		return nil, errTooShort
	}
	if len(b) > maxPacketLen {
		return nil, errTooLong
	}
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if length < headerLen || length > len(b) {
		return nil, errBadLength
	}
	p := b[:length]
	idx.n = 0
	idx.ma = -1
	for off := headerLen; off < length; {
		if length-off < 2 {
			return nil, errAttrLength
		}
		t, l := p[off], int(p[off+1])
		if t == 0 {
			return nil, errAttrType0
		}
		if l < 2 || off+l > length {
			return nil, errAttrLength
		}
		if idx.n == MaxAttributes {
			return nil, errTooManyAttrs
		}
		if t == attrMessageAuth {
			if idx.ma >= 0 {
				return nil, errMultipleMA
			}
			if l != 18 {
				return nil, errMALength
			}
			idx.ma = off
		}
		idx.off[idx.n] = uint16(off)
		idx.n++
		off += l
	}
	return p, nil
}

// get returns the value of the first attribute of type t.
func (ix *attrIndex) get(p []byte, t byte) ([]byte, bool) {
	for i := 0; i < ix.n; i++ {
		o := int(ix.off[i])
		if p[o] == t {
			return p[o+2 : o+int(p[o+1])], true
		}
	}
	return nil, false
}

// has reports whether an attribute of type t is present.
func (ix *attrIndex) has(p []byte, t byte) bool {
	_, ok := ix.get(p, t)
	return ok
}

// uint32 returns an integer attribute; a present attribute of the wrong
// size is an error so that callers can refuse malformed packets.
func (ix *attrIndex) uint32(p []byte, t byte) (uint32, bool, error) {
	v, ok := ix.get(p, t)
	if !ok {
		return 0, false, nil
	}
	if len(v) != 4 {
		return 0, true, errBadAttrFormat
	}
	return binary.BigEndian.Uint32(v), true, nil
}

// vendor returns the first vendor sub-attribute (RFC 2865 section 5.26
// recommended format) of the given vendor and type. VSAs that do not follow
// that format are skipped, not refused: vendors are free to differ.
func (ix *attrIndex) vendor(p []byte, vendorID uint32, vtype byte) ([]byte, bool) {
	for i := 0; i < ix.n; i++ {
		o := int(ix.off[i])
		if p[o] != attrVendorSpecific {
			continue
		}
		v := p[o+2 : o+int(p[o+1])]
		if len(v) < 4+2 || binary.BigEndian.Uint32(v) != vendorID {
			continue
		}
		for s := v[4:]; len(s) >= 2; {
			l := int(s[1])
			if l < 2 || l > len(s) {
				break
			}
			if s[0] == vtype {
				return s[2:l], true
			}
			s = s[l:]
		}
	}
	return nil, false
}

// messageAuthenticatorOK checks the RFC 3579 HMAC-MD5 of p, whose
// Message-Authenticator attribute starts at maOff. For Accounting, CoA and
// Disconnect requests the Request Authenticator is itself derived from the
// packet, so the HMAC is taken with that field zeroed (RFC 5176 section 3.3,
// as FreeRADIUS and MikroTik do). p is modified and restored.
func messageAuthenticatorOK(mac hash.Hash, p []byte, maOff int, zeroAuth bool) bool {
	var got, auth [16]byte
	val := p[maOff+2 : maOff+18]
	copy(got[:], val)
	clear(val)
	if zeroAuth {
		copy(auth[:], p[4:20])
		clear(p[4:20])
	}
	mac.Reset()
	mac.Write(p)
	var sum [md5.Size]byte
	ok := hmac.Equal(mac.Sum(sum[:0]), got[:])
	copy(val, got[:])
	if zeroAuth {
		copy(p[4:20], auth[:])
	}
	return ok
}

// requestAuthenticatorOK verifies an Accounting/CoA/Disconnect Request
// Authenticator: MD5(Code+Identifier+Length+16 zero octets+Attributes+Secret).
func requestAuthenticatorOK(h hash.Hash, p, secret []byte) bool {
	var zero [16]byte
	h.Reset()
	h.Write(p[:4])
	h.Write(zero[:])
	h.Write(p[20:])
	h.Write(secret)
	var sum [md5.Size]byte
	return hmac.Equal(h.Sum(sum[:0]), p[4:20])
}

// packetWriter appends attributes to a packet being built. Attributes that
// do not fit are refused by finish, never silently cut, except for string
// values which the helpers truncate to the 253-octet attribute limit.
type packetWriter struct {
	b     []byte
	maOff int // -1 when the packet carries no Message-Authenticator
}

// newPacket starts a packet in buf (reused, truncated). When withMA is set
// a zeroed Message-Authenticator is written as the first attribute, which
// is where BlastRADIUS (CVE-2024-3596) mitigations expect it.
func newPacket(buf []byte, code, id byte, auth []byte, withMA bool) packetWriter {
	b := append(buf[:0], code, id, 0, 0)
	b = append(b, auth[:16]...)
	w := packetWriter{b: b, maOff: -1}
	if withMA {
		w.maOff = len(w.b)
		w.b = append(w.b, attrMessageAuth, 18)
		w.b = append(w.b, make([]byte, 16)...)
	}
	return w
}

func (w *packetWriter) add(t byte, v []byte) {
	if len(v) > 253 {
		v = v[:253]
	}
	w.b = append(w.b, t, byte(len(v)+2))
	w.b = append(w.b, v...)
}

func (w *packetWriter) addString(t byte, s string) {
	if len(s) > 253 {
		s = s[:253]
	}
	w.b = append(w.b, t, byte(len(s)+2))
	w.b = append(w.b, s...)
}

// addSplit writes a long value as consecutive attributes of the same type,
// the RFC 2865 convention for Reply-Message and Class.
func (w *packetWriter) addSplit(t byte, v []byte) {
	for len(v) > 253 {
		w.add(t, v[:253])
		v = v[253:]
	}
	if len(v) > 0 {
		w.add(t, v)
	}
}

func (w *packetWriter) addUint32(t byte, v uint32) {
	w.b = append(w.b, t, 6)
	w.b = binary.BigEndian.AppendUint32(w.b, v)
}

// addVendor writes one Vendor-Specific attribute holding one sub-attribute.
func (w *packetWriter) addVendor(vendorID uint32, vtype byte, v []byte) {
	if len(v) > 247 {
		v = v[:247]
	}
	w.b = append(w.b, attrVendorSpecific, byte(len(v)+8))
	w.b = binary.BigEndian.AppendUint32(w.b, vendorID)
	w.b = append(w.b, vtype, byte(len(v)+2))
	w.b = append(w.b, v...)
}

func (w *packetWriter) addVendorString(vendorID uint32, vtype byte, s string) {
	if len(s) > 247 {
		s = s[:247]
	}
	w.b = append(w.b, attrVendorSpecific, byte(len(s)+8))
	w.b = binary.BigEndian.AppendUint32(w.b, vendorID)
	w.b = append(w.b, vtype, byte(len(s)+2))
	w.b = append(w.b, s...)
}

func (w *packetWriter) addVendorUint32(vendorID uint32, vtype byte, v uint32) {
	w.b = append(w.b, attrVendorSpecific, 12)
	w.b = binary.BigEndian.AppendUint32(w.b, vendorID)
	w.b = append(w.b, vtype, 6)
	w.b = binary.BigEndian.AppendUint32(w.b, v)
}

// copyProxyState appends the request's Proxy-State attributes, in order,
// as RFC 2865 section 5.33 requires of every reply.
func (w *packetWriter) copyProxyState(ix *attrIndex, p []byte) {
	for i := 0; i < ix.n; i++ {
		o := int(ix.off[i])
		if p[o] == attrProxyState {
			w.b = append(w.b, p[o:o+int(p[o+1])]...)
		}
	}
}

var errPacketTooLarge = errors.New("radius: encoded packet exceeds 4096 octets")

// finishResponse completes a response whose authenticator field holds the
// request authenticator: the Message-Authenticator is computed first (over
// the request authenticator, RFC 3579 section 3.2), then the Response
// Authenticator MD5(Code+ID+Length+RequestAuth+Attributes+Secret) over the
// final bytes.
func (w *packetWriter) finishResponse(mac, md hash.Hash, secret []byte) ([]byte, error) {
	if len(w.b) > maxPacketLen {
		return nil, errPacketTooLarge
	}
	binary.BigEndian.PutUint16(w.b[2:4], uint16(len(w.b)))
	w.sign(mac)
	md.Reset()
	md.Write(w.b)
	md.Write(secret)
	md.Sum(w.b[4:4:20])
	return w.b, nil
}

// finishRequest completes an Accounting/CoA/Disconnect request: with the
// authenticator field zeroed, Message-Authenticator first, then the Request
// Authenticator MD5 over the packet and secret.
func (w *packetWriter) finishRequest(mac, md hash.Hash, secret []byte) ([]byte, error) {
	if len(w.b) > maxPacketLen {
		return nil, errPacketTooLarge
	}
	binary.BigEndian.PutUint16(w.b[2:4], uint16(len(w.b)))
	clear(w.b[4:20])
	w.sign(mac)
	md.Reset()
	md.Write(w.b)
	md.Write(secret)
	md.Sum(w.b[4:4:20])
	return w.b, nil
}

func (w *packetWriter) sign(mac hash.Hash) {
	if w.maOff < 0 {
		return
	}
	mac.Reset()
	mac.Write(w.b)
	mac.Sum(w.b[w.maOff+2 : w.maOff+2 : w.maOff+18])
}

// clampUint32 converts a non-negative int64 to uint32, saturating.
func clampUint32(v int64) uint32 {
	if v <= 0 {
		return 0
	}
	if v > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(v)
}
