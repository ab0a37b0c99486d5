package monitoring_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"
	"time"

	"xr/app"
	"xr/app/monitoring"
	"xr/internal/xrtest"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPoll1000Devices: one op is one 30 s cycle of 1,000 devices
// (TCP echoes to a loopback listener, each sample stored and rolled up).
// cpu-%-of-core-per-30s is the process CPU of a cycle over 30 s.
func BenchmarkPoll1000Devices(b *testing.B) {
	a := xrtest.TenantApp(b, "acme", monitoring.Module)
	ten := xrtest.Acquire(b, a, "acme")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	err = ten.Write(ctx, func(tx *sql.Tx) error {
		for i := range 1000 {
			if _, err := tx.Exec(`INSERT INTO mon_devices(kind, name, address, probe_port, created_at, updated_at) VALUES ('device', ?, '127.0.0.1', ?, ?, ?)`,
				fmt.Sprintf("d%d", i), port, app.FormatTime(now), app.FormatTime(now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		now = now.Add(30 * time.Second)
		n, err := monitoring.PollDue(ctx, ten, now)
		if err != nil || n != 1000 {
			b.Fatalf("polled %d: %v", n, err)
		}
	}
	cpu := cpuTime() - start
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(30*time.Second)*100, "cpu-%-of-core-per-30s")
}

// BenchmarkGeo2000Devices50kSubscribers: GET /geo's function (with the
// subscribers layer) over 2,000 located devices in a tree and 50,000
// located subscribers attached to them.
func BenchmarkGeo2000Devices50kSubscribers(b *testing.B) {
	a := xrtest.TenantApp(b, "acme", monitoring.Module)
	ten := xrtest.Acquire(b, a, "acme")
	sys := xrtest.System(b, ten)
	now := "2026-03-02 10:00:00"
	err := ten.Write(ctx, func(tx *sql.Tx) error {
		for i := 1; i <= 2000; i++ {
			if _, err := tx.Exec(`INSERT INTO mon_devices(id, kind, name, address, status, lat, lon, created_at, updated_at) VALUES (?, 'device', ?, ?, 'up', ?, ?, ?, ?)`,
				i, fmt.Sprintf("d%d", i), fmt.Sprintf("10.%d.%d.1", i/250, i%250), 33+float64(i)/1000, 36+float64(i)/1000, now, now); err != nil {
				return err
			}
			if i > 1 {
				if _, err := tx.Exec(`INSERT INTO mon_links(from_id, to_id, created_at) VALUES (?, ?, ?)`, i/2, i, now); err != nil {
					return err
				}
			}
		}
		owner := int64(0)
		if err := tx.QueryRow(`SELECT id FROM managers WHERE parent_id IS NULL`).Scan(&owner); err != nil {
			return err
		}
		for i := 1; i <= 50000; i++ {
			res, err := tx.Exec(`INSERT INTO users(username, password_sealed, parent_id, lookup_token, created_at, updated_at) VALUES (?, x'00', ?, ?, ?, ?)`,
				fmt.Sprintf("u%d", i), owner, fmt.Sprintf("t%d", i), now, now)
			if err != nil {
				return err
			}
			uid, _ := res.LastInsertId()
			if _, err := tx.Exec(`INSERT INTO mon_attached(device_id, user_id) VALUES (?, ?)`, 1000+i%1000, uid); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO mon_user_geo(user_id, lat, lon, updated_at) VALUES (?, ?, ?, ?)`, uid, 33+float64(i)/100000, 36+float64(i)/100000, now); err != nil {
				return err
			}
			if i%5 < 3 { // 30,000 online
				if _, err := tx.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, username, start_time) VALUES (?, ?, ?, ?)`, fmt.Sprintf("s%d", i), uid, fmt.Sprintf("u%d", i), now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// The first call builds the cached subscriber layer (what a map read
	// costs after a subscriber's coordinates change); later calls reuse it.
	t0 := time.Now()
	if _, err := monitoring.Geo(ctx, sys, monitoring.GeoQuery{Subscribers: true}); err != nil {
		b.Fatal(err)
	}
	cold := time.Since(t0)
	b.ResetTimer()
	var inQuery time.Duration
	took := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		fc, err := monitoring.Geo(ctx, sys, monitoring.GeoQuery{Subscribers: true})
		if err != nil {
			b.Fatal(err)
		}
		inQuery += time.Since(t0)
		// What the route writes: the JSON of the collection, as is.
		body, err := fc.AppendJSON(nil)
		if err != nil || len(body) < 50000*80 {
			b.Fatalf("%d bytes: %v", len(body), err)
		}
		took = append(took, time.Since(t0))
		if i == 0 {
			if n, err := fc.SubscriberFeatures(); err != nil || len(fc.Features) != 2000+1999 || n != 50000 {
				b.Fatalf("%d features, %d subscribers: %v", len(fc.Features), n, err)
			}
			if c := bytes.Count(body, []byte(`"status":"online"`)); c != 30000 {
				b.Fatalf("%d online, want 30000", c)
			}
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/geo+json-p50")
	b.ReportMetric(float64(inQuery.Microseconds())/float64(b.N)/1000, "ms/geo-query")
	b.ReportMetric(float64(cold.Microseconds())/1000, "ms/geo-cold")
	// The impact of the root walks the whole tree and every attachment.
	start := time.Now()
	imp, err := monitoring.GetImpact(ctx, sys, "device", 1)
	if err != nil || imp.Devices != 1999 || imp.Subscribers != 50000 {
		b.Fatalf("impact: %+v %v", imp, err)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms/root-impact")
}
