package dataimport

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"

	"xr/app"
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
var errMalformedRow = errors.New("malformed row")

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

// openTable opens a stored file as a table.
func openTable(path, format string) (table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if format == "xlsx" {
		x, err := excelize.OpenReader(f)
		f.Close()
		if err != nil {
			return nil, app.ErrValidation("malformed_xlsx", "file")
		}
		sheets := x.GetSheetList()
		if len(sheets) == 0 {
			_ = x.Close() // refused: the workbook is only read
			return nil, app.ErrValidation("header_required", "file")
		}
		rows, err := x.Rows(sheets[0])
		if err != nil {
			_ = x.Close() // refused: the workbook is only read
			return nil, app.ErrValidation("malformed_xlsx", "file")
		}
		t := &xlsxTable{f: x, rows: rows}
		if err := t.readHeader(); err != nil {
			_ = t.Close() // refused: the workbook is only read
			return nil, err
		}
		return t, nil
	}
	cr := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = false
	t := &csvTable{f: f, cr: cr}
	h, err := cr.Read()
	if errors.Is(err, io.EOF) {
		f.Close()
		return nil, app.ErrValidation("header_required", "file")
	}
	if err != nil {
		f.Close()
		return nil, app.ErrValidation("malformed_csv", "file").With("line", 1)
	}
	if len(h) > 0 {
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	// A semicolon-separated file (spreadsheets in many locales) reads as
	// one column: read it again with ';'.
	if len(h) == 1 && strings.Contains(h[0], ";") {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		cr = csv.NewReader(bufio.NewReaderSize(f, 64<<10))
		cr.Comma = ';'
		cr.FieldsPerRecord = -1
		cr.TrimLeadingSpace = true
		t.cr = cr
		if h, err = cr.Read(); err != nil {
			f.Close()
			return nil, app.ErrValidation("malformed_csv", "file").With("line", 1)
		}
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	t.header = h
	return t, nil
}

type csvTable struct {
	f      *os.File
	cr     *csv.Reader
	header []string
}

func (t *csvTable) Header() []string { return t.header }
func (t *csvTable) Close() error     { return t.f.Close() }

func (t *csvTable) Next() (int, []string, error) {
	for {
		rec, err := t.cr.Read()
		if errors.Is(err, io.EOF) {
			return 0, nil, io.EOF
		}
		line, _ := t.cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return pe.StartLine, nil, errMalformedRow
			}
			return 0, nil, err
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		return line, rec, nil
	}
}

type xlsxTable struct {
	f      *excelize.File
	rows   *excelize.Rows
	header []string
	line   int
}

func (t *xlsxTable) readHeader() error {
	for t.rows.Next() {
		t.line++
		rec, err := t.rows.Columns()
		if err != nil {
			return app.ErrValidation("malformed_xlsx", "file")
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		t.header = rec
		return nil
	}
	return app.ErrValidation("header_required", "file")
}

func (t *xlsxTable) Header() []string { return t.header }

func (t *xlsxTable) Close() error {
	err := t.rows.Close()
	return errors.Join(err, t.f.Close())
}

func (t *xlsxTable) Next() (int, []string, error) {
	for t.rows.Next() {
		t.line++
		rec, err := t.rows.Columns()
		if err != nil {
			return t.line, nil, errMalformedRow
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue
		}
		return t.line, rec, nil
	}
	if err := t.rows.Error(); err != nil {
		return t.line, nil, errMalformedRow
	}
	return 0, nil, io.EOF
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
