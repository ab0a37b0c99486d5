// Package sheet reads and writes the spreadsheets xr exchanges with
// people: CSV (any of the encodings spreadsheets save in) and XLSX. Every
// reader is a stream with its caps checked while it reads (rows, cells per
// row, bytes of one record, bytes once decompressed), so a file of any
// size or shape costs bounded memory and a refusal is a 400 with a stable
// reason. Every writer escapes cells a spreadsheet would run as formulas
// through one function (Safe).
package sheet

import (
	"xr/app"
)

// Limits bound what a reader accepts.
type Limits struct {
	// MaxRows bounds the records after the header (blank ones count).
	MaxRows int
	// MaxCells bounds the cells of one record.
	MaxCells int
	// MaxRecord bounds the bytes of one record: a CSV line with the lines
	// its quoted cells span, an XLSX tag or cell text.
	MaxRecord int
	// MaxExpanded bounds the bytes of an XLSX's parts once inflated;
	// MaxRatio bounds them again against the file's size (a few hundred
	// bytes of deflate can expand to megabytes).
	MaxExpanded int64
	MaxRatio    int64
	// MaxOtherParts bounds the inflated bytes of the XLSX parts other
	// than worksheets and shared strings (styles, themes, images): the
	// XLSX library holds those in memory.
	MaxOtherParts int64
	// MaxStrings bounds the shared strings of an XLSX (the library keeps
	// an index entry of each in memory).
	MaxStrings int
}

// DefaultLimits suit imports of a million subscribers: a 1,000,000-row
// CSV, or an XLSX of the same within 512 MB of XML.
var DefaultLimits = Limits{
	MaxRows:       1_000_000,
	MaxCells:      1_000,
	MaxRecord:     1 << 20,
	MaxExpanded:   512 << 20,
	MaxRatio:      100,
	MaxOtherParts: 32 << 20,
	MaxStrings:    1_000_000,
}

// expandSlack is what any archive may expand to whatever its ratio: a
// small workbook's styles and themes alone are tens of kilobytes.
const expandSlack int64 = 16 << 20

// ExpandCap is what an archive of size bytes may expand to: the smaller
// of max and ratio × size + 16 MB.
func ExpandCap(size, max, ratio int64) int64 {
	c := expandSlack
	if size > 0 && ratio > 0 {
		if size > (max-expandSlack)/ratio {
			return max
		}
		c += size * ratio
	}
	return min(c, max)
}

// Refusals. Each is a 400 on field file with the limit in details.

// ErrArchiveTooLarge: an archive would expand past its cap (declared or
// actual); limit names which one.
func ErrArchiveTooLarge(limit string, max int64) error {
	return app.ErrValidation("archive_too_large", "file").With("limit", limit).With("max", max)
}

func errTooManyRows(max, line int) error {
	return app.ErrValidation("too_many_rows", "file").With("max", max).With("line", line)
}

func errTooManyCells(max, line int) error {
	return app.ErrValidation("too_many_cells", "file").With("max", max).With("line", line)
}

func errLineTooLong(max, line int) error {
	return app.ErrValidation("line_too_long", "file").With("max_bytes", max).With("line", line)
}

func errHeaderRequired() error { return app.ErrValidation("header_required", "file") }

func errMalformedCSV(line int) error {
	return app.ErrValidation("malformed_csv", "file").With("line", line)
}
