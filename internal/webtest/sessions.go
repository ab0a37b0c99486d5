package webtest

import (
	"context"
	"database/sql"
	"net/netip"
	"strings"
	"testing"
	"time"

	"xr/app"
	"xr/app/aaa"
	"xr/internal/xrtest"
)

// SessionsKit is a kit whose server has a RADIUS service with a scripted
// Disconnect outcome, plus a NAS and a few subscribers.
type SessionsKit struct {
	*Kit
	Svc        *aaa.Service
	NAS        *aaa.NAS
	Outcome    string
	Sent       []string
	OwnerToken string
}

// NewSessionsKit is a SessionsKit whose disconnects succeed.
func NewSessionsKit(t *testing.T) *SessionsKit {
	k := &SessionsKit{Kit: NewWith(t, app.Config{AllowPrivateEgress: true}, nil, nil), Outcome: "ok"} // sessions on loopback
	ctx := context.Background()
	ten := k.Acquire("acme")
	if _, err := aaa.CreateNAS(ctx, xrtest.System(t, ten), aaa.NASInput{Name: app.Opt[string]{Set: true, V: "core-1"}, IP: app.Opt[string]{Set: true, V: "10.0.0.1"},
		Secret: app.Opt[string]{Set: true, V: "nas-secret-12345"}}); err != nil {
		t.Fatal(err)
	}
	k.Svc = aaa.New(k.App)
	t.Cleanup(k.Svc.Close)
	k.Svc.Disconnect = func(ctx context.Context, n *aaa.NAS, user, sid string, ip netip.Addr) (string, error) {
		k.Sent = append(k.Sent, sid)
		return k.Outcome, nil
	}
	k.Srv.Radius = k.Svc
	k.NAS, _ = k.Svc.LookupNAS(netip.MustParseAddr("10.0.0.1"))
	k.OwnerToken = k.Owner("acme")
	return k
}

// Exec runs a statement on acme's database.
func (k *SessionsKit) Exec(q string, args ...any) {
	k.T.Helper()
	if err := k.Acquire("acme").Write(context.Background(), func(tx *sql.Tx) error { _, err := tx.Exec(q, args...); return err }); err != nil {
		k.T.Fatal(err)
	}
}

// User inserts subscriber name under manager parent, with the extra
// columns named by extra (", bytes_limit, used_bytes" or "").
func (k *SessionsKit) User(name string, parent int64, extra string) {
	k.Exec(`INSERT INTO users(username, password_sealed, parent_id, enabled, expiration, lookup_token, created_at, updated_at`+extra+`)
		VALUES (?, x'00', ?, 1, ?, ?, ?, ?`+strings.Repeat(", ?", strings.Count(extra, ","))+`)`,
		append([]any{name, parent, app.FormatTime(time.Now().Add(24 * time.Hour)), app.RandomToken(10), app.StampNow(), app.StampNow()}, extraArgs[extra]...)...)
}

var extraArgs = map[string][]any{"": nil, ", bytes_limit, used_bytes": {1000, 250}}

// Start records the start of an accounting session on the kit's NAS.
func (k *SessionsKit) Start(user, sid, ip, mac string) {
	k.T.Helper()
	ev := aaa.AcctEvent{NAS: k.NAS, Status: aaa.StatusStart, SessionID: sid, Username: user, CallingStationID: mac, EventTime: time.Now()}
	if ip != "" {
		ev.FramedIP = netip.MustParseAddr(ip)
	}
	if err := k.Svc.RecordAccounting(context.Background(), []aaa.AcctEvent{ev}); err != nil {
		k.T.Fatal(err)
	}
}

// SessionID is the id of the live session with Acct-Session-Id sid.
func (k *SessionsKit) SessionID(sid string) string {
	var id string
	_ = k.Acquire("acme").DB.R.QueryRow(`SELECT id FROM radius_sessions WHERE acct_session_id = ?`, sid).Scan(&id) // none: ""
	return id
}
