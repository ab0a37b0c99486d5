package aaa

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A standby cannot write its followed files, yet a NAS that fell over to
// it must hear its accounting acknowledged, and the usage must count. The
// standby's accounting goes to a journal of its own (a SQLite file under
// the data directory, WAL with synchronous FULL: on disk before the
// Accounting-Response), and its decisions add the journal's usage of a
// subscriber to what the replica says.

// JournalPath is a standby's accounting journal.
func JournalPath(dataDir string) string { return filepath.Join(dataDir, "standby", "journal.db") }

// acctJournal is a standby's accounting journal. resets keeps, per
// tenant and NAS, the journal id of the NAS's last Accounting-On/Off, so
// a decision need not scan the journal for them.
type acctJournal struct {
	db     *sql.DB
	mu     sync.Mutex
	resets map[string]map[int64]int64
}

// reset records a NAS's Accounting-On/Off at journal id.
func (j *acctJournal) reset(tenant string, nas, id int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.resets[tenant] == nil {
		j.resets[tenant] = map[int64]int64{}
	}
	j.resets[tenant][nas] = max(j.resets[tenant][nas], id)
}

// resetOf is the journal id of a NAS's last Accounting-On/Off, 0 for none.
func (j *acctJournal) resetOf(tenant string, nas int64) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.resets[tenant][nas]
}

// JournalEvent is one accounting record as journaled (the whole record,
// for its replay once the standby is promoted).
type JournalEvent struct {
	Tenant string `json:"tenant"`
	NASID  int64  `json:"nas_id"`
	AcctEvent
}

func openJournal(dataDir string) (*acctJournal, error) {
	path := JournalPath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	d, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	d.SetMaxOpenConns(1) // one writer; reads are a few rows per decision
	_, err = d.Exec(`CREATE TABLE IF NOT EXISTS acct_journal(
		id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, user_id INTEGER NOT NULL, nas_id INTEGER NOT NULL,
		session_id TEXT NOT NULL, bytes INTEGER NOT NULL, seconds INTEGER NOT NULL,
		event TEXT NOT NULL, received_at TEXT NOT NULL);
		CREATE INDEX IF NOT EXISTS acct_journal_user ON acct_journal(tenant, user_id)`)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	j := &acctJournal{db: d, resets: map[string]map[int64]int64{}}
	rows, err := d.Query(`SELECT tenant, nas_id, MAX(id) FROM acct_journal WHERE json_extract(event, '$.Status') IN (?, ?) GROUP BY tenant, nas_id`,
		StatusOn, StatusOff)
	if err == nil {
		for rows.Next() && err == nil {
			var tenant string
			var nas, id int64
			if err = rows.Scan(&tenant, &nas, &id); err == nil {
				j.reset(tenant, nas, id)
			}
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return j, nil
}

// journalAccounting writes a batch to the journal in one transaction: it
// returns nil only once the batch is on disk (the wire layer answers the
// NAS then).
func (s *Service) journalAccounting(ctx context.Context, evs []AcctEvent) error {
	if s.journal == nil {
		return errors.New("standby: no accounting journal")
	}
	type row struct {
		ev   JournalEvent
		user int64
	}
	rows := make([]row, 0, len(evs))
	for _, ev := range evs {
		if ev.NAS == nil {
			continue
		}
		rows = append(rows, row{JournalEvent{Tenant: ev.NAS.TenantSlug, NASID: ev.NAS.ID, AcctEvent: ev}, s.userID(ctx, ev.NAS.TenantSlug, ev.Username)})
	}
	tx, err := s.journal.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	type reset struct {
		tenant  string
		nas, id int64
	}
	var resets []reset
	for _, r := range rows {
		b, err := json.Marshal(r.ev)
		if err != nil {
			return err
		}
		res, err := tx.Exec(`INSERT INTO acct_journal(tenant, user_id, nas_id, session_id, bytes, seconds, event, received_at) VALUES (?,?,?,?,?,?,?,?)`,
			r.ev.Tenant, r.user, r.ev.NASID, r.ev.SessionID, int64(r.ev.InputOctets+r.ev.OutputOctets), int64(r.ev.SessionTime), string(b), now)
		if err != nil {
			return err
		}
		if r.ev.Status == StatusOn || r.ev.Status == StatusOff {
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			resets = append(resets, reset{r.ev.Tenant, r.ev.NASID, id})
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, r := range resets {
		s.journal.reset(r.tenant, r.nas, r.id)
	}
	return nil
}

// userID is the subscriber a username names in the tenant's index (0:
// none, or the tenant does not open).
func (s *Service) userID(ctx context.Context, slug, username string) int64 {
	ti, release, err := s.tenant(ctx, slug)
	if err != nil {
		return 0
	}
	defer release()
	ti.mu.RLock()
	defer ti.mu.RUnlock()
	if r := ti.users[strings.ToLower(username)]; r != nil {
		return r.id
	}
	return 0
}

// journalUsage is what the journal adds to a subscriber's usage: per
// session, the journal's latest counters beyond those the replica holds
// for it (a session the primary saw before it went away counts once).
func (s *Service) journalUsage(ti *tenantIndex, userID int64) (bytes, secs int64) {
	if s.journal == nil {
		return 0, 0
	}
	ctx := context.Background()
	rows, err := s.journal.db.QueryContext(ctx, `SELECT nas_id, session_id, MAX(bytes), MAX(seconds) FROM acct_journal
		WHERE tenant = ? AND user_id = ? GROUP BY nas_id, session_id`, ti.slug, userID)
	if err != nil {
		s.log.Error("accounting journal", "err", err)
		return 0, 0
	}
	type sess struct {
		nas            int64
		sid            string
		bytes, seconds int64
	}
	var list []sess
	for rows.Next() {
		var x sess
		if err := rows.Scan(&x.nas, &x.sid, &x.bytes, &x.seconds); err == nil {
			list = append(list, x)
		}
	}
	rows.Close()
	for _, x := range list {
		var rb, rs int64
		err := ti.t.DB.R.QueryRowContext(ctx, `SELECT input_octets + output_octets, session_time FROM radius_sessions
			WHERE nas_id = ? AND acct_session_id = ? ORDER BY id DESC LIMIT 1`, x.nas, x.sid).Scan(&rb, &rs)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			s.log.Error("accounting journal: the replica's session", "err", err)
		}
		bytes += max(0, x.bytes-rb)
		secs += max(0, x.seconds-rs)
	}
	return bytes, secs
}

// journalLive is a subscriber's count of live sessions as a standby knows
// it: the replica's (live), less those the journal saw stop or whose NAS
// it saw restart (Accounting-On/Off), plus those the journal saw start
// and not stop.
func (s *Service) journalLive(ti *tenantIndex, userID int64, live map[string]bool) int {
	ctx := context.Background()
	counted := func(key string) bool { // live in the replica and its NAS not reset since
		nas, _, _ := strings.Cut(key, "/")
		id, err := strconv.ParseInt(nas, 10, 64)
		return live[key] && (err != nil || s.journal.resetOf(ti.slug, id) == 0)
	}
	n := 0
	for key := range live {
		if counted(key) {
			n++
		}
	}
	// SQLite takes the bare columns of a MAX() group from its row: each
	// session's latest journaled record.
	_ = s.journalRows(ctx, func(rows *sql.Rows) error {
		var nas, id int64
		var sid string
		var status sql.NullInt64
		if err := rows.Scan(&nas, &sid, &status, &id); err != nil {
			return err
		}
		open := status.Int64 != StatusStop && id > s.journal.resetOf(ti.slug, nas)
		switch was := counted(liveKey(nas, sid)); {
		case open && !was:
			n++
		case !open && was:
			n--
		}
		return nil
	}, `SELECT nas_id, session_id, json_extract(event, '$.Status'), MAX(id) FROM acct_journal
		WHERE tenant = ? AND user_id = ? GROUP BY nas_id, session_id`, ti.slug, userID)
	return n
}

// journalRows runs a query on the journal and hands each row to scan; an
// error is logged (a decision goes on with what the replica says).
func (s *Service) journalRows(ctx context.Context, scan func(*sql.Rows) error, query string, args ...any) error {
	rows, err := s.journal.db.QueryContext(ctx, query, args...)
	if err == nil {
		for rows.Next() && err == nil {
			err = scan(rows)
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if err != nil {
		s.log.Error("accounting journal", "err", err)
	}
	return err
}
