package dataimport

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLegacyPanelImport analyses and imports a reseller-panel CSV set
// of XR_BENCH_PANEL_USERS subscribers (default 20,000) under 200 managers
// (a two-level tree with balances), 3 plans and one series of 5,000 cards.
func BenchmarkLegacyPanelImport(b *testing.B) {
	users := 20000
	if v, err := strconv.Atoi(os.Getenv("XR_BENCH_PANEL_USERS")); err == nil && v > 0 {
		users = v
	}
	const managers, cardsN = 200, 5000
	path := filepath.Join(b.TempDir(), "panel.zip")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	entry := func(name string, fill func(w *bufio.Writer)) {
		e, err := zw.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(e)
		fill(w)
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	entry("managers.csv", func(w *bufio.Writer) {
		w.WriteString("username,parent,balance\n")
		for i := range managers {
			parent := ""
			if i >= 20 {
				parent = fmt.Sprintf("m%03d", i%20)
			}
			fmt.Fprintf(w, "m%03d,%s,%d.5\n", i, parent, i)
		}
	})
	entry("profiles.csv", func(w *bufio.Writer) {
		w.WriteString("name,price,rate_down_kbps,rate_up_kbps\nbronze,10,4000,1000\nsilver,20,8000,2000\ngold,30,20000,5000\n")
	})
	entry("users.csv", func(w *bufio.Writer) {
		w.WriteString("username,password,manager,profile,expiration,balance\n")
		plans := []string{"bronze", "silver", "gold"}
		for i := range users {
			fmt.Fprintf(w, "user%06d,pw-%d,m%03d,%s,2027-01-%02d,%d.250\n", i, i, i%managers, plans[i%3], i%28+1, i%50)
		}
	})
	entry("series.csv", func(w *bufio.Writer) { w.WriteString("name,type,face_value\nRefill 5,refill,5\n") })
	entry("cards.csv", func(w *bufio.Writer) {
		w.WriteString("series,code\n")
		for i := range cardsN {
			fmt.Fprintf(w, "Refill 5,%010d\n", 7000000000+i)
		}
	})
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		e := newEnv(b)
		b.StartTimer()
		start := time.Now()
		j := e.legacy("panel.zip", string(raw), StartInput{})
		analysed := time.Since(start)
		j = e.startPanel(j, StartInput{})
		if j.State != "done" || j.Created != int64(users+managers+cardsN) {
			b.Fatalf("%s %s %d created", j.State, j.Error, j.Created)
		}
		b.ReportMetric(analysed.Seconds(), "analyse-s")
		b.ReportMetric(time.Since(start).Seconds(), "total-s")
	}
}
