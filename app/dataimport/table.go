package dataimport

import (
	"bytes"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"xr/app"
	"xr/app/sheet"
)

// table is a spreadsheet read row by row: a CSV or the first worksheet of
// an XLSX workbook. Line numbers are the file's (the header is line 1).
type table interface {
	io.Closer
	Header() []string
	// Next is the next non-blank row and its line; io.EOF at the end. A
	// malformed CSV row answers errMalformedRow with its line.
	Next() (line int, rec []string, err error)
}

// errMalformedRow is a row the CSV reader could not parse.
var errMalformedRow = sheet.ErrMalformedRow

// Format of a file: "csv" or "xlsx" (from the bytes: an XLSX is a zip).
func detectFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if n == 4 && bytes.Equal(head, []byte("PK\x03\x04")) {
		return "xlsx", nil
	}
	return "csv", nil
}

// limitsKey holds an App's reader limits (tests lower them).
type limitsKey struct{}

// SetLimits changes the caps of an App's imports (tests).
func SetLimits(a *app.App, l sheet.Limits) { a.SetValue(limitsKey{}, l) }

func limitsOf(a *app.App) sheet.Limits {
	if l, ok := a.Value(limitsKey{}).(sheet.Limits); ok {
		return l
	}
	return sheet.DefaultLimits
}

// streamLimits are the limits of a legacy table read as a stream (a
// radacct table of millions of rows): many more rows.
func streamLimits(a *app.App) sheet.Limits {
	l := limitsOf(a)
	l.MaxRows *= 100
	return l
}

// openTable opens a stored file as a table within the App's limits; enc
// is the spec's encoding ("" detects it).
func openTable(a *app.App, path, format, enc string) (table, error) {
	lim := limitsOf(a)
	if format == "xlsx" {
		x, err := sheet.OpenXLSX(path, lim)
		if err != nil {
			return nil, err
		}
		return &rowsTable{rows: x, close: x.Close}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c, err := sheet.NewCSV(f, sheet.CSVOptions{Encoding: enc, TrimLeadingSpace: true}, lim)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &rowsTable{rows: c, close: f.Close, unescape: true}, nil
}

// rowsTable is a sheet reader as a table: blank rows passed over; with
// unescape (a CSV) the apostrophe a CSV export puts before a formula
// character goes (sheet.Safe), so an export imports back as it was.
type rowsTable struct {
	rows interface {
		Header() []string
		Next() (int, []string, error)
	}
	close    func() error
	unescape bool
}

func (t *rowsTable) Header() []string { return t.rows.Header() }
func (t *rowsTable) Close() error     { return t.close() }

func (t *rowsTable) Next() (int, []string, error) {
	for {
		line, rec, err := t.rows.Next()
		if err != nil {
			return line, nil, err
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		if t.unescape {
			for i, c := range rec {
				rec[i] = sheet.Unescape(c)
			}
		}
		return line, rec, nil
	}
}

// extFormat is the format a file name announces ("" when neither).
func extFormat(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".xlsx":
		return "xlsx"
	case ".csv", ".txt":
		return "csv"
	}
	return ""
}

// keySet remembers the keys a file has shown (usernames, addresses) in
// 16 bytes each, whatever their length: two 64-bit hashes under
// independent seeds (a false "seen" needs both to collide: about one
// chance in 10^38 per pair).
type keySet struct {
	s1, s2 maphash.Seed
	m      map[[2]uint64]struct{}
}

func newKeySet() *keySet {
	return &keySet{s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), m: map[[2]uint64]struct{}{}}
}

func (s *keySet) key(k string) [2]uint64 {
	return [2]uint64{maphash.String(s.s1, k), maphash.String(s.s2, k)}
}

// has says whether k was added.
func (s *keySet) has(k string) bool {
	_, ok := s.m[s.key(k)]
	return ok
}

// add records k and says whether it was new.
func (s *keySet) add(k string) bool {
	h := s.key(k)
	if _, ok := s.m[h]; ok {
		return false
	}
	s.m[h] = struct{}{}
	return true
}

// maxListedErrors bounds the refused lines a report lists (every one is
// counted in failed; a job stores them as it writes).
const maxListedErrors = 10_000

// refuse counts a refused line and lists it while the list has room.
func (rep *Report) refuse(le LineError) {
	rep.Failed++
	if len(rep.Errors) < maxListedErrors {
		rep.Errors = append(rep.Errors, le)
		return
	}
	rep.ErrorsTruncated = true
}
