package sheet

import (
	"archive/zip"
	"errors"
	"io"
	"os"
)

// maxParts bounds the entries of an archive.
const maxParts = 10_000

// CheckZip checks an archive's directory before anything is inflated: at
// most maxParts entries, and the sizes they declare within ExpandCap of
// the file at p (400 archive_too_large). It returns that cap, which
// OpenEntry enforces again while reading (a size can be declared falsely).
func CheckZip(p string, zr *zip.Reader, max, ratio int64) (int64, error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, err
	}
	if len(zr.File) > maxParts {
		return 0, ErrArchiveTooLarge("parts", maxParts)
	}
	limit := ExpandCap(st.Size(), max, ratio)
	var declared uint64
	for _, f := range zr.File {
		if declared += f.UncompressedSize64; declared > uint64(limit) || f.UncompressedSize64 > uint64(limit) {
			return 0, ErrArchiveTooLarge("expanded_bytes", limit)
		}
	}
	return limit, nil
}

// OpenEntry opens an entry that inflates to at most its declared size
// and at most limit bytes (400 archive_too_large past either). Go's zip
// reader checks the declared size too; this counts for itself.
func OpenEntry(f *zip.File, limit int64) (io.ReadCloser, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	return &capReader{rc: rc, left: min(limit, int64(min(f.UncompressedSize64, 1<<62))), limit: limit}, nil
}

// capReader refuses to pass more than left bytes.
type capReader struct {
	rc    io.ReadCloser
	left  int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		if k, err := c.rc.Read(one[:]); k > 0 || err != nil && !errors.Is(err, io.EOF) {
			return 0, ErrArchiveTooLarge("expanded_bytes", c.limit)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capReader) Close() error { return c.rc.Close() }
