package dataimport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"xr/app"
	"xr/app/sheet"
)

// A legacy source is read into a catalogue: the subscribers (one per
// username, with the line where the dump first names it), the plans, the
// NAS and the counts of what is not imported. It holds one entry per
// subscriber, never the dump's rows (radacct and radpostauth are counted
// as they stream by).

type legacyUser struct {
	Username   string
	Line       int
	Password   string
	PassKind   string // cleartext, nt, md5, crypt, ssha, ... ("" = none)
	Expiration string // yyyy-MM-dd HH:mm:ss ("" = none)
	ExpireBad  string // an Expiration the import could not read
	SimUse     int64
	RateLimit  string
	BytesLimit int64
	StaticIP   string
	Disabled   bool
	Group      string
	groupPrio  int64
	Notes      string
	Plan       string // the plan the subscriber gets
}

type legacyPlan struct {
	Name       string `json:"name"`
	RateDown   int64  `json:"rate_down_kbps"`
	RateUp     int64  `json:"rate_up_kbps"`
	SimUse     int64  `json:"simultaneous_use"`
	BytesLimit int64  `json:"bytes_limit"`
	// Price, DurationDays and SecondsLimit come from a User Manager
	// profile (price, validity) and its limitation's uptime-limit.
	Price        app.Money `json:"price"`
	DurationDays int64     `json:"duration_days"`
	SecondsLimit int64     `json:"seconds_limit"`
	Users        int       `json:"users"`
	Exists       bool      `json:"exists"`
	rateText     string
}

type legacyNAS struct {
	Name, IP, Secret, Type, Description string
}

// Unmapped is something found that the import does not bring over.
type Unmapped struct {
	What   string `json:"what"` // attribute, table, password
	Name   string `json:"name"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// Problem is one subscriber the import refuses, with its line.
type Problem struct {
	Line     int    `json:"line"`
	Username string `json:"username"`
	Reason   string `json:"reason"`
}

type catalogue struct {
	Format   string
	users    map[string]*legacyUser
	groups   map[string]*legacyPlan
	nas      []legacyNAS
	sessions int
	postauth int
	unmapped map[string]*Unmapped
	// replay are the last radpostauth decisions (a ring from replayNext).
	replay     []postAuth
	replayNext int
}

func newCatalogue(format string) *catalogue {
	return &catalogue{Format: format, users: map[string]*legacyUser{}, groups: map[string]*legacyPlan{}, unmapped: map[string]*Unmapped{}}
}

func (c *catalogue) user(name string, line int) *legacyUser {
	u, ok := c.users[name]
	if !ok {
		u = &legacyUser{Username: name, Line: line}
		c.users[name] = u
	}
	return u
}

func (c *catalogue) group(name string) *legacyPlan {
	g, ok := c.groups[strings.ToLower(name)]
	if !ok {
		g = &legacyPlan{Name: name}
		c.groups[strings.ToLower(name)] = g
	}
	return g
}

func (c *catalogue) skip(what, name, reason string) {
	k := what + "\x00" + name
	u, ok := c.unmapped[k]
	if !ok {
		u = &Unmapped{What: what, Name: name, Reason: reason}
		c.unmapped[k] = u
	}
	u.Count++
}

// The standard FreeRADIUS column orders (raddb/mods-config/sql/main/*/
// schema.sql), used when an INSERT names no columns.
var frColumns = map[string][]string{
	"radcheck":      {"id", "username", "attribute", "op", "value"},
	"radreply":      {"id", "username", "attribute", "op", "value"},
	"radgroupcheck": {"id", "groupname", "attribute", "op", "value"},
	"radgroupreply": {"id", "groupname", "attribute", "op", "value"},
	"radusergroup":  {"id", "username", "groupname", "priority"},
	"nas":           {"id", "nasname", "shortname", "type", "ports", "secret", "server", "community", "description"},
	"radpostauth":   {"id", "username", "pass", "reply", "authdate", "class"},
}

// passwordKinds maps FreeRADIUS password attributes to a kind.
var passwordKinds = map[string]string{
	"cleartext-password": "cleartext", "user-password": "cleartext", "password": "cleartext",
	"nt-password": "nt", "md5-password": "md5", "crypt-password": "crypt", "ssha-password": "ssha", "ssha1-password": "ssha",
	"smd5-password": "smd5", "sha-password": "sha", "sha1-password": "sha", "ssha2-256-password": "ssha2-256", "ssha2-512-password": "ssha2-512",
	"sha2-password": "sha2", "ssha2-224-password": "ssha2-224", "ssha2-384-password": "ssha2-384",
	"lm-password": "lm", "password-with-header": "header",
}

// readFreeRADIUS reads the FreeRADIUS schema from a SQL dump (MySQL/
// MariaDB, PostgreSQL with --inserts or COPY) or CSV tables
// (legacy_csvtables.go); name is the uploaded file's name.
func readFreeRADIUS(path, name string, lim sheet.Limits) (*catalogue, error) {
	src, cl, err := openFreeRADIUS(path, name, "", map[string]bool{"radacct": true}, lim)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	c := newCatalogue("sql")
	for {
		row, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		c.add(row)
	}
	switch d, _ := src.(*sqlDump); {
	case d == nil:
		c.Format = "csv"
	case d.pgStrings:
		c.Format = "postgresql"
	default:
		c.Format = "mysql"
	}
	c.finish()
	return c, nil
}

// get is a tuple's value by column name.
func get(row *sqlRow, name string) string {
	cols := row.Cols
	if cols == nil {
		cols = frColumns[row.Table]
		if row.Table == "radusergroup" && len(row.Vals) == 3 { // the schema before its id column
			cols = cols[1:]
		}
	}
	for i, c := range cols {
		if c == name && i < len(row.Vals) {
			return row.Vals[i].S
		}
	}
	return ""
}

func (c *catalogue) add(row *sqlRow) {
	switch row.Table {
	case "radcheck", "radreply":
		name := get(row, "username")
		if name == "" {
			return
		}
		u := c.user(name, row.Line)
		c.userAttr(u, row.Table, get(row, "attribute"), get(row, "op"), get(row, "value"))
	case "radgroupcheck", "radgroupreply":
		name := get(row, "groupname")
		if name == "" {
			return
		}
		c.groupAttr(c.group(name), row.Table, get(row, "attribute"), get(row, "value"))
	case "radusergroup":
		name, group := get(row, "username"), get(row, "groupname")
		if name == "" || group == "" {
			return
		}
		u := c.user(name, row.Line)
		prio, _ := strconv.ParseInt(get(row, "priority"), 10, 64)
		if u.Group == "" || prio < u.groupPrio {
			u.Group, u.groupPrio = group, prio
		}
		c.group(group)
	case "nas":
		c.nas = append(c.nas, legacyNAS{Name: get(row, "shortname"), IP: get(row, "nasname"), Secret: get(row, "secret"),
			Type: get(row, "type"), Description: get(row, "description")})
	case "radacct":
		c.sessions++
	case "radpostauth":
		c.postauth++
		name, reply := get(row, "username"), get(row, "reply")
		if at, ok := parseAuthDate(get(row, "authdate")); ok && name != "" && (reply == "Access-Accept" || reply == "Access-Reject") {
			c.addPostAuth(postAuth{Username: name, Accept: reply == "Access-Accept", At: at})
		}
	default:
		c.skip("table", row.Table, "not a FreeRADIUS table xr imports")
	}
}

func (c *catalogue) userAttr(u *legacyUser, table, attr, op, value string) {
	a := strings.ToLower(attr)
	if k, ok := passwordKinds[a]; ok && table == "radcheck" {
		u.Password, u.PassKind = value, k
		if k == "header" || k == "crypt" { // {scheme}... (legacy_passwords.go)
			u.PassKind, u.Password = passwordHeader(k, value)
		}
		return
	}
	switch a {
	case "expiration":
		if t, ok := parseExpiration(value); ok {
			u.Expiration = t
		} else {
			u.ExpireBad = value
		}
	case "simultaneous-use":
		u.SimUse, _ = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	case "mikrotik-rate-limit":
		u.RateLimit = value
	case "framed-ip-address":
		u.StaticIP = value
	case "auth-type":
		if strings.EqualFold(value, "reject") {
			u.Disabled = true
		} else {
			c.skip("attribute", attr, "only Auth-Type := Reject (disabled) is imported")
		}
	case "max-data", "max-total-octets", "max-octets", "mikrotik-total-limit", "max-all-octets":
		u.BytesLimit, _ = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	default:
		c.skip("attribute", attr, "no xr equivalent; set it on the plan or the NAS")
	}
}

func (c *catalogue) groupAttr(g *legacyPlan, table, attr, value string) {
	switch strings.ToLower(attr) {
	case "simultaneous-use":
		g.SimUse, _ = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	case "mikrotik-rate-limit":
		g.rateText = value
		g.RateUp, g.RateDown = parseRateLimit(value)
	case "max-data", "max-total-octets", "max-octets", "mikrotik-total-limit", "max-all-octets":
		g.BytesLimit, _ = strconv.ParseInt(strings.TrimSpace(value), 10, 64)
	default:
		c.skip("attribute", attr, "no xr equivalent; set it on the plan or the NAS")
	}
}

// finish gives every subscriber its plan: its group, or a plan made from
// its own rate limit and simultaneous-use when it has no group.
func (c *catalogue) finish() {
	for _, u := range c.users {
		switch {
		case u.Group != "":
			u.Plan = c.group(u.Group).Name
		case u.RateLimit != "" || u.SimUse > 0 || u.BytesLimit > 0:
			up, down := parseRateLimit(u.RateLimit)
			name := fmt.Sprintf("legacy %s", strings.ReplaceAll(strings.TrimSpace(u.RateLimit), " ", ""))
			if u.RateLimit == "" {
				name = "legacy"
			}
			if u.SimUse > 0 {
				name += fmt.Sprintf(" x%d", u.SimUse)
			}
			if u.BytesLimit > 0 {
				name += fmt.Sprintf(" %dB", u.BytesLimit)
			}
			g := c.group(name)
			g.RateUp, g.RateDown, g.SimUse, g.BytesLimit = up, down, u.SimUse, u.BytesLimit
			u.Plan = g.Name
		}
		if u.Plan != "" {
			c.group(u.Plan).Users++
		}
	}
}

// parseRateLimit reads a MikroTik rate limit "rx/tx [burst...]" (rx is the
// router's receive: the subscriber's upload) into kbit/s.
func parseRateLimit(s string) (up, down int64) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, 0
	}
	parts := strings.SplitN(f[0], "/", 2)
	up = rateKbps(parts[0])
	down = up
	if len(parts) == 2 {
		down = rateKbps(parts[1])
	}
	return up, down
}

func rateKbps(s string) int64 {
	s = strings.TrimSpace(s)
	mul := 1.0 / 1000
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mul, s = 1, s[:len(s)-1]
	case strings.HasSuffix(s, "M"), strings.HasSuffix(s, "m"):
		mul, s = 1000, s[:len(s)-1]
	case strings.HasSuffix(s, "G"), strings.HasSuffix(s, "g"):
		mul, s = 1000000, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0
	}
	return int64(v * mul)
}

// parseExpiration reads FreeRADIUS's Expiration ("January 02 2026
// 15:04:05", "02 Jan 2026", ...) as UTC text.
func parseExpiration(s string) (string, bool) {
	s = strings.Join(strings.Fields(s), " ")
	for _, l := range []string{"January 2 2006 15:04:05", "Jan 2 2006 15:04:05", "January 2 2006 15:04", "Jan 2 2006 15:04",
		"January 2 2006", "Jan 2 2006", "2 Jan 2006 15:04:05", "2 Jan 2006", "2 January 2006", "2006-01-02 15:04:05", "2006-01-02T15:04:05",
		"2006-01-02", "January 2, 2006", "Jan 2, 2006"} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC().Format("2006-01-02 15:04:05"), true
		}
	}
	return "", false
}

// readMikroTik reads a RouterOS export (/ppp secret export, with the
// /ppp profile section when present): add name=... password=...
// profile=... remote-address=... [disabled=yes] [comment=...].
func readMikroTik(path string) (*catalogue, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := newCatalogue("routeros")
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	section := ""
	um := &umState{limits: map[string]umLimit{}, links: map[string][]string{}}
	line, start := 0, 0
	var cmd strings.Builder
	var dec sheet.TextDecoder
	var decErr error
	flush := func() {
		text := strings.TrimSpace(cmd.String())
		cmd.Reset()
		if text == "" || strings.HasPrefix(text, "#") || decErr != nil {
			return
		}
		if text, decErr = dec.Decode(routerosBytes(text), start); decErr != nil {
			return
		}
		if strings.HasPrefix(text, "/") {
			section = strings.Join(strings.Fields(text), " ")
			return
		}
		if userManagerSection(section) { // legacy_usermanager.go
			c.userManager(um, section, text, start)
			return
		}
		if !strings.HasPrefix(text, "add ") && !strings.HasPrefix(text, "set ") {
			return
		}
		kv := routerosArgs(text[4:])
		switch section {
		case "/ppp secret":
			name := kv["name"]
			if name == "" {
				name = kv["username"]
			}
			if name == "" {
				return
			}
			u := c.user(name, start)
			u.Password, u.PassKind = kv["password"], "cleartext"
			if u.Password == "" {
				u.PassKind = ""
			}
			u.StaticIP = kv["remote-address"]
			u.Disabled = kv["disabled"] == "yes" || kv["disabled"] == "true"
			u.Notes = kv["comment"]
			if p := kv["profile"]; p != "" && p != "default" && p != "default-encryption" {
				u.Group = p
				c.group(p)
			}
			if s := kv["service"]; s != "" && s != "any" && s != "pppoe" {
				c.skip("attribute", "service="+s, "xr serves every service; the subscriber is imported")
			}
		case "/ppp profile":
			name := kv["name"]
			if name == "" {
				return
			}
			g := c.group(name)
			if r := kv["rate-limit"]; r != "" {
				g.rateText = r
				g.RateUp, g.RateDown = parseRateLimit(r)
			}
			if kv["only-one"] == "yes" {
				g.SimUse = 1
			}
		}
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		if cmd.Len() == 0 {
			start = line
		}
		if cmd.Len()+len(text) > maxDumpValue {
			return nil, &errDump{Line: start, Msg: tooLong}
		}
		if strings.HasSuffix(text, "\\") {
			cmd.WriteString(strings.TrimSuffix(text, "\\"))
			continue
		}
		cmd.WriteString(strings.TrimLeft(text, " \t"))
		if flush(); decErr != nil {
			return nil, decErr
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, &errDump{Line: line + 1, Msg: tooLong}
	} else if err != nil {
		return nil, err
	}
	if flush(); decErr != nil {
		return nil, decErr
	}
	c.finishUserManager(um)
	c.finish()
	return c, nil
}

// routerosBytes turns the \XX escapes of a RouterOS export that stand for
// bytes past ASCII into those bytes: RouterOS keeps text as the bytes the
// client sent (UTF-8 from the terminal or WebFig, the Windows code page
// from Winbox) and escapes them in exports, so a command's text is decoded
// (sheet.TextDecoder) only once they are back. Other escapes (\", \\,
// \XX of ASCII) stay for routerosArgs.
func routerosBytes(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b = append(b, s[i])
			continue
		}
		if i+2 < len(s) && hexDigit(s[i+1]) >= 0 && hexDigit(s[i+2]) >= 0 {
			if v := hexDigit(s[i+1])<<4 | hexDigit(s[i+2]); v >= 0x80 {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i], s[i+1]) // an escape pair stays whole
		i++
	}
	return string(b)
}

// routerosArgs splits key=value arguments; values may be quoted with
// backslash escapes.
func routerosArgs(s string) map[string]string {
	out := map[string]string{}
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		j := i
		for j < len(s) && s[j] != '=' && s[j] != ' ' {
			j++
		}
		key := s[i:j]
		if j >= len(s) || s[j] != '=' {
			i = j + 1
			continue
		}
		j++
		var v strings.Builder
		if j < len(s) && s[j] == '"' {
			j++
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				v.WriteByte(s[j])
				j++
			}
			j++
		} else {
			for j < len(s) && s[j] != ' ' {
				v.WriteByte(s[j])
				j++
			}
		}
		out[key] = v.String()
		i = j
	}
	return out
}

// sortedUsers is the catalogue's subscribers by username (the import's
// order, so a resumed import skips the same rows).
func (c *catalogue) sortedUsers() []*legacyUser {
	out := make([]*legacyUser, 0, len(c.users))
	for _, u := range c.users {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Username < out[j].Username })
	return out
}
