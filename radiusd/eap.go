package radiusd

import (
	"encoding/binary"
	"errors"
)

// EAP (RFC 3748) as carried in RADIUS (RFC 3579): the packet layer. An
// Access-Request carries one EAP packet split over EAP-Message attributes;
// the answers carry theirs the same way (Access-Challenge with a State,
// Access-Accept with EAP-Success, Access-Reject with EAP-Failure).

// EAP codes.
const (
	eapRequest  = 1
	eapResponse = 2
	eapSuccess  = 3
	eapFailure  = 4
)

// EAP method types.
const (
	eapTypeIdentity = 1
	eapTypeNak      = 3
	eapTypeTTLS     = 21
	eapTypePEAP     = 25
	eapTypeMSCHAPv2 = 26
	eapTypeTLV      = 33 // PEAP's Extensions (result TLV)
)

// attrState is RFC 2865's State: the key of the conversation across the
// round trips of an EAP exchange.
const attrState = 24

var (
	errEAPShort  = errors.New("eap: packet shorter than its header or Length")
	errEAPNoType = errors.New("eap: Response without a type")
)

// eapPacket is a parsed EAP packet; data aliases the input.
type eapPacket struct {
	code, id byte
	typ      byte   // 0 for Success/Failure
	data     []byte // after the type octet
}

// parseEAP validates one EAP packet (RFC 3748 section 4): octets past the
// Length field are padding and ignored.
func parseEAP(b []byte) (eapPacket, error) {
	var p eapPacket
	if len(b) < 4 {
		return p, errEAPShort
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < 4 || n > len(b) {
		return p, errEAPShort
	}
	p.code, p.id = b[0], b[1]
	b = b[:n]
	if p.code == eapRequest || p.code == eapResponse {
		if n < 5 {
			return p, errEAPNoType
		}
		p.typ, p.data = b[4], b[5:]
	}
	return p, nil
}

// eapMessage concatenates the request's EAP-Message attributes (RFC 3579
// section 3.1) into buf.
func eapMessage(ix *attrIndex, p, buf []byte) []byte {
	buf = buf[:0]
	for i := 0; i < ix.n; i++ {
		o := int(ix.off[i])
		if p[o] == attrEAPMessage {
			buf = append(buf, p[o+2:o+int(p[o+1])]...)
		}
	}
	return buf
}

// eapBuild writes an EAP Request (or Response) of a type: header, type, then
// the parts of its data.
func eapBuild(code, id, typ byte, parts ...[]byte) []byte {
	n := 5
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 5, n)
	b[0], b[1], b[4] = code, id, typ
	binary.BigEndian.PutUint16(b[2:4], uint16(n))
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// eapFinal writes an EAP-Success or EAP-Failure. Its Identifier is the one
// of the Response it answers (RFC 3748 section 4.2).
func eapFinal(code, id byte) []byte { return []byte{code, id, 0, 4} }

// addEAPMessage writes an EAP packet as consecutive EAP-Message attributes.
func (w *packetWriter) addEAPMessage(eap []byte) { w.addSplit(attrEAPMessage, eap) }
