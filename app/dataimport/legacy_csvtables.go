package dataimport

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"xr/app"
	"xr/app/sheet"
)

// A FreeRADIUS database arrives as a SQL dump (MySQL/MariaDB INSERTs,
// PostgreSQL INSERTs or COPY) or as one CSV file per table: a zip of
// radcheck.csv, radreply.csv, radgroupcheck.csv, radgroupreply.csv,
// radusergroup.csv, nas.csv, radacct.csv, radpostauth.csv (any subset),
// or one such CSV uploaded alone (its file name names the table). The
// first line of each CSV names its columns (the schema's column names,
// any order); \N or NULL alone is NULL (MySQL's and phpMyAdmin's exports).

// rowSource is a stream of legacy rows (a SQL dump or CSV tables).
type rowSource interface {
	Next() (*sqlRow, error)
}

// openFreeRADIUS opens a FreeRADIUS upload as rows; only and countOnly
// as for sqlDump. format is mysql, postgresql (known once read: see
// formatOf) or csv.
func openFreeRADIUS(p, name, only string, countOnly map[string]bool, lim sheet.Limits) (rowSource, io.Closer, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	if n == 4 && bytes.Equal(head, []byte("PK\x03\x04")) {
		f.Close()
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, nil, &errDump{Line: 1, Msg: "not a readable zip of CSV tables"}
		}
		limit, err := sheet.CheckZip(p, &zr.Reader, legacyExpanded, lim.MaxRatio)
		if err != nil {
			_ = zr.Close() // read only
			return nil, nil, err
		}
		var members []*zip.File
		for _, m := range zr.File {
			if strings.EqualFold(path.Ext(m.Name), ".csv") && !m.FileInfo().IsDir() {
				members = append(members, m)
			}
		}
		sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
		return &csvTables{zip: members, limit: limit, lim: lim, only: only, countOnly: countOnly}, zr, nil
	}
	if strings.EqualFold(path.Ext(name), ".csv") {
		return &csvTables{single: f, singleName: name, lim: lim, only: only, countOnly: countOnly}, f, nil
	}
	d := newSQLDump(f)
	d.only, d.countOnly = only, countOnly
	return d, f, nil
}

// csvTables reads CSV files one after the other, each as its table.
type csvTables struct {
	zip        []*zip.File
	limit      int64 // what an entry may inflate to
	lim        sheet.Limits
	single     *os.File
	singleName string
	only       string
	countOnly  map[string]bool

	cur    io.ReadCloser
	cr     *sheet.CSV
	table  string
	header []string
}

// tableOf is the table a CSV file name names: radcheck.csv → radcheck.
func tableOf(name string) string {
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, "\\", "/")))
	return strings.TrimSuffix(base, ".csv")
}

// open moves to the next file with rows; io.EOF after the last.
func (c *csvTables) open() error {
	for {
		var r io.ReadCloser
		var name string
		switch {
		case c.single != nil:
			r, name = io.NopCloser(c.single), c.singleName
			c.single = nil
		case len(c.zip) > 0:
			m := c.zip[0]
			c.zip = c.zip[1:]
			rc, err := sheet.OpenEntry(m, c.limit)
			if err != nil {
				return &errDump{Line: 1, Msg: m.Name + ": " + err.Error()}
			}
			r, name = rc, m.Name
		default:
			return io.EOF
		}
		table := tableOf(name)
		if c.only != "" && table != c.only {
			r.Close()
			continue
		}
		cr, err := sheet.NewCSV(r, sheet.CSVOptions{Comma: ','}, c.lim)
		if e := app.AsError(err); e != nil && e.Reason == "header_required" {
			r.Close()
			continue
		}
		if err != nil {
			r.Close()
			if e := app.AsError(err); e != nil && e.Reason != "malformed_csv" {
				return err
			}
			return &errDump{Line: 1, Msg: name + ": malformed CSV header"}
		}
		header := make([]string, len(cr.Header()))
		for i, v := range cr.Header() {
			header[i] = strings.ToLower(strings.TrimSpace(v))
		}
		c.cur, c.cr, c.table, c.header = r, cr, table, header
		return nil
	}
}

// Next is the next row of the current table (then the next file's).
func (c *csvTables) Next() (*sqlRow, error) {
	for {
		if c.cr == nil {
			if err := c.open(); err != nil {
				return nil, err
			}
		}
		line, rec, err := c.cr.Next()
		if errors.Is(err, io.EOF) {
			c.cur.Close()
			c.cr = nil
			continue
		}
		if errors.Is(err, sheet.ErrMalformedRow) {
			return nil, &errDump{Line: line, Msg: c.table + ".csv: malformed CSV"}
		}
		if err != nil {
			return nil, err
		}
		row := &sqlRow{Table: c.table, Cols: c.header, Line: line}
		if c.countOnly[c.table] {
			return row, nil
		}
		row.Vals = make([]sqlValue, len(rec))
		for i, v := range rec {
			if v == `\N` || v == "NULL" {
				row.Vals[i] = sqlValue{Null: true}
			} else {
				row.Vals[i] = sqlValue{S: v}
			}
		}
		return row, nil
	}
}
