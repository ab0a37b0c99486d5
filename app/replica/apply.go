package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// xr applies the replica's transactions itself rather than through
// Litestream's follow mode, which writes page 1 only when the primary
// changed it: in WAL mode the primary's commits leave page 1's change
// counter alone, so a reader of another process kept its page cache and
// read stale rows. applyLTX bumps the counter at every transaction it
// applies, under SQLite's exclusive lock.

// catchUp applies every transaction the replica holds after txid to the
// file at path and returns the last applied. Level 0 holds each shipped
// transaction: it is listed once and its chain applied in order; when its
// files were compacted away, a file of a higher level that starts at or
// before the next TXID bridges the gap. The copy is synced and its TXID
// recorded once, after the round: a crash before the record re-applies the
// same pages in the same order at the next start, which ends in the same
// state (the server reads nothing before the follower's first round).
func catchUp(ctx context.Context, client litestream.ReplicaClient, path string, txid ltx.TXID) (ltx.TXID, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return txid, err
	}
	defer f.Close()
	start := txid
	err = func() error {
		for {
			chain, err := levelZeroAfter(ctx, client, txid)
			if err != nil {
				return err
			}
			if len(chain) == 0 {
				next, err := nextFile(ctx, client, 1, txid) // level 0 was just listed
				if err != nil || next == nil {
					return err
				}
				chain = []*ltx.FileInfo{next}
			}
			for _, next := range chain {
				if next.MinTXID > txid+1 || next.MaxTXID <= txid {
					break // a gap: list again
				}
				if err := applyLTX(ctx, client, f, next); err != nil {
					return fmt.Errorf("apply %s: %w", ltx.FormatFilename(next.MinTXID, next.MaxTXID), err)
				}
				txid = next.MaxTXID
			}
		}
	}()
	if txid == start {
		return txid, err
	}
	if serr := f.Sync(); serr != nil {
		return start, errors.Join(err, serr)
	}
	return txid, errors.Join(err, litestream.WriteTXIDFile(path, txid))
}

// levelZeroAfter is level 0's files from the one that continues after
// txid on, in order (nil when level 0 has none that continues).
func levelZeroAfter(ctx context.Context, client litestream.ReplicaClient, txid ltx.TXID) ([]*ltx.FileInfo, error) {
	itr, err := client.LTXFiles(ctx, 0, 0, false)
	if err != nil {
		return nil, err
	}
	var chain []*ltx.FileInfo
	for itr.Next() {
		info := *itr.Item()
		if len(chain) > 0 || info.MinTXID <= txid+1 && info.MaxTXID > txid {
			chain = append(chain, &info)
		}
	}
	return chain, errors.Join(itr.Err(), itr.Close())
}

// nextFile is the replica's file that continues after txid, from the
// lowest level from minLevel up that has one (nil: nothing new).
func nextFile(ctx context.Context, client litestream.ReplicaClient, minLevel int, txid ltx.TXID) (*ltx.FileInfo, error) {
	for level := minLevel; level <= litestream.SnapshotLevel; level++ {
		itr, err := client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return nil, err
		}
		var found *ltx.FileInfo
		for itr.Next() {
			info := itr.Item()
			if info.MinTXID <= txid+1 && info.MaxTXID > txid {
				c := *info
				found = &c
				break
			}
		}
		if err := errors.Join(itr.Err(), itr.Close()); err != nil {
			return nil, err
		}
		if found != nil {
			return found, nil
		}
	}
	return nil, nil
}

// applyLTX writes one LTX file's pages into f under SQLite's exclusive
// lock, with the header in rollback-journal mode and a new change counter
// (so every reader drops its cache), and truncates f to the commit's size.
func applyLTX(ctx context.Context, client litestream.ReplicaClient, f *os.File, info *ltx.FileInfo) error {
	rc, err := client.OpenLTXFile(ctx, info.Level, info.MinTXID, info.MaxTXID, 0, 0)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := ltx.NewDecoder(rc)
	if err := dec.DecodeHeader(); err != nil {
		return err
	}
	hdr := dec.Header()
	if err := lockExclusive(f); err != nil {
		return err
	}
	defer func() { _ = unlock(f) }()
	var head [100]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return err
	}
	counter := binary.BigEndian.Uint32(head[24:]) + 1
	data := make([]byte, hdr.PageSize)
	for {
		var ph ltx.PageHeader
		if err := dec.DecodePage(&ph, data); err == io.EOF {
			break
		} else if err != nil {
			return err
		}
		if _, err := f.WriteAt(data, int64(ph.Pgno-1)*int64(hdr.PageSize)); err != nil {
			return err
		}
	}
	if err := dec.Close(); err != nil { // checks the file's checksum
		return err
	}
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return err
	}
	head[18], head[19] = 1, 1 // rollback journal, as the readers open it
	binary.BigEndian.PutUint32(head[24:], counter)
	binary.BigEndian.PutUint32(head[28:], hdr.Commit)
	binary.BigEndian.PutUint32(head[92:], counter) // version-valid-for: the size above is valid
	if _, err := f.WriteAt(head[:], 0); err != nil {
		return err
	}
	return f.Truncate(int64(hdr.Commit) * int64(hdr.PageSize))
}
