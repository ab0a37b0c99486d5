package dataimport

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// PostgreSQL's default pg_dump format (without --inserts) writes a table's
// rows as
//
//	COPY public.radcheck (id, username, attribute, op, value) FROM stdin;
//	1	alice	Cleartext-Password	:=	secret
//	\.
//
// one row a line, the columns separated by tabs, \N for NULL and the
// backslash escapes \b \f \n \r \t \v \\, \digits (octal) and \xHH in
// the text. sqlDump reads those rows like the tuples of an INSERT.

// copyHead reads COPY [schema.]table [(col, ...)] FROM stdin; and the end
// of its line. A COPY that is not FROM stdin is skipped.
func (d *sqlDump) copyHead() error {
	if err := d.tableAndColumns(); err != nil {
		return err
	}
	text, err := d.skipStatement()
	if err != nil {
		return err
	}
	if !strings.Contains(strings.ToLower(text), "stdin") {
		return nil
	}
	// The rows start on the next line.
	for {
		c, err := d.read()
		if err != nil {
			return d.fail("COPY without its rows")
		}
		if c == '\n' {
			break
		}
	}
	d.inCopy = true
	d.setKeep()
	return nil
}

// copyLine reads one line without its newline (nil at the end of input).
func (d *sqlDump) copyLine() ([]byte, error) {
	d.buf = d.buf[:0]
	for {
		b, err := d.r.ReadSlice('\n')
		d.buf = append(d.buf, b...)
		if len(d.buf) > maxDumpValue {
			return nil, d.fail(tooLong)
		}
		if err == nil {
			d.line++
			return bytes.TrimSuffix(d.buf[:len(d.buf)-1], []byte{'\r'}), nil
		}
		if errors.Is(err, io.EOF) {
			if len(d.buf) == 0 {
				return nil, io.EOF
			}
			return d.buf, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// copyRow reads one row of a COPY; nil at its end (\.).
func (d *sqlDump) copyRow() (*sqlRow, error) {
	line := d.line
	b, err := d.copyLine()
	if errors.Is(err, io.EOF) {
		return nil, &errDump{Line: line, Msg: `COPY data without its end (\.)`}
	}
	if err != nil {
		return nil, err
	}
	if len(b) == 2 && b[0] == '\\' && b[1] == '.' {
		d.inCopy = false
		return nil, nil
	}
	if d.only != "" && d.table != d.only {
		return nil, nil
	}
	row := &sqlRow{Table: d.table, Cols: d.cols, Line: line}
	if d.countOnly[d.table] {
		return row, nil
	}
	n := bytes.Count(b, []byte{'\t'}) + 1
	if n > maxDumpValues {
		return nil, d.fail(tooMany)
	}
	row.Vals = make([]sqlValue, 0, n)
	for {
		i := bytes.IndexByte(b, '\t')
		field := b
		if i >= 0 {
			field = b[:i]
		}
		if k := len(row.Vals); d.keepCols != nil && (k >= len(d.keepCols) || !d.keepCols[k]) {
			row.Vals = append(row.Vals, sqlValue{})
		} else {
			row.Vals = append(row.Vals, copyValue(field))
		}
		if i < 0 {
			return row, d.decodeRow(row)
		}
		b = b[i+1:]
	}
}

// copyValue decodes one field of a COPY row.
func copyValue(f []byte) sqlValue {
	if len(f) == 2 && f[0] == '\\' && f[1] == 'N' {
		return sqlValue{Null: true}
	}
	if bytes.IndexByte(f, '\\') < 0 {
		return sqlValue{S: string(f)}
	}
	out := make([]byte, 0, len(f))
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '\\' || i+1 == len(f) {
			out = append(out, c)
			continue
		}
		i++
		switch e := f[i]; e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, '\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(f) && hexDigit(f[i+1]) >= 0 {
				i++
				v = v*16 + hexDigit(f[i])
				n++
			}
			if n == 0 {
				out = append(out, 'x')
			} else {
				out = append(out, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for n := 1; n < 3 && i+1 < len(f) && f[i+1] >= '0' && f[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(f[i]-'0')
			}
			out = append(out, byte(v))
		default:
			out = append(out, e)
		}
	}
	return sqlValue{S: string(out)}
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
