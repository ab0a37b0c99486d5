package subs

import (
	"archive/zip"
	"bufio"
	"encoding/xml"
	"io"
	"strings"
)

// xlsxWriter streams one worksheet of an Office Open XML workbook
// (ECMA-376): the fixed package parts, then rows of inline strings and
// numbers. No shared-string table, no styles: enough for a spreadsheet
// application to open an export of any size in constant memory.
type xlsxWriter struct {
	zw    *zip.Writer
	sheet *bufio.Writer
}

// xlsxCell is a cell: a number (Num set) or a string.
type xlsxCell struct {
	Str   string
	Num   string
	IsNum bool
}

var xlsxParts = []struct{ name, body string }{
	{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`},
	{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`},
	{"xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Export" sheetId="1" r:id="rId1"/></sheets></workbook>`},
	{"xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`},
}

func newXLSX(w io.Writer) (*xlsxWriter, error) {
	zw := zip.NewWriter(w)
	for _, p := range xlsxParts {
		f, err := zw.Create(p.name)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(f, p.body); err != nil {
			return nil, err
		}
	}
	f, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		return nil, err
	}
	x := &xlsxWriter{zw: zw, sheet: bufio.NewWriterSize(f, 64<<10)}
	x.sheet.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n" +
		`<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`)
	return x, nil
}

// Row writes one row.
func (x *xlsxWriter) Row(cells []xlsxCell) error {
	x.sheet.WriteString("<row>")
	for _, c := range cells {
		if c.IsNum {
			x.sheet.WriteString("<c><v>")
			x.sheet.WriteString(c.Num)
			x.sheet.WriteString("</v></c>")
			continue
		}
		x.sheet.WriteString(`<c t="inlineStr"><is><t xml:space="preserve">`)
		if err := xml.EscapeText(x.sheet, []byte(c.Str)); err != nil {
			return err
		}
		x.sheet.WriteString("</t></is></c>")
	}
	_, err := x.sheet.WriteString("</row>")
	return err
}

// Close finishes the sheet and the package.
func (x *xlsxWriter) Close() error {
	x.sheet.WriteString("</sheetData></worksheet>")
	if err := x.sheet.Flush(); err != nil {
		return err
	}
	return x.zw.Close()
}

// csvSafe defuses a text cell a spreadsheet would run as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
