package sheet

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// TextDecoder turns the values of one file read piece by piece (a SQL
// dump's strings, a RouterOS export's commands) into UTF-8, when the file
// is not decoded as a whole stream: a dump declares its encoding (SET
// NAMES) somewhere, a RouterOS export escapes the bytes of its values.
// Enc is the encoding: declared (Declare), or, when none was, decided by
// the first value that is not plain ASCII (valid UTF-8 is UTF-8, anything
// else the code page its bytes suggest, as Detect) and kept for the rest
// of the file. Nothing is ever replaced: a value the encoding cannot read
// is 400 invalid_encoding naming its line.
type TextDecoder struct {
	Enc      string
	declared bool
}

// Declare sets the encoding a file states (EncUTF8, EncWindows1256,
// EncWindows1252).
func (d *TextDecoder) Declare(enc string) { d.Enc, d.declared = enc, true }

// Decode returns s (found on line) as UTF-8.
func (d *TextDecoder) Decode(s string, line int) (string, error) {
	if isASCII(s) {
		return s, nil
	}
	if d.Enc == "" {
		if utf8.ValidString(s) {
			d.Enc = EncUTF8
		} else {
			d.Enc = codePage([]byte(s))
		}
	}
	var m *charmap.Charmap
	switch d.Enc {
	case EncUTF8:
		if !utf8.ValidString(s) {
			return "", errInvalidEncoding(d.Enc, line)
		}
		return s, nil
	case EncWindows1256:
		m = charmap.Windows1256
	case EncWindows1252:
		m = charmap.Windows1252
	default:
		return "", errUnsupportedEncoding(d.Enc)
	}
	// A value of a file declared in a code page that is valid UTF-8 with
	// multi-byte characters was written as UTF-8 through a connection that
	// said otherwise (a PHP panel storing UTF-8 in latin1 tables): code-page
	// text almost never forms such sequences, and decoding it again would
	// garble it.
	if d.declared && utf8.ValidString(s) {
		return s, nil
	}
	out, err := m.NewDecoder().String(s)
	if err != nil || strings.ContainsRune(out, utf8.RuneError) {
		return "", errInvalidEncoding(d.Enc, line)
	}
	return out, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
