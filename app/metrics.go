package app

import (
	"context"
	"database/sql"
	"fmt"
)

// TenantGauges are the per-tenant figures /metrics exports, read in one
// snapshot of the tenant's file at scrape time: subscribers (the licence's
// count), open RADIUS sessions, jobs by kind and state, webhook deliveries
// by state and outgoing messages by channel and state. Every key set is
// bounded by a CHECK constraint or by the job kinds the modules declare.
type TenantGauges struct {
	Subscribers int64
	Online      int64
	Jobs        map[[2]string]int64 // kind, state
	Webhooks    map[string]int64    // delivery state
	Messages    map[[2]string]int64 // channel, state
}

// ReadTenantGauges reads t's gauges in one read transaction. A table an
// area has not created in this file yet counts nothing.
func ReadTenantGauges(ctx context.Context, t *Tenant) (TenantGauges, error) {
	g := TenantGauges{Jobs: map[[2]string]int64{}, Webhooks: map[string]int64{}, Messages: map[[2]string]int64{}}
	err := t.Read(ctx, func(tx *sql.Tx) error {
		var err error
		if g.Subscribers, err = ReadUsersCount(ctx, tx); err != nil {
			return err
		}
		tables := map[string]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('radius_sessions', 'jobs', 'webhook_deliveries', 'outbox_messages')`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			tables[n] = true
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if tables["radius_sessions"] {
			// Served by the partial indexes on open sessions.
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM radius_sessions WHERE stop_time IS NULL`).Scan(&g.Online); err != nil {
				return err
			}
		}
		count := func(table, q string, put func(a, b string, n int64)) error {
			if !tables[table] {
				return nil
			}
			rows, err := tx.QueryContext(ctx, q)
			if err != nil {
				return fmt.Errorf("count %s: %w", table, err)
			}
			defer rows.Close()
			for rows.Next() {
				var a, b string
				var n int64
				if err := rows.Scan(&a, &b, &n); err != nil {
					return err
				}
				put(a, b, n)
			}
			return rows.Err()
		}
		if err := count("jobs", `SELECT kind, state, count(*) FROM jobs GROUP BY kind, state`,
			func(a, b string, n int64) { g.Jobs[[2]string{a, b}] = n }); err != nil {
			return err
		}
		if err := count("webhook_deliveries", `SELECT state, '', count(*) FROM webhook_deliveries GROUP BY state`,
			func(a, _ string, n int64) { g.Webhooks[a] = n }); err != nil {
			return err
		}
		return count("outbox_messages", `SELECT channel, state, count(*) FROM outbox_messages GROUP BY channel, state`,
			func(a, b string, n int64) { g.Messages[[2]string{a, b}] = n })
	})
	return g, err
}
