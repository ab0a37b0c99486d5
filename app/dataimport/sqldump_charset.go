package dataimport

import (
	"regexp"
	"strings"

	"xr/app"
	"xr/app/sheet"
)

// A dump's strings are in the encoding its connection declared: mysqldump
// writes /*!40101 SET NAMES utf8mb4 */ (or latin1, cp1256 with
// --default-character-set), pg_dump SET client_encoding = 'UTF8'. sqlDump
// notes the declaration and decodes every value it keeps through a
// sheet.TextDecoder; an undeclared dump's encoding is detected from its
// first non-ASCII value.

var charsetRe = regexp.MustCompile(`(?i)\bset\s+(?:names\s+'?([a-z0-9_]+)|client_encoding\s*(?:=|to)\s*'?([a-z0-9_-]+))`)

// sqlCharsets maps MySQL's and PostgreSQL's names to sheet's encodings
// ("" for a declaration that says nothing: the values are detected).
var sqlCharsets = map[string]string{
	"utf8": sheet.EncUTF8, "utf8mb3": sheet.EncUTF8, "utf8mb4": sheet.EncUTF8, "unicode": sheet.EncUTF8,
	"latin1": sheet.EncWindows1252, "cp1252": sheet.EncWindows1252, "win1252": sheet.EncWindows1252, "windows_1252": sheet.EncWindows1252,
	"cp1256": sheet.EncWindows1256, "win1256": sheet.EncWindows1256, "windows_1256": sheet.EncWindows1256,
	"binary": "", "sql_ascii": "", "ascii": "", "default": "",
}

// noteCharset reads a SET NAMES or client_encoding declaration in a
// statement's text; a charset xr cannot read is 400 unsupported_encoding.
func (d *sqlDump) noteCharset(text string) error {
	m := charsetRe.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	name := strings.ToLower(strings.ReplaceAll(m[1]+m[2], "-", "_"))
	enc, ok := sqlCharsets[name]
	if !ok {
		return app.ErrValidation("unsupported_encoding", "file").With("detail", "the dump's strings are in "+name).With("line", d.line)
	}
	if enc != "" {
		d.text.Declare(enc)
	}
	return nil
}

// decodeRow decodes the kept values of a row.
func (d *sqlDump) decodeRow(row *sqlRow) error {
	for i := range row.Vals {
		s, err := d.text.Decode(row.Vals[i].S, row.Line)
		if err != nil {
			return err
		}
		row.Vals[i].S = s
	}
	return nil
}
