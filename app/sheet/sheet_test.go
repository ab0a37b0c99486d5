package sheet

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"xr/app"
)

// small are limits a test reaches with a few bytes.
var small = Limits{MaxRows: 3, MaxCells: 4, MaxRecord: 512, MaxExpanded: 64 << 20, MaxRatio: 100, MaxOtherParts: 1 << 20, MaxStrings: 5}

func wantRefusal(t *testing.T, err error, reason string, details map[string]any) {
	t.Helper()
	e := app.AsError(err)
	if e == nil || e.Status != 400 || e.Reason != reason || e.Field != "file" {
		t.Fatalf("want 400 %s on file, got %v", reason, err)
	}
	for k, v := range details {
		if fmt.Sprint(e.Details[k]) != fmt.Sprint(v) {
			t.Fatalf("%s: details %v, want %s=%v", reason, e.Details, k, v)
		}
	}
}

// readAll reads every record of a CSV (the header first).
func readAll(r io.Reader, o CSVOptions, lim Limits) ([][]string, error) {
	c, err := NewCSV(r, o, lim)
	if err != nil {
		return nil, err
	}
	out := [][]string{c.Header()}
	for {
		_, rec, err := c.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

// Every encoding a spreadsheet saves CSV in is detected and read as the
// same text; nothing is replaced.
func TestCSVEncodingsDetected(t *testing.T) {
	t.Parallel()
	text := "username,firstname\r\nali,علي\r\nmuller,Müller €\r\n"
	u16le, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(text))
	u16be, _ := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(text))
	arabic := "username,firstname\r\nali,علي حسن\r\nsara,سارة\r\n"
	cp1256, err := charmap.Windows1256.NewEncoder().Bytes([]byte(arabic))
	if err != nil {
		t.Fatal(err)
	}
	latin := "username,firstname\r\nmuller,Müller\r\njose,José Ñoño\r\n"
	cp1252, err := charmap.Windows1252.NewEncoder().Bytes([]byte(latin))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, enc, want string
		body            []byte
	}{
		{"utf-8", EncUTF8, text, []byte(text)},
		{"utf-8 with a mark", EncUTF8, text, append([]byte{0xEF, 0xBB, 0xBF}, text...)},
		{"utf-16le with a mark", EncUTF16LE, text, u16le},
		{"utf-16be with a mark", EncUTF16BE, text, u16be},
		{"windows-1256", EncWindows1256, arabic, cp1256},
		{"latin-1", EncWindows1252, latin, cp1252},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cr, err := NewCSV(bytes.NewReader(c.body), CSVOptions{}, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if cr.Encoding != c.enc {
				t.Fatalf("detected %s, want %s", cr.Encoding, c.enc)
			}
			got, err := readAll(bytes.NewReader(c.body), CSVOptions{}, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			var want [][]string
			for _, l := range strings.Split(strings.TrimSpace(c.want), "\r\n") {
				want = append(want, strings.Split(l, ","))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("read %q, want %q", got, want)
			}
		})
	}
}

// Bytes that are not in the encoding are refused with the line, never
// replaced: invalid UTF-8 after the part that decided the encoding, a
// UTF-16 surrogate alone, a byte Windows-1252 leaves undefined, UTF-16
// without its mark.
func TestCSVEncodingRefusals(t *testing.T) {
	t.Parallel()
	utf8Late := []byte("username\n" + strings.Repeat("ali\n", 20000) + "bad\xff\n")
	lone, _ := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte("username\nali\n"))
	lone = append(lone, 0x00, 0xD8, '\n', 0) // a high surrogate alone
	noMark := []byte{'u', 0, 's', 0, 'e', 0, 'r', 0, '\n', 0}
	for _, c := range []struct {
		name   string
		body   []byte
		o      CSVOptions
		reason string
		line   any
	}{
		{"invalid utf-8 on line 20002", utf8Late, CSVOptions{}, "invalid_encoding", 20002},
		{"declared utf-8, not utf-8", []byte("username\ncaf\xe9\n"), CSVOptions{Encoding: EncUTF8}, "invalid_encoding", 2},
		{"a lone surrogate", lone, CSVOptions{}, "invalid_encoding", nil},
		{"undefined in windows-1252", []byte("username\nx\x81y\n"), CSVOptions{Encoding: EncWindows1252}, "invalid_encoding", 2},
		{"utf-16 without a mark", noMark, CSVOptions{}, "unsupported_encoding", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := readAll(bytes.NewReader(c.body), c.o, DefaultLimits)
			d := map[string]any{}
			if c.line != nil {
				d["line"] = c.line
			}
			wantRefusal(t, err, c.reason, d)
		})
	}
	if _, err := NormalizeEncoding("ebcdic"); app.AsError(err) == nil || app.AsError(err).Reason != "invalid_enum" {
		t.Fatalf("ebcdic: %v", err)
	}
	if e, _ := NormalizeEncoding("Latin-1"); e != EncWindows1252 {
		t.Fatalf("latin-1 is read as %q", e)
	}
}

// The caps hold while reading: rows, cells, and the bytes of one record
// (a quoted cell spanning lines counts as one record).
func TestCSVCaps(t *testing.T) {
	t.Parallel()
	long := "username\n\"" + strings.Repeat("x\n", 300) + "\"\n"
	for _, c := range []struct {
		name, body, reason string
		details            map[string]any
	}{
		{"four rows", "u\n1\n2\n3\n4\n", "too_many_rows", map[string]any{"max": 3, "line": 5}},
		{"five cells", "u\n1,2,3,4,5\n", "too_many_cells", map[string]any{"max": 4, "line": 2}},
		{"five header cells", "a,b,c,d,e\n", "too_many_cells", map[string]any{"line": 1}},
		{"a 513-byte line", "u\n" + strings.Repeat("x", 513) + "\n", "line_too_long", map[string]any{"max_bytes": 512, "line": 2}},
		{"a quoted cell over many lines", long, "line_too_long", map[string]any{"line": 2}},
		{"a long header", strings.Repeat("h", 600), "line_too_long", map[string]any{"line": 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := readAll(strings.NewReader(c.body), CSVOptions{}, small)
			wantRefusal(t, err, c.reason, c.details)
		})
	}
	// At the caps: read whole; a malformed row is reported and skipped.
	got, err := readAll(strings.NewReader("u,v\n1,\"a\nb\"\nx\"y\n3,4\n"), CSVOptions{}, small)
	if !errors.Is(err, ErrMalformedRow) || len(got) != 2 {
		t.Fatalf("%q %v", got, err)
	}
	// Semicolons: a one-column header holding ';' is read again with ';'.
	f := filepath.Join(t.TempDir(), "semi.csv")
	os.WriteFile(f, []byte("username;password\nali;pw\n"), 0o600)
	fh, _ := os.Open(f)
	defer fh.Close()
	got, err = readAll(fh, CSVOptions{}, small)
	if err != nil || fmt.Sprint(got) != "[[username password] [ali pw]]" {
		t.Fatalf("%q %v", got, err)
	}
}

// zipOf writes a zip of the parts (name → body, deflated) to a file.
func zipOf(t *testing.T, parts [][2]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "book.xlsx")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, part := range parts {
		w, err := zw.Create(part[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, part[1])
	}
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return p
}

// workbook is the parts of a one-sheet workbook around sheetData.
func workbook(sheetData string, extra ...[2]string) [][2]string {
	return append([][2]string{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
		{"xl/workbook.xml", `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
		{"xl/worksheets/sheet1.xml", `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + sheetData + `</sheetData></worksheet>`},
	}, extra...)
}

func rows(n, cells int) string {
	var b strings.Builder
	for r := 1; r <= n; r++ {
		fmt.Fprintf(&b, `<row r="%d">`, r)
		for c := 0; c < cells; c++ {
			fmt.Fprintf(&b, `<c r="%c%d" t="inlineStr"><is><t>v%d</t></is></c>`, 'A'+c, r, c)
		}
		b.WriteString(`</row>`)
	}
	return b.String()
}

// lyingZip deflates body but declares it inflates to declared bytes.
func lyingZip(t *testing.T, body []byte, declared uint64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "lie.xlsx")
	f, _ := os.Create(p)
	zw := zip.NewWriter(f)
	var c bytes.Buffer
	fw, _ := flate.NewWriter(&c, flate.BestCompression)
	fw.Write(body)
	fw.Close()
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "xl/worksheets/sheet1.xml", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(body),
		CompressedSize64: uint64(c.Len()), UncompressedSize64: declared})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(c.Bytes())
	if err := errors.Join(zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	return p
}

// A workbook is checked part by part before the XLSX library sees it:
// each refusal is a 400 with its reason and the limit reached.
func TestXLSXRefusals(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("A", 64<<20) // 64 MB of one letter: about 64 KB deflated
	for _, c := range []struct {
		name, reason string
		path         func(t *testing.T) string
		details      map[string]any
	}{
		{"expands 1000 times", "archive_too_large", func(t *testing.T) string {
			return zipOf(t, workbook(`<row r="1"><c t="inlineStr"><is><t>`+big+`</t></is></c></row>`))
		},
			map[string]any{"limit": "expanded_bytes"}},
		{"inflates past its declared size", "archive_too_large", func(t *testing.T) string { return lyingZip(t, []byte(strings.Repeat("<x/>", 1<<18)), 100) },
			map[string]any{"limit": "expanded_bytes"}},
		{"a long cell", "cell_too_large", func(t *testing.T) string {
			return zipOf(t, workbook(`<row r="1"><c t="inlineStr"><is><t>`+strings.Repeat("x", 600)+`</t></is></c></row>`))
		}, map[string]any{"max_bytes": 512, "line": 1}},
		{"a DTD", "malformed_xlsx", func(t *testing.T) string {
			return zipOf(t, workbook(`<!DOCTYPE x [<!ENTITY a "b">]><row r="1"/>`))
		}, nil},
		{"CDATA", "malformed_xlsx", func(t *testing.T) string { return zipOf(t, workbook(`<row r="1"><c><v><![CDATA[1]]></v></c></row>`)) }, nil},
		{"five rows", "too_many_rows", func(t *testing.T) string { return zipOf(t, workbook(rows(5, 1))) }, map[string]any{"max": 3, "line": 5}},
		{"five cells", "too_many_cells", func(t *testing.T) string { return zipOf(t, workbook(rows(1, 5))) }, map[string]any{"max": 4}},
		{"six shared strings", "too_many_cells", func(t *testing.T) string {
			return zipOf(t, workbook(rows(1, 1), [2]string{"xl/sharedStrings.xml", `<sst>` + strings.Repeat(`<si><t>a</t></si>`, 6) + `</sst>`}))
		}, map[string]any{"limit": "shared_strings"}},
		{"a big style part", "archive_too_large", func(t *testing.T) string {
			return zipOf(t, workbook(rows(1, 1), [2]string{"xl/styles.xml", `<styleSheet>` + strings.Repeat(`<x/>`, 600<<10) + `</styleSheet>`}))
		}, map[string]any{"limit": "in_memory_bytes"}},
		{"not a zip", "malformed_xlsx", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "x.xlsx")
			os.WriteFile(p, []byte("PK\x03\x04 not really"), 0o600)
			return p
		}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := c.path(t)
			x, err := OpenXLSX(p, small)
			if x != nil {
				x.Close()
			}
			wantRefusal(t, err, c.reason, c.details)
		})
	}
}

// A workbook within the caps reads row by row from its first sheet,
// shared strings and inline strings alike, the first blank rows passed.
func TestXLSXReads(t *testing.T) {
	t.Parallel()
	f := excelize.NewFile()
	f.SetSheetRow("Sheet1", "A2", &[]any{"username", "firstname"})
	f.SetSheetRow("Sheet1", "A3", &[]any{"ali", "علي"})
	f.SetSheetRow("Sheet1", "A4", &[]any{"sara", 42})
	p := filepath.Join(t.TempDir(), "ok.xlsx")
	if err := f.SaveAs(p); err != nil {
		t.Fatal(err)
	}
	x, err := OpenXLSX(p, small)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	got := [][]string{x.Header()}
	for {
		line, rec, err := x.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, append(rec, fmt.Sprint(line)))
	}
	if fmt.Sprint(got) != "[[username firstname] [ali علي 3] [sara 42 4]]" {
		t.Fatalf("%q", got)
	}
}

// Safe defuses what a spreadsheet would run (=, +, -, @, tab, CR first),
// keeps plain numbers and text; Unescape undoes it.
func TestSafeAndUnescape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=1+1": "'=1+1", "@SUM(A1)": "'@SUM(A1)", "+1+1": "'+1+1", "-2-2": "'-2-2", "\t=x": "'\t=x", "\r=x": "'\r=x",
		"-5": "-5", "-5.250": "-5.250", "+9647700000000": "+9647700000000", "Ali": "Ali", "": "", "-": "'-", "'=x": "'=x",
	} {
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
		if got := Unescape(Safe(in)); got != in && in != "'=x" {
			t.Errorf("Unescape(Safe(%q)) = %q", in, got)
		}
	}
	var b strings.Builder
	w := NewWriter(&b)
	w.Write([]string{"=cmd|' /C calc'!A0", "12", "name"})
	w.Flush()
	if b.String() != "'=cmd|' /C calc'!A0,12,name\n" || w.Error() != nil {
		t.Fatalf("%q", b.String())
	}
}

// TextDecoder: a declared encoding is followed (UTF-8 written through a
// code-page connection kept), an undeclared one is decided by the first
// value past ASCII and kept; what the encoding cannot read is refused
// with the line, never replaced.
func TestTextDecoder(t *testing.T) {
	t.Parallel()
	latin, _ := charmap.Windows1252.NewEncoder().String("Müller")
	arabic, _ := charmap.Windows1256.NewEncoder().String("علي")
	type step struct {
		in, want, reason string
	}
	for _, c := range []struct {
		name    string
		declare string
		steps   []step
	}{
		{"undeclared utf-8", "", []step{{"plain", "plain", ""}, {"Müller", "Müller", ""}, {latin, "", "invalid_encoding"}}},
		{"undeclared latin-1", "", []step{{latin, "Müller", ""}, {"\xe9t\xe9", "été", ""}}},
		{"undeclared windows-1256", "", []step{{arabic, "علي", ""}}},
		{"declared windows-1252", EncWindows1252, []step{{latin, "Müller", ""}, {"علي", "علي", ""}, {"x\x81", "", "invalid_encoding"}}},
		{"declared utf-8", EncUTF8, []step{{latin, "", "invalid_encoding"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var d TextDecoder
			if c.declare != "" {
				d.Declare(c.declare)
			}
			for i, s := range c.steps {
				got, err := d.Decode(s.in, i+1)
				if s.reason != "" {
					if e := app.AsError(err); e == nil || e.Reason != s.reason || e.Details["line"] != i+1 {
						t.Fatalf("step %d: %q %v", i, got, err)
					}
					continue
				}
				if err != nil || got != s.want {
					t.Fatalf("step %d: %q %v, want %q", i, got, err, s.want)
				}
			}
		})
	}
}
