package sheet

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"strings"
)

// ErrMalformedRow is a record the CSV parser refused (a stray quote); the
// reader goes on with the next one.
var ErrMalformedRow = errors.New("malformed row")

// CSV reads a CSV stream record by record within Limits.
type CSV struct {
	// Encoding is the encoding the bytes were read in.
	Encoding string

	cr     *csv.Reader
	guard  *recordGuard
	lim    Limits
	header []string
	rows   int
}

// CSVOptions tune NewCSV.
type CSVOptions struct {
	// Encoding: "" detects it (Detect); else a name of NormalizeEncoding.
	Encoding string
	// Comma: 0 uses ',' unless the header is one column holding ';'
	// (spreadsheets of many locales), which is read again with ';'. The
	// source must then be an io.Seeker.
	Comma rune
	// TrimLeadingSpace as encoding/csv's.
	TrimLeadingSpace bool
}

// NewCSV reads r as CSV: the encoding detected (or given) and decoded to
// UTF-8, the header read (its byte-order mark dropped). An empty stream is
// a 400 header_required, a header the parser refuses 400 malformed_csv.
func NewCSV(r io.Reader, o CSVOptions, lim Limits) (*CSV, error) {
	c, err := newCSV(r, o, lim)
	if err != nil {
		return nil, err
	}
	if o.Comma == 0 && len(c.header) == 1 && strings.Contains(c.header[0], ";") {
		if s, ok := r.(io.Seeker); ok {
			if _, err := s.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			o.Comma = ';'
			return newCSV(r, o, lim)
		}
	}
	return c, nil
}

func newCSV(r io.Reader, o CSVOptions, lim Limits) (*CSV, error) {
	br := bufio.NewReaderSize(r, sniffLen)
	enc := o.Encoding
	if enc == "" {
		head, err := br.Peek(sniffLen)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if enc, err = Detect(head); err != nil {
			return nil, err
		}
	}
	dec, err := Decode(br, enc)
	if err != nil {
		return nil, err
	}
	g := &recordGuard{r: dec, max: lim.MaxRecord, line: 1, start: 1}
	cr := csv.NewReader(bufio.NewReaderSize(g, 64<<10))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = o.TrimLeadingSpace
	if o.Comma != 0 {
		cr.Comma = o.Comma
	}
	c := &CSV{Encoding: enc, cr: cr, guard: g, lim: lim}
	h, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errHeaderRequired()
	}
	if err != nil {
		if ae := c.limitErr(err); ae != nil {
			return nil, ae
		}
		return nil, errMalformedCSV(1)
	}
	if len(h) > lim.MaxCells {
		return nil, errTooManyCells(lim.MaxCells, 1)
	}
	if len(h) > 0 {
		h[0] = strings.TrimPrefix(h[0], "\ufeff")
	}
	c.header = h
	return c, nil
}

// Header is the first record.
func (c *CSV) Header() []string { return c.header }

// Next is the next record and the line it starts on; io.EOF at the end.
// A record the parser refuses answers ErrMalformedRow with its line (the
// next call goes on); a cap reached or bytes not in the encoding answer
// the 400 that ends the reading.
func (c *CSV) Next() (int, []string, error) {
	rec, err := c.cr.Read()
	if errors.Is(err, io.EOF) {
		return 0, nil, io.EOF
	}
	if ae := c.limitErr(err); ae != nil {
		return 0, nil, ae
	}
	var line int
	var pe *csv.ParseError
	switch {
	case err == nil:
		line, _ = c.cr.FieldPos(0)
	case errors.As(err, &pe):
		line = pe.StartLine
	default:
		return 0, nil, err
	}
	c.rows++
	if c.rows > c.lim.MaxRows {
		return 0, nil, errTooManyRows(c.lim.MaxRows, line)
	}
	if err != nil {
		return line, nil, ErrMalformedRow
	}
	if len(rec) > c.lim.MaxCells {
		return 0, nil, errTooManyCells(c.lim.MaxCells, line)
	}
	return line, rec, nil
}

// limitErr is the refusal err carries from below the parser (a record
// too long, bytes not in the encoding), or nil.
func (c *CSV) limitErr(err error) error {
	if err == nil {
		return nil
	}
	if c.guard.err != nil && errors.Is(err, c.guard.err) {
		return c.guard.err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// recordGuard bounds the bytes of one CSV record before the parser
// buffers them: it follows the quotes (a quoted cell may span lines) and
// refuses a record longer than max with 400 line_too_long. A stray quote
// the parser refuses can make it count the following lines as one
// record; such a file is malformed anyway, and the guard only refuses
// past max.
type recordGuard struct {
	r      io.Reader
	max    int
	line   int // the line being read
	start  int // the line the record began on
	n      int // bytes of the record so far
	quoted bool
	err    error
}

func (g *recordGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			g.quoted = !g.quoted
		case '\n':
			g.line++
			if !g.quoted {
				g.n, g.start = 0, g.line
				continue
			}
		}
		g.n++
		if g.n > g.max {
			g.err = errLineTooLong(g.max, max(g.start, 1))
			return 0, g.err
		}
	}
	return n, err
}
