package aaa

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"
)

// A standby that is promoted applies its accounting journal once, through
// the primary's own accounting path (RecordAccounting's per-tenant
// transaction), so the same dedupe holds: a session is keyed by its NAS
// and Acct-Session-Id and only counter growth beyond what is stored is
// charged, so a record the old primary had already committed before it
// died charges nothing. Each batch commits, in the tenant's file, the last
// journal id it applied (journal_applied): a crash in the middle leaves
// the tenant's progress exact, and the retry starts after it.

// journalBatch is how many records one transaction applies.
const journalBatch = 256

// JournalReport is what ApplyJournal applied.
type JournalReport struct {
	Records int            `json:"records"`           // journal records applied now (earlier attempts excluded)
	Tenants map[string]int `json:"tenants,omitempty"` // by tenant
	Skipped int            `json:"skipped"`           // records whose NAS no longer exists
}

// ApplyJournal applies the accounting journal under dataDir (a promoted
// standby's) as journal name, which must be the same on every attempt
// (the generation the box took over). A missing journal applies nothing.
func (s *Service) ApplyJournal(ctx context.Context, dataDir, name string) (JournalReport, error) {
	rep := JournalReport{Tenants: map[string]int{}}
	path := JournalPath(dataDir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	j, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return rep, err
	}
	defer func() { _ = j.Close() }()
	var tenants []string
	rows, err := j.QueryContext(ctx, `SELECT DISTINCT tenant FROM acct_journal ORDER BY tenant`)
	if err == nil {
		for rows.Next() && err == nil {
			var slug string
			if err = rows.Scan(&slug); err == nil {
				tenants = append(tenants, slug)
			}
		}
		err = errors.Join(err, rows.Err(), rows.Close())
	}
	if err != nil {
		return rep, fmt.Errorf("accounting journal: %w", err)
	}
	for _, slug := range tenants {
		if err := s.applyTenantJournal(ctx, j, slug, name, &rep); err != nil {
			return rep, fmt.Errorf("accounting journal of %s: %w", slug, err)
		}
	}
	return rep, nil
}

func (s *Service) applyTenantJournal(ctx context.Context, j *sql.DB, slug, name string, rep *JournalReport) error {
	ti, release, err := s.tenant(ctx, slug)
	if err != nil {
		return err
	}
	var last int64
	err = ti.t.DB.R.QueryRowContext(ctx, `SELECT last_id FROM journal_applied WHERE journal = ?`, name).Scan(&last)
	release()
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	for {
		evs, upto, skipped, err := s.journalRecords(ctx, j, slug, last)
		if err != nil || upto == last {
			return err
		}
		at := time.Now().UTC().Format(time.RFC3339)
		mark := func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO journal_applied(journal, last_id, applied_at) VALUES (?,?,?)
				ON CONFLICT(journal) DO UPDATE SET last_id = excluded.last_id, applied_at = excluded.applied_at`, name, upto, at)
			return err
		}
		if err := s.recordTenant(ctx, slug, evs, mark); err != nil {
			return err
		}
		rep.Records += len(evs)
		rep.Tenants[slug] += len(evs)
		rep.Skipped += skipped
		last = upto
	}
}

// journalRecords reads the next batch of a tenant's journal after id
// last: the events (their NAS from the directory), the last id read, and
// how many were skipped (a NAS gone from the directory).
func (s *Service) journalRecords(ctx context.Context, j *sql.DB, slug string, last int64) (evs []AcctEvent, upto int64, skipped int, err error) {
	upto = last
	rows, err := j.QueryContext(ctx, `SELECT id, event, received_at FROM acct_journal WHERE tenant = ? AND id > ? ORDER BY id LIMIT ?`,
		slug, last, journalBatch)
	if err != nil {
		return nil, last, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var raw, received string
		if err := rows.Scan(&id, &raw, &received); err != nil {
			return nil, last, 0, err
		}
		upto = id
		var je JournalEvent
		if err := json.Unmarshal([]byte(raw), &je); err != nil {
			return nil, last, 0, fmt.Errorf("record %d: %w", id, err)
		}
		ev := je.AcctEvent
		if ev.NAS = s.nasByID(slug, je.NASID); ev.NAS == nil {
			skipped++
			continue
		}
		if ev.EventTime.IsZero() { // the record's own time, not the replay's
			if t, err := time.Parse(time.RFC3339Nano, received); err == nil {
				ev.EventTime = t
			}
		}
		evs = append(evs, ev)
	}
	return evs, upto, skipped, rows.Err()
}
