package web_test

import (
	"context"
	"database/sql"
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"xr/internal/webtest"
)

// BenchmarkTicketsList is GET /api/v1/tickets (the default queue: newest
// updated first, 50 a page, total counted) by the owner over real HTTP,
// on a tenant of 200,000 tickets and 1,000,000 messages written with bulk
// SQL. It reports the p50 and p95 latency of one request: "all" is the
// API's default list, "active" the console's queue (new, open, pending,
// snoozed: a filtered count).
//
//	go test ./web -run '^$' -bench BenchmarkTicketsList -benchtime 200x
func BenchmarkTicketsList(b *testing.B) {
	k := webtest.New(b)
	tok := k.Owner("acme")
	t := k.Acquire("acme")
	var users int64
	err := t.Write(context.Background(), func(tx *sql.Tx) error {
		var owner int64
		if err := tx.QueryRow(`SELECT id FROM managers WHERE parent_id IS NULL`).Scan(&owner); err != nil {
			return err
		}
		if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
			INSERT INTO users(username, password_sealed, parent_id, email, lookup_token, created_at, updated_at)
			SELECT 'bench' || i, x'00', ?, 'bench' || i || '@isp.example', 'lt' || i, '2026-01-01 00:00:00', '2026-01-01 00:00:00' FROM n`, owner); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT COUNT(*) FROM users`).Scan(&users); err != nil {
			return err
		}
		if _, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200000)
			INSERT INTO tickets(subject, priority, state, requester_user_id, requester_email, user_id, assignee_id, tags, custom_fields,
				first_response_due, resolution_due, last_message_at, message_count, created_at, updated_at)
			SELECT 'Ticket number ' || i, CASE i % 4 WHEN 0 THEN 'low' WHEN 1 THEN 'normal' WHEN 2 THEN 'high' ELSE 'urgent' END,
				CASE i % 6 WHEN 0 THEN 'new' WHEN 1 THEN 'open' WHEN 2 THEN 'pending' WHEN 3 THEN 'snoozed' WHEN 4 THEN 'resolved' ELSE 'closed' END,
				1 + i % ?, 'bench' || (1 + i % ?) || '@isp.example', 1 + i % ?, CASE WHEN i % 3 = 0 THEN ? END, '[]', '{}',
				strftime('%Y-%m-%d %H:%M:%S', '2026-01-01', '+' || i || ' minutes'), strftime('%Y-%m-%d %H:%M:%S', '2026-01-02', '+' || i || ' minutes'),
				strftime('%Y-%m-%d %H:%M:%S', '2026-01-01', '+' || i || ' minutes'), 5,
				strftime('%Y-%m-%d %H:%M:%S', '2026-01-01', '+' || i || ' minutes'), strftime('%Y-%m-%d %H:%M:%S', '2026-01-01', '+' || i || ' minutes')
			FROM n`, users, users, users, owner); err != nil {
			return err
		}
		_, err := tx.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 999999)
			INSERT INTO ticket_messages(ticket_id, internal, author_manager_id, author_user_id, body, created_at)
			SELECT 1 + i / 5, i % 5 = 3, CASE WHEN i % 2 = 1 THEN ? END, CASE WHEN i % 2 = 0 THEN 1 + (i / 5) % ? END,
				'Message ' || i || ' about the connection, please check the line and the router settings.', '2026-01-01 00:00:00'
			FROM n`, owner, users)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := t.DB.W.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string) time.Duration {
		req, _ := http.NewRequest("GET", k.TS.URL+path, nil)
		req.Host = "acme.xr.test"
		req.Header.Set("Authorization", "Bearer "+tok)
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(start)
		if err != nil || res.StatusCode != 200 {
			b.Fatalf("%d %v", res.StatusCode, err)
		}
		return d
	}
	for _, c := range []struct{ name, path string }{
		{"all", "/api/v1/tickets"},
		{"active", "/api/v1/tickets?filter[state]=new,open,pending,snoozed"},
	} {
		b.Run(c.name, func(b *testing.B) {
			get(b, c.path) // warm the caches and the connection
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				lat = append(lat, get(b, c.path))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}
