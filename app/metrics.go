package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// storedGauges is TenantGauges as tenant_stats keeps it (JSON).
type storedGauges struct {
	Subscribers int64            `json:"subscribers"`
	Online      int64            `json:"online"`
	Jobs        [][3]any         `json:"jobs"` // kind, state, count
	Webhooks    map[string]int64 `json:"webhooks"`
	Messages    [][3]any         `json:"messages"` // channel, state, count
}

func encodeGauges(g TenantGauges) string {
	st := storedGauges{Subscribers: g.Subscribers, Online: g.Online, Webhooks: g.Webhooks}
	for k, n := range g.Jobs {
		st.Jobs = append(st.Jobs, [3]any{k[0], k[1], n})
	}
	for k, n := range g.Messages {
		st.Messages = append(st.Messages, [3]any{k[0], k[1], n})
	}
	sortTriples(st.Jobs)
	sortTriples(st.Messages)
	b, _ := json.Marshal(st) // strings and numbers only
	return string(b)
}

func sortTriples(l [][3]any) {
	sort.Slice(l, func(i, j int) bool {
		return fmt.Sprint(l[i][0], "\x00", l[i][1]) < fmt.Sprint(l[j][0], "\x00", l[j][1])
	})
}

func decodeGauges(s string) (TenantGauges, error) {
	var st storedGauges
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return TenantGauges{}, err
	}
	g := TenantGauges{Subscribers: st.Subscribers, Online: st.Online, Jobs: map[[2]string]int64{}, Webhooks: st.Webhooks, Messages: map[[2]string]int64{}}
	if g.Webhooks == nil {
		g.Webhooks = map[string]int64{}
	}
	put := func(dst map[[2]string]int64, l [][3]any) {
		for _, t := range l {
			a, _ := t[0].(string)
			b, _ := t[1].(string)
			n, _ := t[2].(float64)
			dst[[2]string{a, b}] = int64(n)
		}
	}
	put(g.Jobs, st.Jobs)
	put(g.Messages, st.Messages)
	return g, nil
}

// storeGauges keeps t's gauges in instance.db as its files close, when
// they changed since last kept (the closing tenant's last word for
// /metrics).
func (a *App) storeGauges(ctx context.Context, t *Tenant) {
	if a.IsStandby() {
		return // the primary keeps them; a standby's instance.db is a read-only copy
	}
	g, err := ReadTenantGauges(ctx, t)
	if err != nil {
		a.Log.Warn("tenant figures at close", "tenant", t.Slug, "err", err)
		return
	}
	enc := encodeGauges(g)
	if old, ok := a.gaugesKept.Load(t.Slug); ok && old.(string) == enc {
		return
	}
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tenant_stats(tenant_id, gauges, read_at) SELECT id, ?, ? FROM tenants WHERE id = ?
			ON CONFLICT(tenant_id) DO UPDATE SET gauges = excluded.gauges, read_at = excluded.read_at`, enc, a.NowText(), t.ID)
		return err
	})
	if err != nil {
		a.Log.Warn("keep tenant figures", "tenant", t.Slug, "err", err)
		return
	}
	a.gaugesKept.Store(t.Slug, enc)
}

// AllTenantGauges reads every tenant's gauges for a scrape: fresh from
// the files of the tenants open now, and for the others as kept when their
// files last closed (tenant_stats), so no closed tenant opens. unread
// counts the tenants without figures: a read that failed or ran out of
// ctx, or a tenant never closed since it was created.
func (a *App) AllTenantGauges(ctx context.Context) (map[string]TenantGauges, int, error) {
	out := map[string]TenantGauges{}
	rows, err := a.Inst.R.QueryContext(ctx, `SELECT t.slug, s.gauges FROM tenant_stats s JOIN tenants t ON t.id = s.tenant_id`)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var slug, enc string
		if err := rows.Scan(&slug, &enc); err != nil {
			rows.Close()
			return nil, 0, err
		}
		a.gaugesKept.Store(slug, enc)
		if g, err := decodeGauges(enc); err == nil {
			out[slug] = g
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, 0, err
	}
	for _, slug := range a.Pool.OpenSlugs() {
		if ctx.Err() != nil {
			break
		}
		t, release, ok := a.AcquireOpen(slug)
		if !ok {
			continue
		}
		g, err := ReadTenantGauges(ctx, t)
		release()
		if err == nil {
			out[slug] = g
		}
	}
	unread := 0
	for _, slug := range a.TenantSlugs() {
		if _, ok := out[slug]; !ok {
			unread++
		}
	}
	for slug := range out {
		if _, ok := a.TenantBySlug(slug); !ok {
			delete(out, slug)
		}
	}
	return out, unread, nil
}
