package dataimport

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// writeBenchDump writes a mysqldump of the FreeRADIUS schema: users
// subscribers (Cleartext-Password, Expiration, a group of three) and acct
// radacct rows, multi-row INSERTs of 100 tuples as mysqldump writes them.
func writeBenchDump(b *testing.B, path string, users, acct int) int64 {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprint(w, "-- MySQL dump (generated)\n/*!40101 SET NAMES utf8mb4 */;\n")
	fmt.Fprint(w, "INSERT INTO `radgroupreply` VALUES (1,'bronze','Mikrotik-Rate-Limit',':=','1M/4M'),(2,'silver','Mikrotik-Rate-Limit',':=','2M/8M'),(3,'gold','Mikrotik-Rate-Limit',':=','5M/20M');\n")
	groups := []string{"bronze", "silver", "gold"}
	batch := func(table string, n int, row func(i int) string) {
		for i := 0; i < n; i++ {
			if i%100 == 0 {
				if i > 0 {
					w.WriteString(";\n")
				}
				fmt.Fprintf(w, "INSERT INTO `%s` VALUES ", table)
			} else {
				w.WriteString(",")
			}
			w.WriteString(row(i))
		}
		if n > 0 {
			w.WriteString(";\n")
		}
	}
	batch("radcheck", users*2, func(i int) string {
		u := i / 2
		if i%2 == 0 {
			return fmt.Sprintf("(%d,'user%06d','Cleartext-Password',':=','pw\\'%d')", i+1, u, u)
		}
		return fmt.Sprintf("(%d,'user%06d','Expiration',':=','January %02d 2027 00:00:00')", i+1, u, u%28+1)
	})
	batch("radusergroup", users, func(i int) string { return fmt.Sprintf("(%d,'user%06d','%s',1)", i+1, i, groups[i%3]) })
	batch("radacct", acct, func(i int) string {
		return fmt.Sprintf("(%d,'%08x','%016x','user%06d','','10.9.0.1','%d','Ethernet','2026-01-01 10:00:00','2026-01-01 10:05:00','2026-01-01 11:00:00',300,3600,'RADIUS','','',%d,%d,'svc','AA:BB:CC:DD:EE:01','User-Request','Framed-User','PPP','10.20.%d.%d','','','','',NULL,NULL)",
			i+1, i, i, i%users, i%4096, i*13, i*31, (i/256)%256, i%256)
	})
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return st.Size()
}

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkLegacyFreeRADIUSImport analyses and imports a generated
// FreeRADIUS dump (XR_BENCH_USERS subscribers, default 100,000;
// XR_BENCH_RADACCT radacct rows, default 500,000, imported as session
// history unless XR_BENCH_SESSIONS=0), reporting the seconds
// of each phase and the peak heap sampled every 50 ms.
//
//	go test ./app/dataimport -run '^$' -bench LegacyFreeRADIUSImport -benchtime 1x
func BenchmarkLegacyFreeRADIUSImport(b *testing.B) {
	users, acct := benchEnvInt("XR_BENCH_USERS", 100000), benchEnvInt("XR_BENCH_RADACCT", 500000)
	dir := b.TempDir()
	dump := filepath.Join(dir, "radius.sql")
	size := writeBenchDump(b, dump, users, acct)
	b.Logf("dump: %d subscribers, %d radacct rows, %.1f MB", users, acct, float64(size)/1e6)
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		tk := time.NewTicker(50 * time.Millisecond)
		defer tk.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	for b.Loop() {
		e := newEnv(b)
		f, err := os.Open(dump)
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		j, err := CreateLegacyJob(e.ctx, e.owner, "radius.sql", f, LegacyInput{})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		e.runJob(*j.JobID)
		t2 := time.Now()
		in := StartInput{}
		if os.Getenv("XR_BENCH_SESSIONS") == "0" { // the session history left out
			off := false
			in.Sessions = &off
		}
		if _, err := StartLegacyJob(e.ctx, e.owner, j.ID, in); err != nil {
			b.Fatal(err)
		}
		j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
		e.runJob(*j.JobID)
		t3 := time.Now()
		j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
		if j.State != "done" || j.Created != int64(users) {
			b.Fatalf("%s %s: created %d", j.State, j.Error, j.Created)
		}
		b.ReportMetric(t1.Sub(t0).Seconds(), "upload-s")
		b.ReportMetric(t2.Sub(t1).Seconds(), "analyse-s")
		b.ReportMetric(t3.Sub(t2).Seconds(), "import-s")
		b.ReportMetric(t3.Sub(t0).Seconds(), "total-s")
	}
	close(stop)
	<-sampled
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}
