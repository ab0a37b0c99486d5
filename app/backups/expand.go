package backups

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"

	"xr/app/sheet"
)

// A backup file is decompressed within bounds checked while it is
// written, so a few kilobytes of zstd or gzip cannot fill the disk:
//
//   - the SQLite header of the first bytes declares the file's size (page
//     size × page count, valid when its version-valid-for number matches
//     the change counter, as in every file SQLite 3.7+ writes); more bytes
//     than that are refused, and so is a declared size past the cap;
//   - the cap is sheet.ExpandCap of the compressed size: 100 × it + 16 MB,
//     at most MaxTenantFile (a tenant file compresses 3 to 20 times).
//
// A refusal is 400 archive_too_large; the partial file is removed.
const (
	expandRatio = 100
	// MaxTenantFile bounds a tenant file restored from a backup.
	MaxTenantFile int64 = 256 << 30
)

// sqliteHeaderLen is the size of SQLite's database header.
const sqliteHeaderLen = 100

// boundedFile writes a plain tenant file refusing more than its limit and
// more than its header declares.
type boundedFile struct {
	w     io.Writer
	n     int64
	limit int64
	head  []byte
	err   error
}

func (b *boundedFile) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(b.head) < sqliteHeaderLen {
		b.head = append(b.head, p[:min(len(p), sqliteHeaderLen-len(b.head))]...)
		if len(b.head) == sqliteHeaderLen {
			if d, ok := declaredSize(b.head); ok {
				if d > b.limit {
					b.err = sheet.ErrArchiveTooLarge("expanded_bytes", b.limit)
					return 0, b.err
				}
				b.limit = d
			}
		}
	}
	if b.n+int64(len(p)) > b.limit {
		b.err = sheet.ErrArchiveTooLarge("expanded_bytes", b.limit)
		return 0, b.err
	}
	n, err := b.w.Write(p)
	b.n += int64(n)
	return n, err
}

// declaredSize is the size an SQLite header declares, when it is valid.
func declaredSize(h []byte) (int64, bool) {
	if !bytes.HasPrefix(h, sqliteMagic) {
		return 0, false
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if !bytes.Equal(h[92:96], h[24:28]) || pages == 0 || pageSize < 512 {
		return 0, false
	}
	return pageSize * pages, true
}

// expandTo writes what open makes of the compressed file src to dst
// within the bounds above and returns the SHA-256 of src. On any error
// dst is removed.
func expandTo(src, dst string, open func(io.Reader) (io.ReadCloser, error)) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	dec, err := open(bufio.NewReaderSize(io.TeeReader(in, h), 256<<10))
	if err != nil {
		return "", err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", errors.Join(err, dec.Close())
	}
	bw := &boundedFile{w: out, limit: sheet.ExpandCap(st.Size(), MaxTenantFile, expandRatio)}
	_, err = io.Copy(bw, dec)
	if err == nil {
		_, err = io.Copy(h, in) // hash trailing bytes, if any
	}
	if err = errors.Join(err, dec.Close(), out.Close()); err != nil {
		removeAll(dst)
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// decompressTo writes the plain tenant file of a stored (zstd) backup to
// dst and returns the SHA-256 of the stored file.
func decompressTo(src, dst string) (string, error) {
	return expandTo(src, dst, func(r io.Reader) (io.ReadCloser, error) {
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	})
}

// gunzipTo writes the plain tenant file of a gzip upload to dst.
func gunzipTo(src, dst string) error {
	_, err := expandTo(src, dst, func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) })
	return err
}
