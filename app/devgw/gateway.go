package devgw

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/crypto/ssh"

	"xr/app"
)

// The gateway row GET /admin/devgw/ssh/ws?ticket=… (a WebSocket upgrade).
// Binary frames carry terminal bytes both ways; text frames carry JSON
// control messages (see Protocol).

// Protocol is the message format, as the row's OpenAPI description says it.
const Protocol = "Open with GET and a WebSocket upgrade (RFC 6455) on the tenant's host, ?ticket= a ticket " +
	"from POST /admin/devgw/tickets (single use, 30 s, bound to the manager who minted it, the target and the tenant). " +
	"The ticket is checked before the upgrade and before any SSH connection: a missing, spent, expired or foreign " +
	"ticket answers 401 with the error object (reasons ticket_required, ticket_invalid, ticket_expired); a request " +
	"without an upgrade 400 websocket_required; the caps 409 console_limit_tenant / console_limit_manager. " +
	"After the upgrade, binary frames carry terminal bytes both ways (client→server: keystrokes to the PTY; " +
	"server→client: the device's output). Text frames carry JSON control messages. Client→server: " +
	"{\"type\":\"resize\",\"cols\":N,\"rows\":M} (send it first: it sets the PTY size; 80×24 when none arrives " +
	"within 2 s; later ones resize the PTY) and {\"type\":\"close\"}. Server→client: {\"type\":\"opened\",\"session_id\":N} " +
	"once the SSH shell runs, {\"type\":\"error\",\"reason\":R} when it cannot (R one of host_key_changed, auth_failed, " +
	"unreachable, handshake_failed, shell_failed) and {\"type\":\"closed\",\"reason\":R} when it ends (R one of " +
	"idle_timeout, max_duration, closed_by_staff, remote_exit, client_closed), each followed by " +
	"the close frame. Every other method of the path answers 405 with Allow: GET"

// Control is a JSON control message (text frame), either way.
type Control struct {
	Type      string `json:"type"`
	Cols      int    `json:"cols,omitempty"`
	Rows      int    `json:"rows,omitempty"`
	SessionID int64  `json:"session_id,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Tunables (tests shorten them).
var (
	firstSizeWait = 2 * time.Second
	checkEvery    = 250 * time.Millisecond
	controlWrite  = time.Second
)

// Terminal bounds.
const (
	defaultCols, defaultRows = 80, 24
	maxCols, maxRows         = 500, 200
	maxFrame                 = 64 << 10
)

// isUpgrade tells a WebSocket handshake from a plain request.
func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// Serve is the gateway: it checks the ticket (401 before anything else),
// the target, its credentials, the egress rule and the caps, then upgrades
// and relays the console until it ends; it returns only when the console is
// over. An error returned is written by the caller (nothing was upgraded).
func Serve(w http.ResponseWriter, r *http.Request, t *app.Tenant, clientIP string) error {
	if t == nil {
		return app.ErrUnauthorized("ticket_invalid")
	}
	ctx := context.WithoutCancel(r.Context())
	sp, err := spend(ctx, t, r.URL.Query().Get("ticket"))
	if err != nil {
		return err
	}
	if !isUpgrade(r) {
		return app.ErrValidation("websocket_required", "")
	}
	act, status, err := app.ManagerActor(ctx, t, sp.manager, nil)
	if err != nil || status != "active" {
		return app.ErrUnauthorized("ticket_invalid")
	}
	if err := requireKind(act, sp.kind); err != nil {
		return err
	}
	var tg *Target
	var c *creds
	var lim limits
	var idle, maxDur int64
	var record bool
	var mgrName string
	err = t.Read(ctx, func(tx *sql.Tx) (err error) {
		if tg, c, err = ready(ctx, tx, act, sp.kind, sp.targetID); err != nil {
			return err
		}
		if lim, err = readLimits(ctx, tx); err != nil {
			return err
		}
		if idle, err = SettingDevgwIdleTimeout.Get(ctx, tx); err != nil {
			return err
		}
		if maxDur, err = SettingDevgwMaxDuration.Get(ctx, tx); err != nil {
			return err
		}
		if record, err = SettingDevgwRecord.Get(ctx, tx); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT COALESCE(NULLIF(username, ''), email, '') FROM managers WHERE id = ?`, act.ManagerID).Scan(&mgrName)
	})
	if err != nil {
		return err
	}
	addr, err := checkEgress(t.App, tg.Address)
	if err != nil {
		return err
	}
	rg := reg(t.App)
	l, err := rg.reserve(t.Slug, act.ManagerID, lim)
	if err != nil {
		return err
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		rg.release(l)
		close(l.done)
		return nil // Accept answered the handshake's own error
	}
	conn.SetReadLimit(maxFrame)
	cs := &console{t: t, l: l, conn: conn, target: tg, creds: c, addr: addr, managerName: mgrName, clientIP: clientIP,
		idle: time.Duration(max(idle, 1)) * time.Second, maxDur: time.Duration(max(maxDur, 1)) * time.Second, record: record}
	cs.run()
	return nil
}

// console is one relayed session.
type console struct {
	t           *app.Tenant
	l           *live
	conn        *websocket.Conn
	target      *Target
	creds       *creds
	addr        interface{ String() string }
	managerName string
	clientIP    string
	idle        time.Duration
	maxDur      time.Duration
	record      bool

	bytesIn, bytesOut atomic.Int64
	lastActive        atomic.Int64 // app clock, unix nanos
	sid               int64
	rec               *recorder
}

type wsMsg struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

func (cs *console) control(m Control) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), controlWrite)
	defer cancel()
	_ = cs.conn.Write(ctx, websocket.MessageText, b) // the peer may be gone already
}

// closeHandshake bounds the closing handshake: a peer that does not answer
// the close frame within it has its connection cut.
var closeHandshake = time.Second

// closeConn sends the close frame and ends the connection within
// closeHandshake, whether or not the peer answers.
func (cs *console) closeConn(code websocket.StatusCode, reason string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cs.conn.Close(code, reason) // the peer may be gone
	}()
	select {
	case <-done:
	case <-time.After(closeHandshake):
		_ = cs.conn.CloseNow()
	}
}

func (cs *console) touch() { cs.lastActive.Store(cs.t.Now().UnixNano()) }

func clampSize(cols, rows int) (int, int) {
	if cols < 1 || rows < 1 {
		return defaultCols, defaultRows
	}
	return min(cols, maxCols), min(rows, maxRows)
}

func (cs *console) run() {
	t, l := cs.t, cs.l
	defer func() {
		reg(t.App).release(l)
		close(l.done)
	}()
	defer func() { _ = cs.conn.CloseNow() }() // already closed on the usual paths
	msgs := make(chan wsMsg, 64)
	go func() {
		for {
			typ, data, err := cs.conn.Read(context.Background())
			select {
			case msgs <- wsMsg{typ, data, err}:
			case <-l.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	// The first message sets the PTY size; keystrokes sent before the
	// shell runs are kept for it.
	cols, rows := defaultCols, defaultRows
	var early [][]byte
	timer := time.NewTimer(firstSizeWait)
wait:
	for {
		select {
		case m := <-msgs:
			if m.err != nil {
				timer.Stop()
				return
			}
			if m.typ == websocket.MessageBinary {
				early = append(early, m.data)
				continue
			}
			var c Control
			if json.Unmarshal(m.data, &c) == nil && c.Type == "resize" {
				cols, rows = clampSize(c.Cols, c.Rows)
				break wait
			}
			if c.Type == "close" {
				timer.Stop()
				cs.closeConn(websocket.StatusNormalClosure, ReasonClientClosed)
				return
			}
		case <-timer.C:
			break wait
		case <-l.ctx.Done():
			cs.finishEarly(l.endReason())
			return
		}
	}
	timer.Stop()

	client, sess, stdin, stdout, reason := cs.dial(cols, rows)
	if reason != "" {
		cs.control(Control{Type: "error", Reason: reason})
		cs.closeConn(websocket.StatusPolicyViolation, reason)
		return
	}
	defer func() { _ = client.Close() }()
	stopSSH := context.AfterFunc(l.ctx, func() { _ = client.Close() })
	defer stopSSH()

	if err := cs.open(cols, rows); err != nil {
		t.App.Log.Error("devgw: open session row", "tenant", t.Slug, "err", err)
		cs.control(Control{Type: "error", Reason: "internal"})
		cs.closeConn(websocket.StatusInternalError, "internal")
		return
	}
	cs.touch()
	start := t.Now()
	cs.control(Control{Type: "opened", SessionID: cs.sid})

	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := stdout.Read(buf)
			if n > 0 {
				cs.bytesOut.Add(int64(n))
				cs.touch()
				cs.rec.output(buf[:n])
				if werr := cs.conn.Write(l.ctx, websocket.MessageBinary, buf[:n]); werr != nil {
					l.stop(ReasonClientClosed)
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for _, b := range early {
		cs.input(stdin, b)
	}
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
loop:
	for {
		select {
		case m := <-msgs:
			if m.err != nil {
				l.stop(ReasonClientClosed)
				break loop
			}
			if m.typ == websocket.MessageBinary {
				cs.input(stdin, m.data)
				continue
			}
			var c Control
			if json.Unmarshal(m.data, &c) != nil {
				continue
			}
			switch c.Type {
			case "resize":
				cols, rows = clampSize(c.Cols, c.Rows)
				cs.touch()
				if err := sess.WindowChange(rows, cols); err == nil {
					cs.rec.resize(cols, rows)
				}
			case "close":
				l.stop(ReasonClientClosed)
			}
		case <-outDone:
			l.stop(ReasonRemoteExit)
		case <-tick.C:
			now := t.Now()
			if now.Sub(start) >= cs.maxDur {
				l.stop(ReasonMaxDuration)
			} else if now.Sub(time.Unix(0, cs.lastActive.Load())) >= cs.idle {
				l.stop(ReasonIdle)
			}
		case <-l.ctx.Done():
			break loop
		}
	}
	reason = l.endReason()
	_ = client.Close()
	cs.control(Control{Type: "closed", Reason: reason})
	cs.closeConn(websocket.StatusNormalClosure, reason)
	<-outDone
	cs.finish(reason)
}

// input forwards keystrokes to the PTY.
func (cs *console) input(stdin io.Writer, b []byte) {
	if len(b) == 0 {
		return
	}
	cs.touch()
	n, err := stdin.Write(b)
	cs.bytesIn.Add(int64(n))
	if err != nil {
		cs.l.stop(ReasonRemoteExit)
	}
}

// finishEarly ends a console stopped before its shell ran (no row yet).
func (cs *console) finishEarly(reason string) {
	cs.control(Control{Type: "closed", Reason: reason})
	cs.closeConn(websocket.StatusNormalClosure, reason)
}

// dial opens the SSH connection, the PTY and the shell; reason is the
// error message's reason when it cannot.
func (cs *console) dial(cols, rows int) (*ssh.Client, *ssh.Session, io.Writer, io.Reader, string) {
	t, c := cs.t, cs.creds
	ctx, cancel := context.WithTimeout(cs.l.ctx, dialTimeout)
	defer cancel()
	want := cs.target.Address
	ap, _ := checkEgress(t.App, want)
	hostport := net.JoinHostPort(ap.String(), strconv.Itoa(c.port))
	nc, err := dialer(t.App, ap).DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, nil, nil, nil, "unreachable"
	}
	var learned, offered string
	cfg := &ssh.ClientConfig{
		User: c.username,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			fp := ssh.FingerprintSHA256(key)
			switch c.hostKey {
			case "":
				learned = fp
				return nil
			case fp:
				return nil
			}
			offered = fp
			return errHostKeyChanged
		},
		Timeout: dialTimeout,
	}
	if len(c.key) > 0 {
		if signer, err := ssh.ParsePrivateKey(c.key); err == nil {
			cfg.Auth = append(cfg.Auth, ssh.PublicKeys(signer))
		}
	}
	if len(c.password) > 0 {
		pw := string(c.password)
		cfg.Auth = append(cfg.Auth, ssh.Password(pw), ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			out := make([]string, len(qs))
			for i := range out {
				out[i] = pw
			}
			return out, nil
		}))
	}
	_ = nc.SetDeadline(time.Now().Add(dialTimeout))
	cc, chans, reqs, err := ssh.NewClientConn(nc, hostport, cfg)
	if err != nil {
		_ = nc.Close()
		switch {
		case offered != "":
			cs.hostKeyOffered(offered)
			return nil, nil, nil, nil, "host_key_changed"
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, nil, nil, nil, "auth_failed"
		}
		return nil, nil, nil, nil, "handshake_failed"
	}
	_ = nc.SetDeadline(time.Time{})
	client := ssh.NewClient(cc, chans, reqs)
	if learned != "" {
		cs.hostKeyLearned(learned)
	}
	sess, err := client.NewSession()
	if err != nil {
		_ = client.Close()
		return nil, nil, nil, nil, "shell_failed"
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
	stdin, err1 := sess.StdinPipe()
	stdout, err2 := sess.StdoutPipe()
	if err := errors.Join(err1, err2); err != nil {
		_ = client.Close()
		return nil, nil, nil, nil, "shell_failed"
	}
	sess.Stderr = io.Discard // a PTY merges stderr into stdout
	if err := sess.RequestPty("xterm-256color", rows, cols, modes); err != nil {
		_ = client.Close()
		return nil, nil, nil, nil, "shell_failed"
	}
	if err := sess.Shell(); err != nil {
		_ = client.Close()
		return nil, nil, nil, nil, "shell_failed"
	}
	return client, sess, stdin, stdout, ""
}

var errHostKeyChanged = errors.New("devgw: the device offered a host key other than the trusted one")

// hostKeyLearned trusts a first host key (only while none is trusted).
func (cs *console) hostKeyLearned(fp string) {
	t, tg := cs.t, cs.target
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE devgw_credentials SET host_key = ?, host_key_pending = '' WHERE kind = ? AND target_id = ? AND host_key = ''`, fp, tg.Kind, tg.ID)
		return err
	})
	if err != nil {
		t.App.Log.Error("devgw: record host key", "tenant", t.Slug, "err", err)
	}
}

// hostKeyOffered records a refused host key for staff to accept.
func (cs *console) hostKeyOffered(fp string) {
	t, tg := cs.t, cs.target
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE devgw_credentials SET host_key_pending = ? WHERE kind = ? AND target_id = ?`, fp, tg.Kind, tg.ID)
		return err
	})
	if err != nil {
		t.App.Log.Error("devgw: record offered host key", "tenant", t.Slug, "err", err)
	}
}

// open writes the console's row, emits console.opened and starts the
// recording.
func (cs *console) open(cols, rows int) error {
	t, tg := cs.t, cs.target
	ctx := context.Background()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO devgw_sessions(manager_id, manager_name, kind, target_id, target_name, target_address,
			remote_addr, state, started_at, cols, rows) VALUES (?,?,?,?,?,?,?,'live',?,?,?)`,
			cs.l.manager, cs.managerName, tg.Kind, tg.ID, tg.Name, cs.addr.String(), cs.clientIP, t.NowText(), cols, rows)
		if err != nil {
			return err
		}
		if cs.sid, err = r.LastInsertId(); err != nil {
			return err
		}
		s, err := scanSession(tx.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM devgw_sessions s WHERE s.id = ?`, cs.sid))
		if err != nil {
			return err
		}
		return app.Emit(ctx, tx, "console.opened", s)
	})
	if err != nil {
		return err
	}
	reg(t.App).setID(cs.l, cs.sid)
	if cs.record {
		if cs.rec, err = newRecorder(t, cs.sid, cols, rows); err != nil {
			t.App.Log.Error("devgw: start recording", "tenant", t.Slug, "err", err)
			cs.rec = nil
		}
	}
	return nil
}

// finish ends the row with its counters and the recording.
func (cs *console) finish(reason string) {
	t := cs.t
	ctx := context.Background()
	st := endStats{reason: reason, bytesIn: cs.bytesIn.Load(), bytesOut: cs.bytesOut.Load()}
	var staged interface {
		Keep()
		Discard()
	}
	var insert func(tx *sql.Tx) (int64, error)
	if cs.rec != nil {
		s, err := cs.rec.finish()
		if err != nil {
			t.App.Log.Error("devgw: recording", "tenant", t.Slug, "session", cs.sid, "err", err)
		} else {
			staged = s
			insert = func(tx *sql.Tx) (int64, error) {
				f, err := s.Insert(ctx, tx, "devgw")
				if err != nil {
					return 0, err
				}
				return f.ID, nil
			}
		}
	}
	if staged != nil {
		defer staged.Discard()
	}
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if insert != nil {
			id, err := insert(tx)
			if err != nil {
				return err
			}
			st.fileID = id
		}
		return endRow(ctx, tx, t, cs.sid, st)
	})
	if err != nil {
		t.App.Log.Error("devgw: end session row", "tenant", t.Slug, "session", cs.sid, "err", err)
		return
	}
	if staged != nil {
		staged.Keep()
	}
}
