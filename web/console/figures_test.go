package console_test

// Every subscriber figure a dashboard shows (the home page's tiles and the
// caller's own dashboard tiles) equals the total of the subscriber list
// its tile links to: the same filter through the list runner.

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/internal/webtest"
)

// figureTileRE matches a tile linking to the subscriber list: its href,
// its name and its number.
var figureTileRE = regexp.MustCompile(`<a (?:class="card tile[^"]*" )?href="(/users[^"]*)"[^>]*data-tile="([a-z_0-9]+)"[^>]*>\s*<div class="n">([^<]*)</div>`)

var listCountRE = regexp.MustCompile(`role="status">[^<:]*: (\d+)<`)

func TestDashboardFiguresEqualTheirLists(t *testing.T) {
	t.Parallel()
	s := webtest.NewAcme(t)
	reseller, _ := s.Manager(s.OwnerID, "figres", webtest.ResellerCodes...)
	now := time.Now().UTC()
	at := func(d time.Duration) string { return app.FormatTime(now.Add(d)) }
	day := 24 * time.Hour
	// One subscriber per state, some of them the reseller's.
	states := []struct {
		name       string
		expiration any
		enabled    int
		balance    int64
		parent     int64
	}{
		{"active", at(30 * day), 1, 0, s.OwnerID},
		{"soon", at(3 * day), 1, 0, s.OwnerID},
		{"soon-res", at(2 * day), 1, -5000, reseller},
		{"ranout", at(-2 * day), 1, 0, s.OwnerID},
		{"ranout-res", at(-1 * day), 1, 0, reseller},
		{"never", nil, 1, 0, s.OwnerID},
		{"never-res", nil, 1, 0, reseller},
		{"off-soon", at(2 * day), 0, 0, s.OwnerID},
		{"off-past", at(-3 * day), 0, -1000, s.OwnerID},
		{"off-never", nil, 0, 0, reseller},
	}
	for _, st := range states {
		id := s.User("", map[string]any{"username": "fig-" + st.name})
		s.Exec(`UPDATE users SET expiration = ?, enabled = ?, balance = ?, parent_id = ? WHERE id = ?`, st.expiration, st.enabled, st.balance, st.parent, id)
	}
	s.Exec(`UPDATE users SET deleted_at = ? WHERE username = 'fig-active'`, at(-time.Hour)) // deleted: counted nowhere
	s.User("", map[string]any{"username": "fig-active2"})
	s.Exec(`UPDATE users SET expiration = ? WHERE username = 'fig-active2'`, at(40*day))

	s.Exec(`UPDATE users SET firstname = 'Layla', lastname = 'Haddad', phone = '+961 70 123 456' WHERE username = 'fig-never'`)
	t.Run("never activated reads so, with name and phone", func(t *testing.T) {
		p := cdgSignIn(t, s.Kit, "owner")
		st, _, list := p.do("GET", "/users?status=never_activated&q=fig-never", nil)
		if st != http.StatusOK || !regexp.MustCompile(`>fig-never</a></td>\s*<td data-label="Name">Layla Haddad</td>\s*<td data-label="Phone" dir="ltr"><a href="tel:&#43;961%2070%20123%20456">&#43;961 70 123 456</a>`).MatchString(list) ||
			!strings.Contains(list, `data-state="never_activated"`) || strings.Contains(list, ">Expired</span>") {
			t.Fatalf("never activated row: %d %s", st, list)
		}
	})
	for _, who := range []string{"owner", "figres"} {
		t.Run(who, func(t *testing.T) {
			p := cdgSignIn(t, s.Kit, who)
			st, _, home := p.do("GET", "/", nil)
			if st != http.StatusOK {
				t.Fatalf("home: %d", st)
			}
			tiles := figureTileRE.FindAllStringSubmatch(home, -1)
			seen := map[string]bool{}
			for _, m := range tiles {
				href, name, n := strings.ReplaceAll(m[1], "&amp;", "&"), m[2], strings.TrimSpace(m[3])
				seen[name] = true
				st, _, list := p.do("GET", href, nil)
				c := listCountRE.FindStringSubmatch(list)
				if st != http.StatusOK || c == nil {
					t.Fatalf("tile %s: list %s answered %d without a count", name, href, st)
				}
				if c[1] != n {
					t.Errorf("tile %s shows %s, its list %s has %s", name, n, href, c[1])
				}
			}
			// The home block's figures, and (the owner's) dashboard tiles
			// counting subscribers: every one was compared.
			want := []string{"total", "online", "active", "expired", "never_activated", "expiring_7d", "in_debt", "disabled"}
			if who == "owner" {
				want = append(want, "subscribers_active", "expiring_7d", "subscribers_expired", "subscribers_disabled", "online_now")
			}
			for _, w := range want {
				if !seen[w] {
					t.Errorf("no tile %s linking to its list (tiles %v)", w, seen)
				}
			}
			if t.Failed() {
				return
			}
			// The figures mean what they say (owner: the whole tenant).
			if who == "owner" {
				for name, n := range map[string]string{"total": "10", "active": "3", "expired": "2", "never_activated": "2", "expiring_7d": "2", "disabled": "3", "in_debt": "2"} {
					if got := tileNumber(home, name); got != n {
						t.Errorf("owner tile %s = %s, want %s", name, got, n)
					}
				}
			}
		})
	}
}

// tileNumber is the number of the home page's tile name.
func tileNumber(home, name string) string {
	m := regexp.MustCompile(fmt.Sprintf(`id="dash-tiles"[\s\S]*?data-tile=%q[^>]*>\s*<div class="n">([^<]*)<`, name)).FindStringSubmatch(home)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}
