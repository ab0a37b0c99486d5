package sheet

import (
	"encoding/csv"
	"io"
	"strings"
)

// A cell a spreadsheet would read as a formula (=, +, -, @, or a tab or
// carriage return first: CSV injection) is written with a leading
// apostrophe, the spreadsheets' own mark of text; a plain number (-5.250,
// +9647700000000) is written as it is. Every CSV xr writes goes through
// Safe (NewWriter applies it to every cell); XLSX text cells are strings,
// which no spreadsheet evaluates. Readers undo it (Unescape), as a
// spreadsheet does when it saves the cell.

// Safe is s defused for a spreadsheet.
func Safe(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) || plainNumber(s) {
		return s
	}
	return "'" + s
}

// Unescape is Safe undone: an apostrophe before a formula character goes.
func Unescape(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

// plainNumber: an optional sign, digits, at most one decimal point.
func plainNumber(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	digits, dot := 0, false
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// Writer writes CSV records with every cell through Safe.
type Writer struct {
	cw  *csv.Writer
	rec []string
}

// NewWriter writes CSV to w.
func NewWriter(w io.Writer) *Writer { return &Writer{cw: csv.NewWriter(w)} }

// Write writes one record.
func (w *Writer) Write(rec []string) error {
	w.rec = w.rec[:0]
	for _, c := range rec {
		w.rec = append(w.rec, Safe(c))
	}
	return w.cw.Write(w.rec)
}

// Flush writes what is buffered; Error is the first error of a write or
// flush.
func (w *Writer) Flush()       { w.cw.Flush() }
func (w *Writer) Error() error { return w.cw.Error() }
