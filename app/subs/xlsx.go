package subs

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/xuri/excelize/v2"
)

// xlsxSheet is the one worksheet of an export.
const xlsxSheet = "Export"

// xlsxWriter streams one worksheet through excelize's StreamWriter: rows
// are written in order and spill to a temporary file past excelize's
// in-memory buffer, so an export of any size stays in bounded memory.
type xlsxWriter struct {
	f   *excelize.File
	sw  *excelize.StreamWriter
	w   io.Writer
	row int
}

// xlsxCell is a cell: a number (Num set) or a string.
type xlsxCell struct {
	Str   string
	Num   string
	IsNum bool
}

func newXLSX(w io.Writer) (*xlsxWriter, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", xlsxSheet); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	sw, err := f.NewStreamWriter(xlsxSheet)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &xlsxWriter{f: f, sw: sw, w: w}, nil
}

// Row writes one row. Numbers are written as numbers (integers exactly,
// money as its decimal value), text as inline strings.
func (x *xlsxWriter) Row(cells []xlsxCell) error {
	vals := make([]any, len(cells))
	for i, c := range cells {
		if !c.IsNum {
			vals[i] = c.Str
			continue
		}
		if n, err := strconv.ParseInt(c.Num, 10, 64); err == nil {
			vals[i] = n
		} else if f, err := strconv.ParseFloat(c.Num, 64); err == nil {
			vals[i] = f
		} else {
			return fmt.Errorf("xlsx: cell %d: %q is not a number", i+1, c.Num)
		}
	}
	x.row++
	cell, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return err
	}
	return x.sw.SetRow(cell, vals)
}

// Close finishes the sheet, writes the workbook and releases excelize's
// temporary files.
func (x *xlsxWriter) Close() error {
	err := x.sw.Flush()
	if err == nil {
		err = x.f.Write(x.w)
	}
	if cerr := x.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abort releases excelize's temporary files after a failed export.
func (x *xlsxWriter) Abort() {
	// Only temporary files are removed; nothing was written to w.
	_ = x.f.Close()
}
