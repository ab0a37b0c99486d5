package monitoring_test

import (
	"strings"
	"testing"

	"xr/app"
	"xr/app/monitoring"
	"xr/internal/xrtest"
)

// The subscriber layer of GET /geo is cached; every change it shows must
// reach the next read: coordinates, usernames, a move to another reseller,
// a deletion, and (never cached) the online flag.
func TestGeoSubscriberLayerFollowsChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	now := app.StampNow()
	owner := xrtest.Scalar(t, e.t, `SELECT id FROM managers WHERE parent_id IS NULL`)
	res := xrtest.Exec(t, e.t, `INSERT INTO managers(parent_id, username, password_hash, created_at, updated_at) VALUES (?, 'res', 'x', ?, ?)`, owner, now, now)
	xrtest.Exec(t, e.t, `INSERT INTO manager_tree(ancestor_id, descendant_id, depth)
		SELECT ancestor_id, ?, depth + 1 FROM manager_tree WHERE descendant_id = ? UNION ALL SELECT ?, ?, 0`, res, owner, res, res)
	user := func(name string, parent int64) int64 {
		return xrtest.Exec(t, e.t, `INSERT INTO users(username, password_sealed, parent_id, lookup_token, created_at, updated_at) VALUES (?, x'00', ?, ?, ?, ?)`,
			name, parent, "tok-"+name, now, now)
	}
	ann, bob := user("ann", owner), user("bob", res)
	xrtest.Exec(t, e.t, `INSERT INTO mon_user_geo(user_id, lat, lon, updated_at) VALUES (?, 1.5, 2.5, ?), (?, 3.5, 4.5, ?)`, ann, now, bob, now)
	reseller := xrtest.Reseller(e.t, res)

	layer := func(act *app.Actor) string {
		t.Helper()
		fc, err := monitoring.Geo(ctx, act, monitoring.GeoQuery{Subscribers: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := fc.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := func(step string, act *app.Actor, has []string, hasNot []string) {
		t.Helper()
		got := layer(act)
		for _, s := range has {
			if !strings.Contains(got, s) {
				t.Fatalf("%s: missing %s in %s", step, s, got)
			}
		}
		for _, s := range hasNot {
			if strings.Contains(got, s) {
				t.Fatalf("%s: unexpected %s in %s", step, s, got)
			}
		}
	}
	want("first read", e.sys, []string{`"username":"ann","status":"offline"`, `"username":"bob"`, `[2.5,1.5]`}, nil)
	want("first read", reseller, []string{`"username":"bob"`}, []string{`"ann"`})

	steps := []struct {
		name        string
		sql         string
		args        []any
		sys, sysNot []string
		res, resNot []string
	}{
		{"coordinates", `UPDATE mon_user_geo SET lat = 7.25 WHERE user_id = ?`, []any{ann}, []string{`[2.5,7.25]`}, []string{`[2.5,1.5]`}, nil, nil},
		{"rename", `UPDATE users SET username = 'anna' WHERE id = ?`, []any{ann}, []string{`"username":"anna"`}, []string{`"username":"ann"`}, nil, nil},
		{"move into the subtree", `UPDATE users SET parent_id = ? WHERE id = ?`, []any{res, ann}, nil, nil, []string{`"anna"`, `"bob"`}, nil},
		{"online", `INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES ('s1', ?, 'anna', '2026-03-02 10:00:00')`, []any{ann},
			[]string{`"username":"anna","status":"online"`, `"username":"bob","status":"offline"`}, nil, nil, nil},
		{"offline", `UPDATE radius_sessions SET stop_time = '2026-03-02 11:00:00'`, nil, []string{`"username":"anna","status":"offline"`}, nil, nil, nil},
		{"uncoordinated", `DELETE FROM mon_user_geo WHERE user_id = ?`, []any{bob}, nil, []string{`"bob"`}, nil, []string{`"bob"`}},
		{"deleted", `DELETE FROM users WHERE id = ?`, []any{ann}, nil, []string{`"anna"`}, nil, []string{`"anna"`}},
	}
	for _, s := range steps {
		xrtest.Exec(t, e.t, s.sql, s.args...)
		want(s.name, e.sys, s.sys, s.sysNot)
		want(s.name, reseller, s.res, s.resNot)
	}
}
