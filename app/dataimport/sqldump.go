package dataimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"xr/app/sheet"
)

// sqlDump reads the rows of the INSERT statements of a SQL dump, one tuple
// at a time, without holding the dump in memory. It is not a SQL parser:
// every other statement (CREATE TABLE, LOCK TABLES, SET, ...) is skipped
// to its semicolon, and of INSERT it knows only
//
//	INSERT [IGNORE] INTO [schema.]table [(col, ...)] VALUES (v, ...), (v, ...);
//
// (REPLACE INTO alike). Values are quoted strings, NULL, or bare tokens
// (numbers). Quoting follows MySQL: '...' or "...", a quote doubled inside
// stands for itself, and backslash escapes \0 \' \" \b \n \r \t \Z \\ (\%
// and \_ keep their backslash, any other \x is x). A dump that says SET
// standard_conforming_strings = on (pg_dump --inserts) takes backslashes
// literally, and E'...' strings use the escapes. Identifiers may be quoted
// with backticks or double quotes.
type sqlDump struct {
	r    *bufio.Reader
	line int
	// pgStrings: backslashes are literal in '...' (PostgreSQL's
	// standard_conforming_strings).
	pgStrings bool

	// countOnly are tables whose tuples are counted, not read: their
	// rows come back without values.
	countOnly map[string]bool

	// The statement being read.
	inInsert bool
	table    string
	cols     []string

	// only: when set, the tuples of every other table are skipped.
	only string
	// inCopy: reading the rows of a PostgreSQL COPY ... FROM stdin.
	inCopy bool
	// keep, when set, says which values of a table's tuples are read (by
	// position; nil = all): the others come back empty, never built.
	keep     func(table string, cols []string) []bool
	keepCols []bool
	lastN    int
	// buf is the scratch of word and quoted.
	buf []byte
	// text decodes the values (sqldump_charset.go).
	text sheet.TextDecoder
}

// scsRe finds PostgreSQL's SET standard_conforming_strings = on|off.
var scsRe = regexp.MustCompile(`standard_conforming_strings\s*(?:=|to)\s*'?(on|off)`)

// sqlValue is one value: Null or the text.
type sqlValue struct {
	S    string
	Null bool
}

// sqlRow is one tuple of an INSERT.
type sqlRow struct {
	Table string
	Cols  []string // nil when the INSERT named none
	Vals  []sqlValue
	Line  int // the line of the tuple's opening parenthesis
}

// errDump is a malformed dump, with the line.
type errDump struct {
	Line int
	Msg  string
}

func (e *errDump) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// A dump's values are bounded like a spreadsheet's cells: a value (or a
// COPY line) of at most maxDumpValue bytes, a tuple of at most
// maxDumpValues values; past them the dump is refused with the line.
const (
	maxDumpValue  = 1 << 20
	maxDumpValues = 1000
	tooLong       = "a value (or line) longer than 1 MB"
	tooMany       = "a row of more than 1,000 values"
)

func newSQLDump(r io.Reader) *sqlDump { return &sqlDump{r: bufio.NewReaderSize(r, 256<<10), line: 1} }

func (d *sqlDump) fail(msg string) error { return &errDump{Line: d.line, Msg: msg} }

func (d *sqlDump) read() (byte, error) {
	c, err := d.r.ReadByte()
	if err == nil && c == '\n' {
		d.line++
	}
	return c, err
}

func (d *sqlDump) unread(c byte) {
	if err := d.r.UnreadByte(); err == nil && c == '\n' {
		d.line--
	}
}

func (d *sqlDump) peek() (byte, error) {
	b, err := d.r.Peek(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// skipSpace skips blanks and comments (-- ..., # ..., /* ... */). It
// looks ahead with Peek only, so nothing is read that is not skipped.
func (d *sqlDump) skipSpace() error {
	for {
		b, err := d.r.Peek(2)
		if len(b) == 0 {
			return err
		}
		switch {
		case b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r':
			_, _ = d.read()
		case b[0] == '#' || (len(b) == 2 && b[0] == '-' && b[1] == '-'):
			if err := d.skipLine(); err != nil {
				return err
			}
		case len(b) == 2 && b[0] == '/' && b[1] == '*':
			_, _ = d.read()
			_, _ = d.read()
			// MySQL's executable comments (/*!40101 SET NAMES utf8mb4 */)
			// carry the dump's encoding.
			var exec string
			if head, _ := d.r.Peek(200); len(head) > 0 && head[0] == '!' {
				exec, _, _ = strings.Cut(string(head), "*/")
			}
			if err := d.skipBlockComment(); err != nil {
				return err
			}
			if exec != "" {
				if err := d.noteCharset(exec); err != nil {
					return err
				}
			}
		default:
			return nil
		}
	}
}

func (d *sqlDump) skipLine() error {
	for {
		c, err := d.read()
		if err != nil || c == '\n' {
			return err
		}
	}
}

func (d *sqlDump) skipBlockComment() error {
	prev := byte(0)
	for {
		c, err := d.read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return d.fail("unterminated comment")
			}
			return err
		}
		if prev == '*' && c == '/' {
			return nil
		}
		prev = c
	}
}

// word reads a bare word (letters, digits, _ $ . and any byte >= 0x80),
// scanning the buffered bytes without a call per byte.
func (d *sqlDump) word() (string, error) {
	d.buf = d.buf[:0]
	for {
		b, err := d.r.Peek(1)
		if len(b) == 0 {
			if errors.Is(err, io.EOF) {
				return string(d.buf), nil
			}
			return "", err
		}
		b, _ = d.r.Peek(d.r.Buffered())
		i := 0
		for i < len(b) && wordByte[b[i]] {
			i++
		}
		d.buf = append(d.buf, b[:i]...)
		_, _ = d.r.Discard(i)
		if len(d.buf) > maxDumpValue {
			return "", d.fail(tooLong)
		}
		if i < len(b) {
			return string(d.buf), nil
		}
	}
}

// wordByte: the bytes of a bare word.
var wordByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '_' || c == '$' || c == '.' || c >= 0x80 || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))
	}
	return t
}()

// skipStatement skips to the semicolon ending the statement (quotes and
// comments respected); it returns the statement's text up to 200 bytes.
func (d *sqlDump) skipStatement() (string, error) {
	var b strings.Builder
	for {
		c, err := d.read()
		if err != nil {
			return b.String(), err
		}
		switch c {
		case ';':
			return b.String(), nil
		case '\'', '"', '`':
			s, err := d.quoted(c, d.pgStrings)
			if err != nil {
				return "", err
			}
			if b.Len() < 200 {
				b.WriteByte(c)
				b.WriteString(s)
				b.WriteByte(c)
			}
			continue
		case '#':
			if err := d.skipLine(); err != nil {
				return "", err
			}
			continue
		case '-', '/':
			if n, _ := d.peek(); (c == '-' && n == '-') || (c == '/' && n == '*') {
				_, _ = d.read()
				if c == '-' {
					err = d.skipLine()
				} else {
					err = d.skipBlockComment()
				}
				if err != nil {
					return "", err
				}
				continue
			}
		}
		if b.Len() < 200 {
			b.WriteByte(c)
		}
	}
}

// quoted reads a quoted string or identifier after its opening quote q.
// literal: backslashes are plain characters. The plain runs between
// quotes and backslashes are copied from the buffered bytes at once.
func (d *sqlDump) quoted(q byte, literal bool) (string, error) {
	start := d.line
	d.buf = d.buf[:0]
	for {
		b, err := d.r.Peek(1)
		if len(b) == 0 {
			if errors.Is(err, io.EOF) {
				return "", &errDump{Line: start, Msg: "unterminated string"}
			}
			return "", err
		}
		b, _ = d.r.Peek(d.r.Buffered())
		i := 0
		for i < len(b) && b[i] != q && (b[i] != '\\' || literal || q == '`') {
			if b[i] == '\n' {
				d.line++
			}
			i++
		}
		d.buf = append(d.buf, b[:i]...)
		_, _ = d.r.Discard(i)
		if len(d.buf) > maxDumpValue {
			return "", &errDump{Line: start, Msg: tooLong}
		}
		if i == len(b) {
			continue
		}
		c, _ := d.r.ReadByte()
		if c == q {
			if n, err := d.peek(); err == nil && n == q {
				_, _ = d.r.ReadByte()
				d.buf = append(d.buf, q)
				continue
			}
			return string(d.buf), nil
		}
		// A backslash escape.
		e, err := d.read()
		if err != nil {
			return "", &errDump{Line: start, Msg: "unterminated string"}
		}
		switch e {
		case '0':
			d.buf = append(d.buf, 0)
		case 'b':
			d.buf = append(d.buf, '\b')
		case 'n':
			d.buf = append(d.buf, '\n')
		case 'r':
			d.buf = append(d.buf, '\r')
		case 't':
			d.buf = append(d.buf, '\t')
		case 'Z':
			d.buf = append(d.buf, 0x1a)
		case '%', '_':
			d.buf = append(d.buf, '\\', e)
		default:
			d.buf = append(d.buf, e)
		}
	}
}

// skipQuoted skips a quoted string after its opening quote q, keeping
// nothing.
func (d *sqlDump) skipQuoted(q byte, literal bool) error {
	start := d.line
	for {
		b, err := d.r.Peek(1)
		if len(b) == 0 {
			if errors.Is(err, io.EOF) {
				return &errDump{Line: start, Msg: "unterminated string"}
			}
			return err
		}
		b, _ = d.r.Peek(d.r.Buffered())
		i := 0
		for i < len(b) && b[i] != q && (b[i] != '\\' || literal) {
			if b[i] == '\n' {
				d.line++
			}
			i++
		}
		_, _ = d.r.Discard(i)
		if i == len(b) {
			continue
		}
		c, _ := d.r.ReadByte()
		if c == q {
			if n, err := d.peek(); err == nil && n == q {
				_, _ = d.r.ReadByte()
				continue
			}
			return nil
		}
		if _, err := d.read(); err != nil {
			return &errDump{Line: start, Msg: "unterminated string"}
		}
	}
}

// ident reads an identifier (quoted or bare), the last part of a dotted
// name.
func (d *sqlDump) ident() (string, error) {
	if err := d.skipSpace(); err != nil {
		return "", err
	}
	name := ""
	for {
		c, err := d.read()
		if err != nil {
			return "", err
		}
		if c == '`' || c == '"' {
			s, err := d.quoted(c, true)
			if err != nil {
				return "", err
			}
			name = s
		} else {
			d.unread(c)
			w, err := d.word()
			if err != nil {
				return "", err
			}
			if w == "" {
				return "", d.fail("identifier expected")
			}
			if i := strings.LastIndexByte(w, '.'); i >= 0 {
				if i == len(w)-1 {
					continue // schema. then a quoted name
				}
				w = w[i+1:]
			}
			name = w
		}
		if n, err := d.peek(); err == nil && n == '.' {
			_, _ = d.read()
			continue
		}
		return name, nil
	}
}

// Next returns the next tuple of an INSERT, io.EOF at the end.
func (d *sqlDump) Next() (*sqlRow, error) {
	for {
		if d.inInsert {
			row, err := d.tuple()
			if err != nil || row != nil {
				return row, err
			}
			continue
		}
		if d.inCopy {
			row, err := d.copyRow()
			if err != nil || row != nil {
				return row, err
			}
			continue
		}
		if err := d.skipSpace(); err != nil {
			return nil, err
		}
		c, err := d.peek()
		if err != nil {
			return nil, err
		}
		if c == ';' {
			_, _ = d.read()
			continue
		}
		w, err := d.word()
		if err != nil {
			return nil, err
		}
		kw := strings.ToUpper(w)
		if kw == "COPY" {
			if err := d.copyHead(); err != nil {
				return nil, err
			}
			continue
		}
		if kw != "INSERT" && kw != "REPLACE" {
			text, err := d.skipStatement()
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			if err != nil {
				return nil, err
			}
			low := strings.ToLower(kw + text)
			if m := scsRe.FindStringSubmatch(low); m != nil {
				d.pgStrings = m[1] == "on"
			}
			if err := d.noteCharset(kw + " " + text); err != nil {
				return nil, err
			}
			continue
		}
		if err := d.insertHead(); err != nil {
			return nil, err
		}
	}
}

// insertHead reads INSERT ... VALUES up to the first tuple.
func (d *sqlDump) insertHead() error {
	for {
		if err := d.skipSpace(); err != nil {
			return err
		}
		w, err := d.word()
		if err != nil {
			return err
		}
		switch strings.ToUpper(w) {
		case "IGNORE", "LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY":
			continue
		case "INTO":
		default:
			return d.fail("INTO expected")
		}
		break
	}
	if err := d.tableAndColumns(); err != nil {
		return err
	}
	w, err := d.word()
	if err != nil {
		return err
	}
	if u := strings.ToUpper(w); u != "VALUES" && u != "VALUE" {
		return d.fail("VALUES expected")
	}
	d.inInsert = true
	d.setKeep()
	return nil
}

// tuple reads one (v, ...) and the separator after it; nil at the
// statement's end.
func (d *sqlDump) tuple() (*sqlRow, error) {
	if err := d.skipSpace(); err != nil {
		if errors.Is(err, io.EOF) {
			d.inInsert = false
			return nil, nil
		}
		return nil, err
	}
	c, err := d.read()
	if err != nil {
		return nil, err
	}
	switch c {
	case ',':
		return nil, nil
	case ';':
		d.inInsert = false
		return nil, nil
	case '(':
	default:
		d.unread(c)
		// ON DUPLICATE KEY UPDATE ... or the end of the statement.
		d.inInsert = false
		_, err := d.skipStatement()
		if errors.Is(err, io.EOF) {
			err = nil
		}
		return nil, err
	}
	if d.only != "" && d.table != d.only {
		return nil, d.skipTuple()
	}
	row := &sqlRow{Table: d.table, Cols: d.cols, Line: d.line}
	if d.countOnly[d.table] {
		return row, d.skipTuple()
	}
	row.Vals = make([]sqlValue, 0, d.lastN)
	defer func() { d.lastN = max(d.lastN, len(row.Vals)) }()
	for {
		if err := d.skipSpace(); err != nil {
			return nil, d.fail("unterminated tuple")
		}
		if i := len(row.Vals); d.keepCols != nil && (i >= len(d.keepCols) || !d.keepCols[i]) {
			if c, _ := d.peek(); c == '\'' || c == '"' {
				_, _ = d.r.ReadByte()
				if err := d.skipQuoted(c, d.pgStrings); err != nil {
					return nil, err
				}
				row.Vals = append(row.Vals, sqlValue{})
				goto next
			}
		}
		{
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			row.Vals = append(row.Vals, v)
		}
	next:
		if len(row.Vals) > maxDumpValues {
			return nil, d.fail(tooMany)
		}
		if err := d.skipSpace(); err != nil {
			return nil, d.fail("unterminated tuple")
		}
		c, err := d.read()
		if err != nil {
			return nil, d.fail("unterminated tuple")
		}
		if c == ')' {
			return row, d.decodeRow(row)
		}
		if c != ',' {
			return nil, d.fail("',' or ')' expected in a tuple")
		}
	}
}

// skipTuple skips to the parenthesis closing the tuple (quotes and nested
// parentheses respected) without keeping the values, scanning the
// buffered bytes.
func (d *sqlDump) skipTuple() error {
	start := d.line
	depth := 1
	for {
		b, _ := d.r.Peek(1)
		if len(b) == 0 {
			return &errDump{Line: start, Msg: "unterminated tuple"}
		}
		b, _ = d.r.Peek(d.r.Buffered())
		i := 0
	scan:
		for ; i < len(b); i++ {
			switch b[i] {
			case '\n':
				d.line++
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					_, _ = d.r.Discard(i + 1)
					return nil
				}
			case '\'', '"':
				break scan
			}
		}
		_, _ = d.r.Discard(i)
		if i == len(b) {
			continue
		}
		q, _ := d.r.ReadByte()
		if err := d.skipQuoted(q, d.pgStrings); err != nil {
			return err
		}
	}
}

// value reads one value of a tuple.
func (d *sqlDump) value() (sqlValue, error) {
	c, err := d.read()
	if err != nil {
		return sqlValue{}, d.fail("value expected")
	}
	if c == '\'' || c == '"' {
		s, err := d.quoted(c, d.pgStrings)
		return sqlValue{S: s}, err
	}
	if c == '(' { // a parenthesised expression: its text
		var b strings.Builder
		depth := 1
		for depth > 0 {
			c, err := d.read()
			if err != nil {
				return sqlValue{}, d.fail("unterminated expression")
			}
			switch c {
			case '(':
				depth++
			case ')':
				depth--
			case '\'':
				s, err := d.quoted(c, d.pgStrings)
				if err != nil {
					return sqlValue{}, err
				}
				b.WriteString(s)
				continue
			}
			if depth > 0 {
				b.WriteByte(c)
			}
		}
		return sqlValue{S: b.String()}, nil
	}
	d.unread(c)
	if c == '-' || c == '+' {
		_, _ = d.read()
	}
	w, err := d.word()
	if err != nil {
		return sqlValue{}, err
	}
	if c == '-' {
		w = "-" + w
	}
	switch u := strings.ToUpper(w); {
	case u == "NULL":
		return sqlValue{Null: true}, nil
	case (u == "E" || u == "_BINARY" || u == "_UTF8MB4" || u == "_UTF8" || u == "_LATIN1" || u == "N" || u == "X") && d.nextIsQuote():
		// E'...' (escapes), a charset introducer, N'...', X'..' (hex).
		if err := d.skipSpace(); err != nil {
			return sqlValue{}, err
		}
		q, _ := d.read()
		s, err := d.quoted(q, d.pgStrings && u != "E")
		if u == "X" {
			s = hexText(s)
		}
		return sqlValue{S: s}, err
	case strings.HasPrefix(u, "0X"):
		return sqlValue{S: hexText(w[2:])}, nil
	case w == "" && c != '-':
		return sqlValue{}, d.fail("value expected")
	}
	// A cast such as '...'::text (PostgreSQL) has been read as the value;
	// nothing else is expected here.
	return sqlValue{S: w}, nil
}

func (d *sqlDump) nextIsQuote() bool {
	b, _ := d.r.Peek(16)
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '\'', '"':
			return true
		}
		return false
	}
	return false
}

func hexText(h string) string {
	if len(h)%2 == 1 {
		h = "0" + h
	}
	out := make([]byte, 0, len(h)/2)
	for i := 0; i+1 < len(h); i += 2 {
		var v byte
		if _, err := fmt.Sscanf(h[i:i+2], "%02x", &v); err != nil {
			return ""
		}
		out = append(out, v)
	}
	return string(out)
}

// setKeep resolves keep for the statement's table and columns.
func (d *sqlDump) setKeep() {
	d.keepCols, d.lastN = nil, len(d.cols)
	if d.keep != nil {
		d.keepCols = d.keep(d.table, d.cols)
	}
}

// tableAndColumns reads "[schema.]table [(col, ...)]" (INSERT INTO and
// COPY share it) into d.table and d.cols, lower-cased, and the space after.
func (d *sqlDump) tableAndColumns() error {
	table, err := d.ident()
	if err != nil {
		return err
	}
	d.table, d.cols = strings.ToLower(table), nil
	if err := d.skipSpace(); err != nil {
		return err
	}
	if c, _ := d.peek(); c != '(' {
		return nil
	}
	_, _ = d.read()
	for {
		col, err := d.ident()
		if err != nil {
			return err
		}
		d.cols = append(d.cols, strings.ToLower(col))
		if err := d.skipSpace(); err != nil {
			return err
		}
		c, err := d.read()
		if err != nil {
			return err
		}
		if c == ')' {
			break
		}
		if c != ',' {
			return d.fail("column list")
		}
	}
	return d.skipSpace()
}
