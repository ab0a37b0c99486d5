package sheet

import (
	"archive/zip"
	"bufio"
	"errors"
	"io"
	"os"
	"path"
	"strings"

	"github.com/xuri/excelize/v2"

	"xr/app"
)

// What the XLSX library does with a workbook (excelize v2.11, read in its
// source): OpenFile reads the zip through an io.ReaderAt; every part is
// inflated into memory except worksheets and the shared strings larger
// than UnzipXMLSizeLimit, which go to temporary files; styles, theme and
// calculation chain are parsed at open; Rows streams a worksheet through
// an xml.Decoder (one token at a time, but a token is as long as the text
// or tag it holds); the first shared-string lookup copies the strings to
// a temporary file and keeps an index entry (about 50 bytes) of each in
// memory. Declared sizes are checked against UnzipSizeLimit, and Go's zip
// reader refuses an entry that inflates past its declared size.
//
// So before the library sees a file, CheckXLSX inflates every part through
// a counter and refuses: more parts than maxParts, more bytes declared or
// read than the caps (ExpandCap), more bytes in the parts kept in memory
// than MaxOtherParts (any one past maxPartInMemory), and in worksheets and
// shared strings a tag or text longer than MaxRecord, a DTD, comment or
// CDATA section (which would be one token of any length), more rows than
// MaxRows, more cells in a row than MaxCells, more strings than
// MaxStrings. What is left fits in bounded memory and bounded temporary
// files.

const (
	// inMemoryXML is the library's UnzipXMLSizeLimit: worksheets and
	// shared strings larger than this go to temporary files.
	inMemoryXML = 1 << 20
	// maxPartInMemory bounds one part the library inflates into memory
	// and parses at open (styles, theme, calculation chain).
	maxPartInMemory = 8 << 20
)

func errMalformedXLSX(detail string) error {
	return app.ErrValidation("malformed_xlsx", "file").With("detail", detail)
}

func errCellTooLarge(max, row int) error {
	return app.ErrValidation("cell_too_large", "file").With("max_bytes", max).With("line", row)
}

// partKind: worksheets and shared strings are scanned; the rest counted.
func partKind(name string) string {
	n := strings.ToLower(strings.ReplaceAll(name, `\`, "/"))
	switch {
	case strings.HasPrefix(n, "xl/worksheets/") && path.Ext(n) == ".xml" && !strings.Contains(strings.TrimPrefix(n, "xl/worksheets/"), "/"):
		return "sheet"
	case n == "xl/sharedstrings.xml":
		return "strings"
	}
	return "other"
}

// CheckXLSX checks the workbook at p within lim (see above), inflating each
// part once; nothing is written.
func CheckXLSX(p string, lim Limits) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return errMalformedXLSX("not a zip")
	}
	defer func() { _ = zr.Close() }() // read only
	limit, err := CheckZip(p, &zr.Reader, lim.MaxExpanded, lim.MaxRatio)
	if err != nil {
		return err
	}
	var memory uint64
	for _, f := range zr.File {
		if k := partKind(f.Name); k == "other" || f.UncompressedSize64 <= inMemoryXML {
			if f.UncompressedSize64 > maxPartInMemory {
				return ErrArchiveTooLarge("part_bytes", maxPartInMemory)
			}
			if memory += f.UncompressedSize64; memory > uint64(lim.MaxOtherParts) {
				return ErrArchiveTooLarge("in_memory_bytes", lim.MaxOtherParts)
			}
		}
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := OpenEntry(f, limit)
		if err != nil {
			return errMalformedXLSX(f.Name + ": " + err.Error())
		}
		switch partKind(f.Name) {
		case "sheet":
			err = scanXML(rc, lim, "row")
		case "strings":
			err = scanXML(rc, lim, "si")
		default:
			_, err = io.Copy(io.Discard, rc)
		}
		err = errors.Join(err, rc.Close())
		if err != nil {
			if ae := app.AsError(err); ae != nil {
				return ae
			}
			return errMalformedXLSX(f.Name + ": " + err.Error())
		}
	}
	return nil
}

// scanXML reads a worksheet (unit "row") or the shared strings (unit "si")
// byte by byte: no tag or text run longer than MaxRecord, no "<!" (DTD,
// comment, CDATA), at most MaxRows rows (+1, the header) of at most
// MaxCells cells, or MaxStrings strings.
func scanXML(r io.Reader, lim Limits, unit string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		inTag, nameDone, closing bool
		run                      int
		name                     []byte
		units, cells             int
	)
	for {
		c, err := br.ReadByte()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		run++
		if run > lim.MaxRecord {
			return errCellTooLarge(lim.MaxRecord, units)
		}
		if !inTag {
			if c == '<' {
				inTag, nameDone, closing, name, run = true, false, false, name[:0], 0
			}
			continue
		}
		if c == '>' {
			inTag, run = false, 0
			if closing {
				continue
			}
			if !nameDone {
				nameDone = true
			}
			local := name
			if i := strings.LastIndexByte(string(name), ':'); i >= 0 {
				local = name[i+1:]
			}
			switch {
			case string(local) == unit:
				units++
				cells = 0
				if unit == "row" && units > lim.MaxRows+1 {
					return errTooManyRows(lim.MaxRows, units)
				}
				if unit == "si" && units > lim.MaxStrings {
					return app.ErrValidation("too_many_cells", "file").With("max", lim.MaxStrings).With("limit", "shared_strings")
				}
			case unit == "row" && string(local) == "c":
				if cells++; cells > lim.MaxCells {
					return errTooManyCells(lim.MaxCells, units)
				}
			}
			continue
		}
		if nameDone {
			continue
		}
		switch {
		case run == 1 && c == '!':
			return errMalformedXLSX("a DTD, comment or CDATA section")
		case run == 1 && (c == '/' || c == '?'):
			closing = true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '/':
			nameDone = true
		case len(name) < 32:
			name = append(name, c)
		}
	}
}

// XLSX reads the first worksheet of a workbook row by row.
type XLSX struct {
	f      *excelize.File
	rows   *excelize.Rows
	lim    Limits
	header []string
	line   int
	n      int
	done   bool
}

// OpenXLSX checks the workbook at p (CheckXLSX) and opens its first
// worksheet, its header read (the first row that is not blank).
func OpenXLSX(p string, lim Limits) (*XLSX, error) {
	if err := CheckXLSX(p, lim); err != nil {
		return nil, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	f, err := excelize.OpenFile(p, excelize.Options{UnzipSizeLimit: ExpandCap(st.Size(), lim.MaxExpanded, lim.MaxRatio), UnzipXMLSizeLimit: inMemoryXML})
	if err != nil {
		return nil, errMalformedXLSX(err.Error())
	}
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		_ = f.Close() // refused: the workbook is only read
		return nil, errHeaderRequired()
	}
	rows, err := f.Rows(sheets[0])
	if err != nil {
		_ = f.Close() // refused: the workbook is only read
		return nil, errMalformedXLSX(err.Error())
	}
	x := &XLSX{f: f, rows: rows, lim: lim}
	for {
		line, rec, err := x.next()
		if errors.Is(err, io.EOF) {
			_ = x.Close() // refused: the workbook is only read
			return nil, errHeaderRequired()
		}
		if err != nil {
			_ = x.Close() // refused: the workbook is only read
			if errors.Is(err, ErrMalformedRow) {
				return nil, errMalformedXLSX("header row")
			}
			return nil, err
		}
		if !blank(rec) {
			x.header, x.line = rec, line
			return x, nil
		}
	}
}

// Header is the first row that is not blank.
func (x *XLSX) Header() []string { return x.header }

// Next is the next row and its number; io.EOF at the end. A row the
// library cannot read answers ErrMalformedRow.
func (x *XLSX) Next() (int, []string, error) {
	line, rec, err := x.next()
	if err != nil {
		return line, nil, err
	}
	if x.n++; x.n > x.lim.MaxRows {
		return 0, nil, errTooManyRows(x.lim.MaxRows, line)
	}
	return line, rec, nil
}

func (x *XLSX) next() (int, []string, error) {
	if x.done || !x.rows.Next() {
		if err := x.rows.Error(); err != nil && !x.done {
			x.done = true // the sheet ends at the row it could not read
			return x.line, nil, ErrMalformedRow
		}
		return 0, nil, io.EOF
	}
	x.line++
	rec, err := x.rows.Columns()
	if err != nil {
		return x.line, nil, ErrMalformedRow
	}
	if len(rec) > x.lim.MaxCells {
		return 0, nil, errTooManyCells(x.lim.MaxCells, x.line)
	}
	return x.line, rec, nil
}

// Close releases the workbook and the library's temporary files.
func (x *XLSX) Close() error {
	return errors.Join(x.rows.Close(), x.f.Close())
}

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}
