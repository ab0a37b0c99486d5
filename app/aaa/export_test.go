package aaa

import (
	"encoding/json"
	"time"
)

// IndexedTenants counts the tenants whose RADIUS index is loaded (tests).
func (s *Service) IndexedTenants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tenants)
}

// AppendJournal writes records to the accounting journal under dataDir as
// a standby's journalAccounting does (tests of its application).
func AppendJournal(dataDir string, evs ...JournalEvent) error {
	j, err := openJournal(dataDir)
	if err != nil {
		return err
	}
	defer j.db.Close()
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if _, err := j.db.Exec(`INSERT INTO acct_journal(tenant, user_id, nas_id, session_id, bytes, seconds, event, received_at) VALUES (?,0,?,?,?,?,?,?)`,
			ev.Tenant, ev.NASID, ev.SessionID, int64(ev.InputOctets+ev.OutputOctets), int64(ev.SessionTime), string(b), time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
			return err
		}
	}
	return nil
}
