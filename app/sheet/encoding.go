package sheet

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"xr/app"
)

// Encodings a text import may be in. Spreadsheets save CSV as UTF-8
// (with or without a byte-order mark), UTF-16 with a mark ("Unicode
// text"), or in the system's code page: Windows-1256 for Arabic, Windows-1252
// (a superset of Latin-1) for Western languages.
const (
	EncUTF8        = "utf-8"
	EncUTF16LE     = "utf-16le"
	EncUTF16BE     = "utf-16be"
	EncWindows1256 = "windows-1256"
	EncWindows1252 = "windows-1252"
)

// Encodings are the names an import's encoding option accepts ("auto" or
// empty: detected).
var Encodings = []string{"auto", EncUTF8, "utf-16", EncWindows1256, EncWindows1252, "latin-1"}

// sniffLen is how much of a file decides its encoding.
const sniffLen = 64 << 10

// NormalizeEncoding checks an encoding option: "" for auto, else the name
// the reader uses (400 invalid_enum on field encoding).
func NormalizeEncoding(name string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "auto":
		return "", nil
	case "utf-8", "utf8":
		return EncUTF8, nil
	case "utf-16", "utf16":
		return "utf-16", nil
	case "windows-1256", "cp1256":
		return EncWindows1256, nil
	case "windows-1252", "cp1252", "latin-1", "latin1", "iso-8859-1":
		return EncWindows1252, nil
	}
	return "", app.ErrValidation("invalid_enum", "encoding").With("allowed", Encodings)
}

func errUnsupportedEncoding(why string) error {
	return app.ErrValidation("unsupported_encoding", "file").With("detail", why)
}

func errInvalidEncoding(enc string, line int) error {
	return app.ErrValidation("invalid_encoding", "file").With("encoding", enc).With("line", line)
}

// Detect names the encoding of a text file from its first bytes: a
// byte-order mark; else UTF-8 when they are valid UTF-8; else a single-byte
// code page, Windows-1256 when most bytes above 0x7F come in runs (Arabic
// words), Windows-1252 when they stand alone among ASCII letters (accented
// Latin letters). Text with NUL bytes and no mark (UTF-16 without one, or
// not text) is refused: 400 unsupported_encoding.
func Detect(head []byte) (string, error) {
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		return EncUTF8, nil
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return EncUTF16LE, nil
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return EncUTF16BE, nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "", errUnsupportedEncoding("NUL bytes without a byte-order mark (UTF-16 must start with its mark)")
	}
	if validPrefix(head) {
		return EncUTF8, nil
	}
	return codePage(head), nil
}

// codePage tells the single-byte code page of text that is not UTF-8:
// Windows-1256 when most bytes above 0x7F come in runs (Arabic words),
// Windows-1252 when they stand alone among ASCII letters.
func codePage(head []byte) string {
	high, paired := 0, 0
	for i, c := range head {
		if c < 0x80 {
			continue
		}
		high++
		if i > 0 && head[i-1] >= 0x80 || i+1 < len(head) && head[i+1] >= 0x80 {
			paired++
		}
	}
	if paired*2 > high {
		return EncWindows1256
	}
	return EncWindows1252
}

// validPrefix: b is UTF-8, but for a rune cut at its end.
func validPrefix(b []byte) bool {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if utf8.Valid(b) {
			return true
		}
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return false
		}
		b = b[:len(b)-1]
	}
	return len(b) == 0
}

// Decode reads r (starting with the bytes it was detected from) as UTF-8:
// enc is a name of Detect or NormalizeEncoding ("utf-16" follows the
// mark). The bytes are never replaced: invalid UTF-8, a UTF-16 surrogate
// out of pair or a byte the code page leaves undefined stops the reading
// with 400 invalid_encoding naming the line.
func Decode(r io.Reader, enc string) (io.Reader, error) {
	var e encoding.Encoding
	switch enc {
	case EncUTF8:
		return &utf8Check{r: r, enc: enc, line: 1}, nil
	case "utf-16", EncUTF16LE, EncUTF16BE:
		// The mark decides the order; one is required.
		e = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
	case EncWindows1256:
		e = charmap.Windows1256
	case EncWindows1252:
		e = charmap.Windows1252
	default:
		return nil, errUnsupportedEncoding(enc)
	}
	return &utf8Check{r: transform.NewReader(r, e.NewDecoder()), enc: enc, line: 1, noFFFD: true}, nil
}

// utf8Check passes UTF-8 through, stopping at invalid bytes (and, after a
// decoder, at U+FFFD: the decoder's mark of a byte it could not map).
type utf8Check struct {
	r      io.Reader
	enc    string
	line   int
	noFFFD bool
	carry  []byte // an incomplete rune at the end of the last read
	err    error
}

func (u *utf8Check) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if len(p) < 2*utf8.UTFMax {
		return 0, io.ErrShortBuffer
	}
	n := copy(p, u.carry)
	u.carry = u.carry[:0]
	k, err := u.r.Read(p[n:])
	n += k
	if errors.Is(err, unicode.ErrMissingBOM) {
		u.err = errUnsupportedEncoding("UTF-16 without its byte-order mark")
		return 0, u.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	// A rune cut by the end of this read waits for the next one.
	end := n
	if err == nil {
		for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
			if utf8.RuneStart(p[i]) {
				if !utf8.FullRune(p[i:n]) {
					end = i
				}
				break
			}
		}
	}
	for i := 0; i < end; {
		c := p[i]
		if c < utf8.RuneSelf {
			if c == '\n' {
				u.line++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:end])
		if r == utf8.RuneError && (size <= 1 || u.noFFFD) {
			u.err = errInvalidEncoding(u.enc, u.line)
			return 0, u.err
		}
		i += size
	}
	u.carry = append(u.carry, p[end:n]...)
	return end, err
}
