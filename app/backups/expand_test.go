package backups

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"io"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"

	"xr/app"
	"xr/internal/xrtest"
)

// zstdOf compresses b's reader.
func zstdOf(t *testing.T, r io.Reader) []byte {
	t.Helper()
	var out bytes.Buffer
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(enc, r); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// zeros is n zero bytes as a reader, never held in memory.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A backup that expands far past what its size allows (a few kilobytes of
// zstd or gzip inflating to hundreds of megabytes), or past the size its
// own SQLite header declares, is refused while it is written: 400
// archive_too_large, no record, nothing left in the backups folder, and
// never more than the cap written on the way.
func TestUploadRefusesDecompressionBombs(t *testing.T) {
	t.Parallel()
	a, ten, act := newEnv(t)
	ctx := context.Background()
	plain := t.TempDir() + "/acme.db"
	if err := a.BackupTenant(ctx, ten, plain); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	// A real tenant file with 32 MB of zeros after the size its header
	// declares: small once compressed, within the ratio, refused by the
	// header.
	padded := zstdOf(t, io.MultiReader(bytes.NewReader(raw), zeros(32<<20)))
	// A header declaring a 4 GB file.
	huge := bytes.Clone(raw[:100])
	binary.BigEndian.PutUint32(huge[28:32], uint32((4<<30)/int64(binary.BigEndian.Uint16(huge[16:18]))))
	declared := zstdOf(t, io.MultiReader(bytes.NewReader(huge), zeros(8<<20)))
	// No header at all: 600 MB of zeros, refused by the ratio.
	bomb := zstdOf(t, zeros(600<<20))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := io.Copy(zw, zeros(600<<20)); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	before, _ := os.ReadDir(Dir(a, "acme"))
	for _, c := range []struct {
		name  string
		body  []byte
		limit string
	}{
		{"past its declared size", padded, "expanded_bytes"},
		{"declaring 4 GB", declared, "expanded_bytes"},
		{"zstd bomb", bomb, "expanded_bytes"},
		{"gzip bomb", gz.Bytes(), "expanded_bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.body) > 1<<20 {
				t.Fatalf("the bomb is %d bytes", len(c.body))
			}
			_, err := Upload(ctx, act, bytes.NewReader(c.body), 0, "")
			e := xrtest.WantError(t, err, 400, app.CodeValidation, "archive_too_large")
			if e.Field != "file" || e.Details["limit"] != c.limit {
				t.Fatalf("%+v", e)
			}
		})
	}
	after, _ := os.ReadDir(Dir(a, "acme"))
	if len(after) != len(before) {
		t.Fatalf("%d files after refusals, %d before", len(after), len(before))
	}
	if list, _ := List(ctx, act); len(list) != 0 {
		t.Fatalf("%d records", len(list))
	}
}

// declaredSize reads the SQLite header of a real file: page size times
// page count, the file's size.
func TestDeclaredSizeOfATenantFile(t *testing.T) {
	t.Parallel()
	a, ten, _ := newEnv(t)
	plain := t.TempDir() + "/acme.db"
	if err := a.BackupTenant(context.Background(), ten, plain); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := declaredSize(raw[:100]); !ok || n != int64(len(raw)) {
		t.Fatalf("declared %d (%v), file %d", n, ok, len(raw))
	}
	if _, ok := declaredSize(bytes.Repeat([]byte{1}, 100)); ok {
		t.Fatal("not an SQLite header")
	}
}
