package dataimport

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// in encodes UTF-8 text in a legacy code page, as the old system wrote it.
func in(t *testing.T, cm *charmap.Charmap, s string) string {
	t.Helper()
	b, err := cm.NewEncoder().String(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// failedAnalysis uploads a legacy file whose analysis must fail, and
// returns the run's reason and line.
func (e *env) failedAnalysis(name, body string) (string, int) {
	e.t.Helper()
	j, err := CreateLegacyJob(e.ctx, e.owner, name, strings.NewReader(body), LegacyInput{})
	if err != nil {
		e.t.Fatal(err)
	}
	e.runJob(*j.JobID)
	j, err = GetLegacyJob(e.ctx, e.owner, j.ID)
	if err != nil || j.State != "failed" || len(j.Lines) != 1 {
		e.t.Fatalf("analysis: %+v %v", j, err)
	}
	return j.Error, j.Lines[0].Line
}

// mysqlDump is a FreeRADIUS dump declaring names (none when empty), with a
// NAS and a subscriber whose plan is plan.
func mysqlDump(names, nas, plan string) string {
	var b strings.Builder
	b.WriteString("-- MySQL dump 10.13\n")
	if names != "" {
		fmt.Fprintf(&b, "/*!40101 SET NAMES %s */;\n", names)
	}
	fmt.Fprintf(&b, "INSERT INTO `nas` VALUES (1,'10.9.0.1','%s','other',NULL,'s3cr3t-shared-key',NULL,NULL,'RADIUS Client');\n", nas)
	b.WriteString("INSERT INTO `radcheck` VALUES (1,'ali','Cleartext-Password',':=','pw-ali-1');\n")
	fmt.Fprintf(&b, "INSERT INTO `radusergroup` VALUES (1,'ali','%s',1);\n", plan)
	fmt.Fprintf(&b, "INSERT INTO `radgroupreply` VALUES (1,'%s','Mikrotik-Rate-Limit',':=','1M/2M');\n", plan)
	return b.String()
}

// A SQL dump's strings are read in the encoding it declares (mysqldump's
// SET NAMES, pg_dump's client_encoding), or the one its first non-ASCII
// value shows; the names are stored as the text they were, never as
// replacement characters.
func TestLegacyDumpEncodings(t *testing.T) {
	t.Parallel()
	const arabic, latin = "باقة ذهبية", "Zürich Süd"
	w1256, w1252 := charmap.Windows1256, charmap.Windows1252
	pgCopy := func(encoding, nas, plan string) string {
		return "SET client_encoding = '" + encoding + "';\nSET standard_conforming_strings = on;\n" +
			"COPY public.nas (id, nasname, shortname, type, ports, secret, server, community, description) FROM stdin;\n" +
			"1\t10.9.0.1\t" + nas + "\tother\t\\N\ts3cr3t-shared-key\t\\N\t\\N\tRADIUS Client\n\\.\n" +
			"COPY public.radcheck (id, username, attribute, op, value) FROM stdin;\n1\tali\tCleartext-Password\t:=\tpw-ali-1\n\\.\n" +
			"COPY public.radusergroup (username, groupname, priority) FROM stdin;\nali\t" + plan + "\t1\n\\.\n"
	}
	for _, c := range []struct {
		name, dump, nas, plan string
	}{
		{"utf8mb4 declared", mysqlDump("utf8mb4", latin, arabic), latin, arabic},
		{"latin1 declared", mysqlDump("latin1", in(t, w1252, latin), in(t, w1252, "Prämie")), latin, "Prämie"},
		{"latin1 declared, UTF-8 written through it", mysqlDump("latin1", latin, arabic), latin, arabic},
		{"cp1256 declared", mysqlDump("cp1256", "Basra", in(t, w1256, arabic)), "Basra", arabic},
		{"undeclared Windows-1256", mysqlDump("", in(t, w1256, "مركز البصرة"), in(t, w1256, arabic)), "مركز البصرة", arabic},
		{"undeclared Latin-1", mysqlDump("", in(t, w1252, latin), "gold"), latin, "gold"},
		{"pg_dump WIN1256", pgCopy("WIN1256", "Basra", in(t, w1256, arabic)), "Basra", arabic},
		{"pg_dump LATIN1", pgCopy("LATIN1", in(t, w1252, latin), "gold"), latin, "gold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			j, a := e.importLegacy("radius.sql", c.dump, StartInput{})
			if j.State != "done" || j.Created != 1 || a.Counts.NAS != 1 {
				t.Fatalf("%+v %+v", j, a)
			}
			if got := e.text(`SELECT name FROM nas`); got != c.nas {
				t.Fatalf("nas %q, want %q", got, c.nas)
			}
			if got := e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'ali'`); got != c.plan {
				t.Fatalf("plan %q, want %q", got, c.plan)
			}
		})
	}
}

// A dump that breaks its own encoding, or declares one xr cannot read, is
// refused with the reason and the line; nothing is imported.
func TestLegacyDumpEncodingRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	latin1 := in(t, charmap.Windows1252, "Zürich")
	for _, c := range []struct {
		name, dump, reason string
		line               int
	}{
		{"Latin-1 bytes in a UTF-8 dump", mysqlDump("utf8mb4", latin1, "gold"), "invalid_encoding", 3},
		{"UTF-8 then Latin-1 in an undeclared dump", mysqlDump("", "Zürich", in(t, charmap.Windows1252, "Prämie")), "invalid_encoding", 4},
		{"an encoding xr cannot read", mysqlDump("koi8r", "core", "gold"), "unsupported_encoding", 2},
	} {
		reason, line := e.failedAnalysis("radius.sql", c.dump)
		if reason != c.reason || line != c.line {
			t.Errorf("%s: %s line %d, want %s line %d", c.name, reason, line, c.reason, c.line)
		}
	}
	if n := e.scalar(`SELECT count(*) FROM nas`) + e.scalar(`SELECT count(*) FROM users`); n != 0 {
		t.Fatalf("%d rows imported", n)
	}
}

// A RouterOS export escapes the bytes of its values (\C8\C7...): the
// code page Winbox wrote them in, or UTF-8, is read back as text.
func TestLegacyRouterOSEncodings(t *testing.T) {
	t.Parallel()
	escape := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				fmt.Fprintf(&b, "\\%02X", s[i])
			} else {
				b.WriteByte(s[i])
			}
		}
		return b.String()
	}
	const plan, note = "باقة 10M", "علي حسن"
	for _, c := range []struct{ name, plan, note string }{
		{"Windows-1256 escaped", escape(in(t, charmap.Windows1256, plan)), escape(in(t, charmap.Windows1256, note))},
		{"UTF-8 escaped", escape(plan), escape(note)},
		{"UTF-8 raw", plan, note},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			export := "# by RouterOS 6.49.10\n/ppp profile\nadd name=\"" + c.plan + "\" rate-limit=2M/10M\n/ppp secret\n" +
				"add comment=\"" + c.note + "\" name=mt-ali password=ali-pw profile=\"" + c.plan + "\"\n"
			j, _ := e.importLegacy("secrets.rsc", export, StartInput{})
			if j.State != "done" || j.Created != 1 {
				t.Fatalf("%+v", j)
			}
			if got := e.text(`SELECT p.name || '|' || u.notes FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'mt-ali'`); got != plan+"|"+note {
				t.Fatalf("stored %q", got)
			}
		})
	}
	e := newEnv(t)
	bad := "# by RouterOS 6.49.10\n/ppp secret\nadd comment=\"\\D9\\84\" name=a password=a-pw\nadd comment=\"\\E4\" name=b password=b-pw\n"
	if reason, line := e.failedAnalysis("secrets.rsc", bad); reason != "invalid_encoding" || line != 4 {
		t.Fatalf("mixed export: %s line %d", reason, line)
	}
}

// The CSV tables of a FreeRADIUS zip and the reseller panel's set are
// read in the encoding each file shows (UTF-16 with its mark, Windows-1256,
// Latin-1).
func TestLegacyCSVEncodings(t *testing.T) {
	t.Parallel()
	utf16 := func(s string) string {
		b, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Run("FreeRADIUS tables", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		tables := zipOf(t, map[string]string{
			"radcheck.csv":     utf16("username,attribute,op,value\nali,Cleartext-Password,:=,pw-ali-1\n"),
			"radusergroup.csv": in(t, charmap.Windows1256, "username,groupname,priority\nali,باقة ذهبية,1\n"),
			"nas.csv":          in(t, charmap.Windows1252, "nasname,shortname,secret\n10.9.0.1,Zürich,s3cr3t-shared-key\n"),
		})
		j, _ := e.importLegacy("radius.zip", tables, StartInput{})
		if j.State != "done" || j.Created != 1 || e.text(`SELECT name FROM nas`) != "Zürich" ||
			e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id`) != "باقة ذهبية" {
			t.Fatalf("%+v", j)
		}
	})
	t.Run("reseller panel", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		set := zipOf(t, map[string]string{
			"export/profiles.csv": in(t, charmap.Windows1256, "Name,Price,Download,Upload,Days,Quota,Sessions\nباقة 10M,25,10000,2000,30,0,1\n"),
			"export/users.csv":    utf16("Username,Password,Password_Type,Manager,Profile,Expiry,Credit,Email\nali,ali-pw,,,باقة 10M,2027-12-31,0,\n"),
		})
		j := e.legacy("panel.zip", set, StartInput{})
		j = e.startPanel(j, StartInput{})
		if j.State != "done" || e.text(`SELECT p.name FROM users u JOIN profiles p ON p.id = u.profile_id WHERE u.username = 'ali'`) != "باقة 10M" {
			t.Fatalf("%+v", j)
		}
	})
}

// zipOf zips files (name: content).
func zipOf(t *testing.T, files map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
