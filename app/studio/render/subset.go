package render

import (
	"encoding/binary"
	"errors"
	"sort"
)

// subsetTrueType keeps a TrueType font's glyph ids but empties every glyph
// outside gids (and the components composite glyphs need), dropping the
// tables a PDF does not read (cmap, GSUB, GPOS, kern, names): a font
// program for a CIDFontType2 with an identity CIDToGIDMap, a few tens of
// kilobytes instead of 700.
func subsetTrueType(data []byte, gids []int) ([]byte, error) {
	tables, err := sfntTables(data)
	if err != nil {
		return nil, err
	}
	head, maxp, loca, glyf := tables["head"], tables["maxp"], tables["loca"], tables["glyf"]
	if len(head) < 54 || len(maxp) < 6 || loca == nil || glyf == nil {
		return nil, errors.New("render: not a TrueType font")
	}
	numGlyphs := int(binary.BigEndian.Uint16(maxp[4:]))
	long := binary.BigEndian.Uint16(head[50:]) == 1
	offs := make([]int, numGlyphs+1)
	for i := range offs {
		if long {
			if 4*i+4 > len(loca) {
				return nil, errors.New("render: short loca")
			}
			offs[i] = int(binary.BigEndian.Uint32(loca[4*i:]))
		} else {
			if 2*i+2 > len(loca) {
				return nil, errors.New("render: short loca")
			}
			offs[i] = 2 * int(binary.BigEndian.Uint16(loca[2*i:]))
		}
	}
	glyphData := func(g int) []byte {
		if g < 0 || g >= numGlyphs || offs[g] >= offs[g+1] || offs[g+1] > len(glyf) {
			return nil
		}
		return glyf[offs[g]:offs[g+1]]
	}
	keep := map[int]bool{0: true}
	stack := append([]int{0}, gids...)
	for len(stack) > 0 {
		g := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		keep[g] = true
		b := glyphData(g)
		if len(b) < 10 || int16(binary.BigEndian.Uint16(b)) >= 0 {
			continue
		}
		// a composite glyph: follow its components
		for p := 10; p+4 <= len(b); {
			flags := binary.BigEndian.Uint16(b[p:])
			c := int(binary.BigEndian.Uint16(b[p+2:]))
			if !keep[c] {
				keep[c] = true
				stack = append(stack, c)
			}
			p += 4
			if flags&1 != 0 {
				p += 4
			} else {
				p += 2
			}
			switch {
			case flags&8 != 0:
				p += 2
			case flags&0x40 != 0:
				p += 4
			case flags&0x80 != 0:
				p += 8
			}
			if flags&0x20 == 0 {
				break
			}
		}
	}
	var newGlyf []byte
	newLoca := make([]byte, 4*(numGlyphs+1))
	for g := 0; g < numGlyphs; g++ {
		binary.BigEndian.PutUint32(newLoca[4*g:], uint32(len(newGlyf)))
		if keep[g] {
			newGlyf = append(newGlyf, glyphData(g)...)
			for len(newGlyf)%4 != 0 {
				newGlyf = append(newGlyf, 0)
			}
		}
	}
	binary.BigEndian.PutUint32(newLoca[4*numGlyphs:], uint32(len(newGlyf)))
	newHead := append([]byte(nil), head...)
	binary.BigEndian.PutUint16(newHead[50:], 1)
	binary.BigEndian.PutUint32(newHead[8:], 0)

	out := map[string][]byte{"head": newHead, "loca": newLoca, "glyf": newGlyf}
	for _, t := range []string{"hhea", "hmtx", "maxp", "cvt ", "fpgm", "prep", "OS/2", "post"} {
		if b, ok := tables[t]; ok {
			out[t] = b
		}
	}
	font := writeSFNT(out)
	// checkSumAdjustment makes the whole file sum to 0xB1B0AFBA
	adj := 0xB1B0AFBA - checksum(font)
	headOff := sfntTableOffset(font, "head")
	binary.BigEndian.PutUint32(font[headOff+8:], adj)
	return font, nil
}

func sfntTables(data []byte) (map[string][]byte, error) {
	if len(data) < 12 {
		return nil, errors.New("render: short font")
	}
	n := int(binary.BigEndian.Uint16(data[4:]))
	out := map[string][]byte{}
	for i := 0; i < n; i++ {
		r := 12 + 16*i
		if r+16 > len(data) {
			return nil, errors.New("render: short table directory")
		}
		off, ln := int(binary.BigEndian.Uint32(data[r+8:])), int(binary.BigEndian.Uint32(data[r+12:]))
		if off+ln > len(data) {
			return nil, errors.New("render: table out of the file")
		}
		out[string(data[r:r+4])] = data[off : off+ln]
	}
	return out, nil
}

func writeSFNT(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for t := range tables {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	n := len(tags)
	es := 0
	for 1<<(es+1) <= n {
		es++
	}
	hdr := make([]byte, 12+16*n)
	binary.BigEndian.PutUint32(hdr, 0x00010000)
	binary.BigEndian.PutUint16(hdr[4:], uint16(n))
	binary.BigEndian.PutUint16(hdr[6:], uint16(16<<es))
	binary.BigEndian.PutUint16(hdr[8:], uint16(es))
	binary.BigEndian.PutUint16(hdr[10:], uint16(16*n-16<<es))
	body := hdr
	for i, t := range tags {
		b := tables[t]
		r := 12 + 16*i
		copy(body[r:], t)
		binary.BigEndian.PutUint32(body[r+4:], checksum(b))
		binary.BigEndian.PutUint32(body[r+8:], uint32(len(body)))
		binary.BigEndian.PutUint32(body[r+12:], uint32(len(b)))
		body = append(body, b...)
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
	}
	return body
}

func sfntTableOffset(font []byte, tag string) int {
	n := int(binary.BigEndian.Uint16(font[4:]))
	for i := 0; i < n; i++ {
		r := 12 + 16*i
		if string(font[r:r+4]) == tag {
			return int(binary.BigEndian.Uint32(font[r+8:]))
		}
	}
	return -1
}

func checksum(b []byte) uint32 {
	var s uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:min(i+4, len(b))])
		s += binary.BigEndian.Uint32(w[:])
	}
	return s
}
