package dataimport

import (
	"strconv"
	"strings"
	"time"

	"xr/app"
)

// MikroTik User Manager exports, read by readMikroTik beside /ppp secret:
//
// RouterOS v6 (/tool user-manager ...):
//
//	/tool user-manager profile
//	add name=10M owner=admin price=100 validity=30d override-shared-users=2
//	/tool user-manager profile limitation
//	add name=lim10M owner=admin rate-limit-rx=2M rate-limit-tx=10M transfer-limit=10G
//	/tool user-manager profile profile-limitation
//	add profile=10M limitation=lim10M
//	/tool user-manager user
//	add customer=admin username=u1 password=p1 shared-users=1 ip-address=10.0.0.5
//	create-and-activate-profile customer=admin numbers=u1 profile=10M
//
// RouterOS v7 (/user-manager ...):
//
//	/user-manager limitation
//	add name=lim10M rate-limit-rx=2M rate-limit-tx=10M transfer-limit=10GiB
//	/user-manager profile
//	add name=10M price=100 validity=30d
//	/user-manager profile-limitation
//	add limitation=lim10M profile=10M
//	/user-manager user
//	add name=u1 password=p1 group=default shared-users=2 attributes=Framed-IP-Address:10.0.0.5,Mikrotik-Rate-Limit:1M/4M
//	/user-manager user-profile
//	add profile=10M user=u1
//
// Routers become NAS (address, shared secret). Users become subscribers
// (name, password, static address from
// ip-address or the Framed-IP-Address attribute, disabled, comment);
// profiles become plans with their price, their validity as the plan's
// duration (whole days up to 100 years; another is reported as not
// imported), and the rate (rate-limit-rx is the router's receive: the
// subscriber's upload), the transfer limit and the uptime limit (seconds)
// of their limitations; shared-users is the plan's simultaneous use (a
// user's own shared-users or Mikrotik-Rate-Limit, without a profile, makes
// a plan as for FreeRADIUS). A user's profile is its last activated one.

// umState is what a User Manager export holds until its end: the
// limitations by name and the profiles' links to them.
type umState struct {
	limits map[string]umLimit
	links  map[string][]string // profile → limitations
}

type umLimit struct {
	up, down, bytes, secs int64
}

// userManagerSection reports whether a RouterOS section is User
// Manager's.
func userManagerSection(section string) bool {
	return strings.HasPrefix(section, "/tool user-manager") || strings.HasPrefix(section, "/user-manager")
}

// userManager reads one command of a User Manager section.
func (c *catalogue) userManager(st *umState, section, text string, line int) {
	verb, rest, _ := strings.Cut(text, " ")
	kv := routerosArgs(rest)
	sec := strings.TrimPrefix(strings.TrimPrefix(section, "/tool user-manager"), "/user-manager")
	sec = strings.TrimSpace(sec)
	switch {
	case sec == "user" && verb == "create-and-activate-profile":
		name := kv["numbers"]
		if name == "" {
			name = kv["user"]
		}
		if u, ok := c.users[name]; ok && kv["profile"] != "" {
			u.Group = kv["profile"]
			c.group(kv["profile"])
		}
	case verb != "add" && verb != "set":
		return
	case sec == "user":
		name := kv["name"]
		if name == "" {
			name = kv["username"]
		}
		if name == "" {
			return
		}
		u := c.user(name, line)
		u.Password, u.PassKind = kv["password"], "cleartext"
		if u.Password == "" {
			u.PassKind = ""
		}
		u.StaticIP = kv["ip-address"]
		u.Disabled = kv["disabled"] == "yes" || kv["disabled"] == "true"
		u.Notes = kv["comment"]
		if n, err := strconv.ParseInt(kv["shared-users"], 10, 64); err == nil && n > 1 {
			u.SimUse = n
		}
		for _, a := range splitAttributes(kv["attributes"]) {
			attr, value, _ := strings.Cut(a, ":")
			c.userAttr(u, "radreply", attr, "=", value)
		}
		if g := kv["group"]; g != "" && g != "default" && g != "default-anonymous" {
			c.skip("attribute", "group="+g, "User Manager groups (authentication methods) have no xr equivalent; the subscriber is imported")
		}
	case sec == "user-profile":
		if u, ok := c.users[kv["user"]]; ok && kv["profile"] != "" {
			u.Group = kv["profile"]
			c.group(kv["profile"])
		}
	case sec == "profile":
		name := kv["name"]
		if name == "" {
			return
		}
		g := c.group(name)
		if n, err := strconv.ParseInt(kv["override-shared-users"], 10, 64); err == nil && n > 0 {
			g.SimUse = n
		}
		if p := kv["price"]; p != "" && p != "0" {
			if m, err := app.ParseMoney(p); err == nil && m > 0 {
				g.Price = m
			} else {
				c.skip("attribute", "price="+p, "not a price xr reads: set the plan's price in xr")
			}
		}
		if v := kv["validity"]; v != "" && v != "unlimited" {
			switch d, ok := rosDuration(v); {
			case ok && d == 0:
			case ok && d%(24*time.Hour) == 0 && d <= 36600*24*time.Hour:
				g.DurationDays = int64(d / (24 * time.Hour))
			default:
				c.skip("attribute", "validity="+v, "xr's plans last whole days: set the plan's duration in xr")
			}
		}
	case sec == "limitation" || sec == "profile limitation":
		name := kv["name"]
		if name == "" {
			return
		}
		l := umLimit{up: rateKbps(kv["rate-limit-rx"]), down: rateKbps(kv["rate-limit-tx"]), bytes: umBytes(kv["transfer-limit"])}
		if d, ok := rosDuration(kv["uptime-limit"]); ok {
			l.secs = int64(d / time.Second)
		}
		if l.bytes == 0 {
			l.bytes = umBytes(kv["download-limit"]) + umBytes(kv["upload-limit"])
		}
		st.limits[name] = l
	case sec == "router":
		ip := kv["ip-address"]
		if ip == "" {
			ip = kv["address"]
		}
		if ip != "" {
			c.nas = append(c.nas, legacyNAS{Name: kv["name"], IP: ip, Secret: kv["shared-secret"], Type: "mikrotik", Description: kv["comment"]})
		}
	case sec == "profile-limitation" || sec == "profile profile-limitation":
		if p, l := kv["profile"], kv["limitation"]; p != "" && l != "" {
			st.links[p] = append(st.links[p], l)
		}
	}
}

// finishUserManager gives the profiles the rates and transfer limit of
// their limitations (the first that sets each).
func (c *catalogue) finishUserManager(st *umState) {
	for p, ls := range st.links {
		g, ok := c.groups[strings.ToLower(p)]
		if !ok {
			continue
		}
		for _, name := range ls {
			l := st.limits[name]
			if g.RateUp == 0 && g.RateDown == 0 && (l.up > 0 || l.down > 0) {
				g.RateUp, g.RateDown = l.up, l.down
				g.rateText = name
			}
			if g.BytesLimit == 0 {
				g.BytesLimit = l.bytes
			}
			if g.SecondsLimit == 0 {
				g.SecondsLimit = l.secs
			}
		}
	}
}

// rosDuration reads a RouterOS time: 4w2d, 1d12h30m, 90s, 00:30:00,
// 1d00:00:00 or a bare count of seconds; ok false when it is none of
// these.
func rosDuration(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	var d time.Duration
	if i := strings.LastIndexAny(s, "wdhms"); i < len(s)-1 && strings.Contains(s[i+1:], ":") {
		// A clock part, hh:mm:ss, after any units.
		parts := strings.Split(s[i+1:], ":")
		if len(parts) != 3 {
			return 0, false
		}
		for k, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
			n, err := strconv.ParseUint(parts[k], 10, 32)
			if err != nil {
				return 0, false
			}
			d += time.Duration(n) * unit
		}
		s = s[:i+1]
	} else if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return time.Duration(n) * time.Second, true
	}
	units := map[byte]time.Duration{'w': 7 * 24 * time.Hour, 'd': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) || i > 6 {
			return 0, false
		}
		unit, ok := units[s[i]]
		if !ok {
			return 0, false
		}
		n, _ := strconv.Atoi(s[:i])
		d += time.Duration(n) * unit
		s = s[i+1:]
	}
	return d, true
}

// splitAttributes splits v7's attributes=Name:value,Name:value.
func splitAttributes(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// umBytes reads a RouterOS size: 10G, 500M, 10GiB, 1024 (bytes).
func umBytes(s string) int64 {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "B"))
	s = strings.TrimSuffix(s, "i")
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, s[:len(s)-1]
	case strings.HasSuffix(s, "T"):
		mul, s = 1<<40, s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0
	}
	return int64(v * float64(mul))
}
