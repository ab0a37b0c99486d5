package dataimport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"xr/app"
	"xr/app/files"
)

// The history is written one range of subscribers at a time. A dump's
// radacct is in time order, so a chunk of it holds sessions of nearly every
// subscriber: written as they come, each chunk dirties pages across the
// whole of radius_sessions' (user_id, id) indexes, and the cost of a chunk
// grows with the sessions already stored (measured: 5,000,000 rows took
// 114 s, against 65 s by ranges). So the dump is read once into spool
// files, one per range of subscriber ids, in a compact form; each file is
// then written in turn, its sessions still in time order (which keeps the
// (nas_id, acct_session_id) index local too). A range is about
// spoolPassChunks chunks of sessions.
//
// The checkpoint counts sessions in that order (the ranges in turn, each
// in the dump's order), which is the same on every run of the same job:
// the ranges come from the phase's subscribers (fixed by historyBegin) and
// the analysed radacct count. A resumed job spools the dump again and goes
// on after its checkpoint.

// spoolPassChunks is the chunks of sessions of one range, on average.
const spoolPassChunks = 10

// spoolMaxPasses bounds the spool files open at once.
const spoolMaxPasses = 64

// spool is the radacct rows of the phase's subscribers, by range.
type spool struct {
	dir     string
	bounds  []int64 // the first subscriber id of each range but the first
	files   []*os.File
	w       []*bufio.Writer
	rows    []int64 // sessions spooled per range
	skipped int64   // radacct rows without a subscriber of the phase or a start
}

// spoolDir is the run's spool directory, under the tenant's files (the
// upload's disk); a crashed run's leftovers are removed by the next.
func spoolDir(t *app.Tenant, runID int64) string {
	return filepath.Join(t.App.FilesDir(t.Slug), "work", "history-"+strconv.FormatInt(runID, 10))
}

// spoolHistory reads the upload's radacct once into the spool: ranges of
// about passRows of the analysed sessions each.
func spoolHistory(hr *historyRun, f *files.File, sessions, passRows int) (*spool, error) {
	t := hr.t
	passes := min(max((sessions+passRows-1)/passRows, 1), spoolMaxPasses, max(len(hr.users), 1))
	ids := make([]int64, 0, len(hr.users))
	for _, id := range hr.users {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	sp := &spool{dir: spoolDir(t, hr.runID), rows: make([]int64, passes)}
	for k := 1; k < passes; k++ {
		sp.bounds = append(sp.bounds, ids[len(ids)*k/passes])
	}
	if err := os.RemoveAll(sp.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(sp.dir, 0o700); err != nil {
		return nil, err
	}
	for k := range passes {
		fh, err := os.Create(filepath.Join(sp.dir, strconv.Itoa(k)))
		if err != nil {
			sp.remove()
			return nil, err
		}
		sp.files = append(sp.files, fh)
		sp.w = append(sp.w, bufio.NewWriterSize(fh, 256<<10))
	}
	if err := sp.fill(hr, f); err != nil {
		sp.remove()
		return nil, err
	}
	return sp, nil
}

// fill streams the dump's radacct into the range files.
func (sp *spool) fill(hr *historyRun, f *files.File) error {
	src, cl, err := openFreeRADIUS(files.Path(hr.t, f), f.Name, "radacct", nil, streamLimits(hr.t.App))
	if err != nil {
		return err
	}
	defer cl.Close()
	if d, ok := src.(*sqlDump); ok {
		d.keep = acctKeep // the columns the history reads, no others built
	}
	var ix acctIndex
	var buf []byte
	for {
		row, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if row.Table != "radacct" {
			continue
		}
		ix.resolve(row.Cols)
		uid, ok := hr.users[ix.get(row, acUser)]
		if !ok {
			sp.skipped++
			continue
		}
		s, ok := sessionOf(&ix, row)
		if !ok {
			sp.skipped++
			continue
		}
		k := sort.Search(len(sp.bounds), func(i int) bool { return sp.bounds[i] > uid })
		buf = encodeSession(buf[:0], uid, &s)
		if _, err := sp.w[k].Write(buf); err != nil {
			return err
		}
		sp.rows[k]++
	}
	for k, w := range sp.w {
		if err := w.Flush(); err != nil {
			return err
		}
		if _, err := sp.files[k].Seek(0, io.SeekStart); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the spool's files.
func (sp *spool) remove() {
	for _, fh := range sp.files {
		fh.Close()
	}
	_ = os.RemoveAll(sp.dir) // best effort: the next run of the job removes it too
}

// reader reads range k's sessions back, in the order they were spooled.
func (sp *spool) reader(k int) *spoolReader {
	return &spoolReader{r: bufio.NewReaderSize(sp.files[k], 256<<10), left: sp.rows[k]}
}

type spoolReader struct {
	r    *bufio.Reader
	left int64
	str  []byte
}

// next reads one session; io.EOF after the range's last.
func (sr *spoolReader) next() (histRow, error) {
	var h histRow
	if sr.left == 0 {
		return h, io.EOF
	}
	sr.left--
	var err error
	u := func() int64 {
		var v uint64
		if err == nil {
			v, err = binary.ReadUvarint(sr.r)
		}
		return int64(v)
	}
	v := func() int64 {
		var v int64
		if err == nil {
			v, err = binary.ReadVarint(sr.r)
		}
		return v
	}
	str := func() string {
		n := u()
		if err != nil || n == 0 {
			return ""
		}
		if int64(cap(sr.str)) < n {
			sr.str = make([]byte, n)
		}
		b := sr.str[:n]
		_, err = io.ReadFull(sr.r, b)
		return string(b)
	}
	s := &h.s
	h.uid = u()
	s.start, s.update, s.stop = v(), v(), v()
	s.secs, s.in, s.out = u(), u(), u()
	s.sid, s.user, s.nasIP, s.port, s.framed, s.prefix, s.calling, s.cause = str(), str(), str(), str(), str(), str(), str(), str()
	s.hour = s.start - s.start%3600
	if err != nil {
		return h, fmt.Errorf("history spool: %w", err) // a short file is not the end of the range
	}
	return h, nil
}

// encodeSession appends a session's spool record.
func encodeSession(b []byte, uid int64, s *session) []byte {
	b = binary.AppendUvarint(b, uint64(uid))
	b = binary.AppendVarint(b, s.start)
	b = binary.AppendVarint(b, s.update)
	b = binary.AppendVarint(b, s.stop)
	b = binary.AppendUvarint(b, uint64(s.secs))
	b = binary.AppendUvarint(b, uint64(s.in))
	b = binary.AppendUvarint(b, uint64(s.out))
	for _, v := range [...]string{s.sid, s.user, s.nasIP, s.port, s.framed, s.prefix, s.calling, s.cause} {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}
