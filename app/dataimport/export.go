package dataimport

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"

	"xr/app"
	"xr/app/aaa"
)

// Export dialects.
const (
	DialectMySQL      = "mysql"
	DialectPostgreSQL = "postgresql"
)

// ExportInput is the query of GET /admin/legacy/export.
type ExportInput struct {
	Format string `json:"format"` // mysql (default), postgresql, or csv (the reseller-panel CSV set, a zip)
}

// CheckExport validates an export request before anything is written.
func CheckExport(act *app.Actor, in *ExportInput) error {
	if err := act.Require(PermToolsLegacyExport); err != nil {
		return err
	}
	switch in.Format {
	case "":
		in.Format = DialectMySQL
	case DialectMySQL, DialectPostgreSQL, DialectCSV:
	default:
		return app.ErrValidation("invalid_enum", "format")
	}
	return nil
}

// Export writes the caller's subscribers and the plans they use in the
// FreeRADIUS SQL schema (radcheck, radreply, radusergroup, radgroupcheck,
// radgroupreply) for MySQL/MariaDB or PostgreSQL, streamed row by row:
// Cleartext-Password, Expiration, Auth-Type := Reject for a disabled
// subscriber, Framed-IP-Address, the plan as the group with its
// Mikrotik-Rate-Limit, Simultaneous-Use and Max-Total-Octets. The dump
// reads back through the FreeRADIUS import.
func Export(ctx context.Context, act *app.Actor, in ExportInput, out io.Writer) error {
	if err := CheckExport(act, &in); err != nil {
		return err
	}
	if in.Format == DialectCSV {
		return exportPanel(ctx, act, out)
	}
	t := act.Tenant
	w := bufio.NewWriterSize(out, 64<<10)
	pg := in.Format == DialectPostgreSQL
	q := func(s string) string { return sqlQuote(s, pg) }
	fmt.Fprintf(w, "-- xr export of tenant %s in the FreeRADIUS SQL schema (%s)\n", t.Slug, in.Format)
	if pg {
		fmt.Fprint(w, "SET standard_conforming_strings = on;\n")
	}
	fmt.Fprint(w, exportSchema(pg))
	cond, args := act.ScopeSQL("u.parent_id")
	err := t.Read(ctx, func(tx *sql.Tx) error {
		// The plans the exported subscribers use.
		rows, err := tx.QueryContext(ctx, `SELECT p.name, p.rate_down_kbps, p.rate_up_kbps, p.simultaneous_use, p.bytes_limit FROM profiles p
			WHERE p.id IN (SELECT u.profile_id FROM users u WHERE u.deleted_at IS NULL AND `+cond+`) ORDER BY p.name`, args...)
		if err != nil {
			return err
		}
		ins := newInserter(w)
		for rows.Next() {
			var name string
			var down, up, sim, bytes int64
			if err := rows.Scan(&name, &down, &up, &sim, &bytes); err != nil {
				rows.Close()
				return err
			}
			if down > 0 || up > 0 {
				ins.add("radgroupreply", "groupname, attribute, op, value", q(name), q("Mikrotik-Rate-Limit"), q(":="), q(fmt.Sprintf("%dk/%dk", up, down)))
			}
			if sim > 0 {
				ins.add("radgroupcheck", "groupname, attribute, op, value", q(name), q("Simultaneous-Use"), q(":="), q(fmt.Sprint(sim)))
			}
			if bytes > 0 {
				ins.add("radgroupcheck", "groupname, attribute, op, value", q(name), q("Max-Total-Octets"), q(":="), q(fmt.Sprint(bytes)))
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		ins.flush()
		rows, err = tx.QueryContext(ctx, `SELECT u.username, u.password_sealed, u.enabled, u.expiration, u.static_ip, COALESCE(p.name, '')
			FROM users u LEFT JOIN profiles p ON p.id = u.profile_id WHERE u.deleted_at IS NULL AND `+cond+` ORDER BY u.id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name, ip, plan string
			var sealed []byte
			var enabled bool
			var exp app.Time
			if err := rows.Scan(&name, &sealed, &enabled, &exp, &ip, &plan); err != nil {
				return err
			}
			pw, err := t.App.Keys.Open(sealed)
			if err != nil {
				return err
			}
			attr, val := "Cleartext-Password", string(pw)
			if kind, hash, ok := strings.Cut(strings.TrimPrefix(val, aaa.LegacyHashPrefix), ":"); ok && strings.HasPrefix(val, aaa.LegacyHashPrefix) {
				attr, val = legacyExportAttr(kind), hash // a password imported hashed leaves as it came (legacy_passwords.go)
			}
			ins.add("radcheck", "username, attribute, op, value", q(name), q(attr), q(":="), q(val))
			if !exp.IsZero() {
				ins.add("radcheck", "username, attribute, op, value", q(name), q("Expiration"), q(":="), q(exp.UTC().Format("January 02 2006 15:04:05")))
			}
			if !enabled {
				ins.add("radcheck", "username, attribute, op, value", q(name), q("Auth-Type"), q(":="), q("Reject"))
			}
			if ip != "" {
				ins.add("radreply", "username, attribute, op, value", q(name), q("Framed-IP-Address"), q(":="), q(ip))
			}
			if plan != "" {
				ins.add("radusergroup", "username, groupname, priority", q(name), q(plan), "1")
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		ins.flush()
		return nil
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

// legacyHashAttr is the FreeRADIUS attribute of a hashed password kind.
var legacyHashAttr = map[string]string{"md5": "MD5-Password", "smd5": "SMD5-Password", "sha": "SHA1-Password", "ssha": "SSHA-Password",
	"nt": "NT-Password"}

// inserter groups tuples of one table into multi-row INSERTs of up to 100
// rows (as mysqldump does), flushing when the table changes.
type inserter struct {
	w     *bufio.Writer
	table string
	cols  string
	n     int
}

func newInserter(w *bufio.Writer) *inserter { return &inserter{w: w} }

func (i *inserter) add(table, cols string, vals ...string) {
	if i.n > 0 && (table != i.table || i.n >= 100) {
		i.flush()
	}
	if i.n == 0 {
		fmt.Fprintf(i.w, "INSERT INTO %s (%s) VALUES\n(", table, cols)
		i.table, i.cols = table, cols
	} else {
		i.w.WriteString(",\n(")
	}
	i.w.WriteString(strings.Join(vals, ","))
	i.w.WriteString(")")
	i.n++
}

func (i *inserter) flush() {
	if i.n > 0 {
		i.w.WriteString(";\n")
		i.n = 0
	}
}

// sqlQuote quotes a string literal: MySQL escapes with backslashes,
// PostgreSQL (standard_conforming_strings on) doubles quotes only.
func sqlQuote(s string, pg bool) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			if pg {
				b.WriteString("''")
			} else {
				b.WriteString(`\'`)
			}
		case pg:
			b.WriteByte(c)
		case c == '\\':
			b.WriteString(`\\`)
		case c == 0:
			b.WriteString(`\0`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// exportSchema is the FreeRADIUS schema of the exported tables.
func exportSchema(pg bool) string {
	id := "id int(11) unsigned NOT NULL auto_increment"
	tail := ") ENGINE = INNODB;\n"
	if pg {
		id, tail = "id serial", ");\n"
	}
	var b strings.Builder
	for _, t := range []string{"radcheck", "radreply"} {
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n  %s,\n  username varchar(64) NOT NULL default '',\n  attribute varchar(64) NOT NULL default '',\n"+
			"  op char(2) NOT NULL DEFAULT '==',\n  value varchar(253) NOT NULL default '',\n  PRIMARY KEY (id)\n%s", t, id, tail)
	}
	for _, t := range []string{"radgroupcheck", "radgroupreply"} {
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s (\n  %s,\n  groupname varchar(64) NOT NULL default '',\n  attribute varchar(64) NOT NULL default '',\n"+
			"  op char(2) NOT NULL DEFAULT '==',\n  value varchar(253) NOT NULL default '',\n  PRIMARY KEY (id)\n%s", t, id, tail)
	}
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS radusergroup (\n  %s,\n  username varchar(64) NOT NULL default '',\n  groupname varchar(64) NOT NULL default '',\n"+
		"  priority int(11) NOT NULL default '1',\n  PRIMARY KEY (id)\n%s", id, tail)
	if pg {
		return strings.ReplaceAll(strings.ReplaceAll(b.String(), "int(11)", "integer"), "default '1'", "default 1")
	}
	return b.String()
}
