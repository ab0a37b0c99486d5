package dataimport

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// memPeak samples the heap in use every 20 ms and reads the process's
// peak resident set (VmHWM, reset first through clear_refs) while fn runs.
func memPeak(b *testing.B, fn func()) {
	b.Helper()
	runtime.GC()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // Linux: reset VmHWM
	base := vmHWM()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tk := time.NewTicker(20 * time.Millisecond)
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
	fn()
	close(stop)
	<-done
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
	if hwm := vmHWM(); hwm > 0 {
		b.ReportMetric(float64(hwm)/1e6, "peak-RSS-MB")
		b.ReportMetric(float64(hwm-min(base, hwm))/1e6, "RSS-growth-MB")
	}
}

// vmHWM is the process's peak resident set in bytes (0 off Linux).
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// writeRowsCSV writes a subscriber CSV of n rows.
// A refused file names a plan that does not exist on every row.
func writeRowsCSV(b *testing.B, path string, n int, refused bool) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("username,password,firstname,lastname,phone,expiration,profile\n")
	plan := ""
	if refused {
		plan = "no such plan"
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(w, "user%07d,pw%d,Ali,Hassan,+96477%08d,2027-01-01,%s\n", i, i, i, plan)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// writeXLSXBomb writes a workbook whose one sheet is a single inline
// string cell of size bytes: a few MB on disk once deflated.
func writeXLSXBomb(b *testing.B, path string, size int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	zw := zip.NewWriter(f)
	part := func(name, body string) {
		w, err := zw.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			b.Fatal(err)
		}
	}
	part("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`)
	part("_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	part("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	part("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`)
	w, err := zw.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>username</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>`)
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for n := 0; n < size; n += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Fprint(w, `</t></is></c></row></sheetData></worksheet>`)
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkValidateRowsCSV validates a subscriber CSV of XR_BENCH_ROWS
// rows (default 1,000,000; every row refused with XR_BENCH_REFUSED=1)
// through the upload path of POST
// /admin/import/validate, reporting the peak heap and resident set.
//
//	go test ./app/dataimport -run '^$' -bench ValidateRowsCSV -benchtime 1x
func BenchmarkValidateRowsCSV(b *testing.B) {
	n := benchEnvInt("XR_BENCH_ROWS", 1000000)
	path := filepath.Join(b.TempDir(), "users.csv")
	writeRowsCSV(b, path, n, os.Getenv("XR_BENCH_REFUSED") == "1")
	for b.Loop() {
		e := newEnv(b)
		memPeak(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			rep, err := ValidateUpload(e.ctx, e.owner, "users.csv", f, Spec{PasswordPolicy: "require"})
			if err != nil {
				b.Logf("refused: %v", err)
				return
			}
			b.Logf("rows %d, created %d, errors listed %d", rep.Rows, rep.Created, len(rep.Errors))
		})
	}
}

// BenchmarkValidateXLSXBomb validates an XLSX whose sheet expands to
// XR_BENCH_EXPAND_MB megabytes (default 1024) in one cell.
//
//	go test ./app/dataimport -run '^$' -bench ValidateXLSXBomb -benchtime 1x
func BenchmarkValidateXLSXBomb(b *testing.B) {
	size := benchEnvInt("XR_BENCH_EXPAND_MB", 1024) << 20
	path := filepath.Join(b.TempDir(), "bomb.xlsx")
	writeXLSXBomb(b, path, size)
	st, _ := os.Stat(path)
	b.Logf("bomb: %.1f MB on disk, %d MB expanded", float64(st.Size())/1e6, size>>20)
	for b.Loop() {
		e := newEnv(b)
		memPeak(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			_, err = ValidateUpload(e.ctx, e.owner, "bomb.xlsx", f, Spec{PasswordPolicy: "generate"})
			b.Logf("answer: %v", err)
		})
	}
}

// BenchmarkImportRowsCSV imports a subscriber CSV of XR_BENCH_ROWS rows
// (default 1,000,000) as a job (upload, validation pass, writes in
// chunks), reporting the peak heap and resident set.
//
//	go test ./app/dataimport -run '^$' -bench ImportRowsCSV -benchtime 1x
func BenchmarkImportRowsCSV(b *testing.B) {
	n := benchEnvInt("XR_BENCH_ROWS", 1000000)
	path := filepath.Join(b.TempDir(), "users.csv")
	writeRowsCSV(b, path, n, false)
	for b.Loop() {
		e := newEnv(b)
		memPeak(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			j, err := CreateJob(e.ctx, e.owner, "users.csv", f, Spec{PasswordPolicy: "require"})
			if err != nil {
				b.Fatal(err)
			}
			e.runJob(*j.JobID)
			j, _ = GetJob(e.ctx, e.owner, j.ID)
			b.Logf("%s: created %d of %d", j.State, j.Created, n)
		})
	}
}

// BenchmarkLegacyZipLongLine uploads a legacy zip holding one CSV line of
// XR_BENCH_EXPAND_MB megabytes (default 1024) twice: deflated (refused at
// the upload by its ratio) and stored (within the ratio: the analysis
// refuses the line while reading it).
//
//	go test ./app/dataimport -run '^$' -bench LegacyZipLongLine -benchtime 1x
func BenchmarkLegacyZipLongLine(b *testing.B) {
	size := benchEnvInt("XR_BENCH_EXPAND_MB", 1024) << 20
	for _, method := range []uint16{zip.Deflate, zip.Store} {
		path := filepath.Join(b.TempDir(), "tables.zip")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		zw := zip.NewWriter(f)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "radcheck.csv", Method: method})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprint(w, "id,username,attribute,op,value\n1,")
		chunk := bytes.Repeat([]byte("A"), 1<<20)
		for n := 0; n < size; n += len(chunk) {
			w.Write(chunk)
		}
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
		f.Close()
		st, _ := os.Stat(path)
		b.Run(fmt.Sprintf("method-%d", method), func(b *testing.B) {
			b.Logf("zip: %.1f MB on disk, one line of %d MB", float64(st.Size())/1e6, size>>20)
			for b.Loop() {
				e := newEnv(b)
				memPeak(b, func() {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					j, err := CreateLegacyJob(e.ctx, e.owner, "tables.zip", f, LegacyInput{Source: SourceFreeRADIUS})
					if err != nil {
						b.Logf("upload refused: %v", err)
						return
					}
					e.runJob(*j.JobID)
					j, _ = GetLegacyJob(e.ctx, e.owner, j.ID)
					b.Logf("analysis: %s %s", j.State, j.Error)
				})
			}
		})
	}
}

// writeRowsXLSX writes a subscriber workbook of n rows through excelize's
// stream writer (the largest workbook an import takes: a million rows is
// about 300 MB of sheet XML, under the 512 MB cap).
func writeRowsXLSX(b *testing.B, path string, n int) {
	f := excelize.NewFile()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		b.Fatal(err)
	}
	if err := sw.SetRow("A1", []any{"username", "password", "firstname", "lastname", "phone", "expiration", "profile"}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		row := []any{fmt.Sprintf("user%07d", i), fmt.Sprintf("pw%d", i), "Ali", "Hassan", fmt.Sprintf("+96477%08d", i), "2027-01-01", ""}
		if err := sw.SetRow(cell, row); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.SaveAs(path); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkValidateRowsXLSX validates a subscriber workbook of
// XR_BENCH_ROWS rows (default 1,000,000), reporting the peak heap and
// resident set.
//
//	go test ./app/dataimport -run '^$' -bench ValidateRowsXLSX -benchtime 1x
func BenchmarkValidateRowsXLSX(b *testing.B) {
	n := benchEnvInt("XR_BENCH_ROWS", 1000000)
	path := filepath.Join(b.TempDir(), "users.xlsx")
	writeRowsXLSX(b, path, n)
	st, _ := os.Stat(path)
	b.Logf("workbook: %.1f MB on disk, %d rows", float64(st.Size())/1e6, n)
	for b.Loop() {
		e := newEnv(b)
		memPeak(b, func() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			rep, err := ValidateUpload(e.ctx, e.owner, "users.xlsx", f, Spec{PasswordPolicy: "require"})
			if err != nil {
				b.Logf("refused: %v", err)
				return
			}
			b.Logf("rows %d, created %d, errors listed %d", rep.Rows, rep.Created, len(rep.Errors))
		})
	}
}
