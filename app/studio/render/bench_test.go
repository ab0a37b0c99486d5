package render

import (
	"fmt"
	"io"
	"testing"
)

// BenchmarkCardSheet1000 renders a 1,000-card PDF sheet of the default
// design (each card with its own code and QR) and writes it.
//
//	go test ./app/studio/render -run '^$' -bench CardSheet1000 -benchtime 3x
func BenchmarkCardSheet1000(b *testing.B) {
	d := DefaultDesign(KindCardSheet)
	v := SampleVars(KindCardSheet)
	b.ReportAllocs()
	for b.Loop() {
		s, err := NewSheet(d, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 1000; i++ {
			code := fmt.Sprintf("%04d%04d%04d", i, 7*i%10000, 13*i%10000)
			v["code"] = code[:4] + " " + code[4:8] + " " + code[8:]
			v["serial"] = fmt.Sprintf("S-%06d", i)
			v["qr_payload"] = "xr:c:" + code // as app/cards prints it
			if err := s.Add(v); err != nil {
				b.Fatal(err)
			}
		}
		n, err := s.WriteTo(io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/1e6, "MB/pdf")
	}
}

// BenchmarkThumbnailCold renders the default card design to a PNG of at
// most 512 px, as a thumbnail cache miss does.
//
//	go test ./app/studio/render -run '^$' -bench ThumbnailCold
func BenchmarkThumbnailCold(b *testing.B) {
	d := DefaultDesign(KindCardSheet)
	v := SampleVars(KindCardSheet)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PNG(d, v, nil, 512); err != nil {
			b.Fatal(err)
		}
	}
}
