package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"
)

// A standby keeps copies of the primary's files up to date in a process
// of its own (xr replica follow, started by xr serve --standby-of): the
// follower writes the replica's pages into each file under SQLite's POSIX
// fcntl locks (apply.go), which do not exclude the same process's SQLite
// connections. The serving process opens the copies read-only
// (db.CheckpointFollowed) and learns how far they are from the status file
// the follower rewrites (StatusPath).

// FollowOptions tune a follower; the zero value is what xr uses.
type FollowOptions struct {
	// Every is how often the replica is polled for new transactions and
	// new tenant files, and the status file rewritten (default 1 s).
	Every time.Duration
	Log   *slog.Logger
}

// FileStatus is how far the copy of one file is.
type FileStatus struct {
	TXID uint64 `json:"txid"` // the last transaction applied
	// Commit is when the primary committed the last applied transaction
	// (the LTX file's timestamp); zero before the first is known.
	Commit time.Time `json:"commit"`
	// Pending is when the primary committed the oldest transaction the
	// replica holds and the copy has not applied yet; zero when caught up.
	Pending time.Time `json:"pending,omitzero"`
}

// Status is the follower's report, rewritten atomically at every poll.
type Status struct {
	From    string                `json:"from"`
	Gen     uint64                `json:"generation"` // the generation followed (0: none stamped yet)
	Checked time.Time             `json:"checked"`    // when the replica was last polled
	Files   map[string]FileStatus `json:"files"`      // by path relative to the data directory
	// Beat is the primary's newest heartbeat seen (heartbeat.go) and
	// BeatSeen when this follower saw it change (or began following).
	Beat     uint64    `json:"heartbeat,omitempty"`
	BeatSeen time.Time `json:"heartbeat_seen,omitzero"`
	// ReplicaErr: the last poll could not read the replica's stamp or
	// heartbeat.
	ReplicaErr string `json:"replica_error,omitempty"`
}

// StatusPath is where a standby's follower writes its Status.
func StatusPath(dataDir string) string { return filepath.Join(dataDir, "standby", "follow.json") }

// ReadStatus reads the follower's last Status.
func ReadStatus(dataDir string) (Status, error) {
	var st Status
	b, err := os.ReadFile(StatusPath(dataDir))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

// Lag is how far the standby is behind the primary at now, as far as the
// replica shows: the age of the oldest transaction the replica holds that
// a copy has not applied yet (0 when every copy is caught up). A follower
// that stopped polling counts from its last poll. The primary's commits
// not yet shipped to the replica are invisible here (the primary ships
// every second).
func (st Status) Lag(now time.Time) time.Duration {
	lag := max(0, now.Sub(st.Checked)-2*time.Second) // a poll may be a second or two old
	for _, f := range st.Files {
		if !f.Pending.IsZero() {
			lag = max(lag, now.Sub(f.Pending))
		}
	}
	return lag
}

// LastCommit is the primary's newest commit the standby has applied.
func (st Status) LastCommit() time.Time {
	var t time.Time
	for _, f := range st.Files {
		if f.Commit.After(t) {
			t = f.Commit
		}
	}
	return t
}

// Follow restores every file of the replica missing under dataDir and
// follows each (instance.db, tenants/*.db, including tenant files that
// appear later) until ctx ends, then applies what the replica holds once
// more. A file already under dataDir must be a
// followed copy (Litestream's <file>-txid beside it): a primary's data
// directory is refused, never overwritten.
func Follow(ctx context.Context, target Target, dataDir string, opt FollowOptions) error {
	if opt.Every <= 0 {
		opt.Every = time.Second
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	f := &follower{target: target, dataDir: dataDir, opt: opt, files: map[string]*followed{}, beatSeen: time.Now().UTC()}
	if err := os.MkdirAll(filepath.Join(dataDir, "tenants"), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(StatusPath(dataDir)), 0o700); err != nil {
		return err
	}
	t := time.NewTicker(opt.Every)
	defer t.Stop()
	for {
		if err := f.poll(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			// A last catch-up: a standby being promoted stops its
			// follower and must hold everything the replica holds.
			last, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return f.poll(last)
		case <-t.C:
		}
	}
}

type follower struct {
	target  Target
	dataDir string
	opt     FollowOptions
	files   map[string]*followed // by rel

	beat     uint64    // the primary's newest heartbeat seen
	beatSeen time.Time // when it changed (at first: when following began)
}

// followed is one file being followed.
type followed struct {
	rel    string
	client litestream.ReplicaClient
	st     FileStatus
}

// errGenerationMoved stops a follower whose replica another box took over
// (its copies are of the generation before: they cannot continue).
var errGenerationMoved = errors.New("another box took the replica over (a standby was promoted): this standby's copies are of the generation before; re-join it on an empty data directory")

// poll restores the replica's new files, applies what the replica holds
// beyond each copy, and rewrites the status. It follows the generation
// the replica's stamp names at its first poll that finds one.
func (f *follower) poll(ctx context.Context) error {
	stamp, ok, err := ReadStamp(ctx, f.target)
	readErr := err
	switch {
	case err != nil:
		f.opt.Log.Error("read the replica's generation", "err", err)
	case !ok: // the primary has not stamped it yet
		return writeStatus(f.dataDir, Status{From: f.target.URL, Checked: time.Now().UTC(), Files: map[string]FileStatus{}})
	case f.target.gen == 0:
		f.target = f.target.InGeneration(stamp.Gen)
	case stamp.Gen != f.target.gen:
		return fmt.Errorf("%w (generation %d, now %d)", errGenerationMoved, f.target.gen, stamp.Gen)
	}
	if f.target.gen == 0 {
		return nil
	}
	rels, err := f.target.files(ctx)
	if err != nil {
		f.opt.Log.Error("list the replica's files", "err", err)
	}
	for _, rel := range rels {
		if f.files[rel] != nil {
			continue
		}
		fl, err := f.start(ctx, rel)
		if err != nil {
			if errors.Is(err, ErrNothingToRestore) {
				continue // the primary has not shipped it yet
			}
			if errors.Is(err, errNotFollowed) {
				return err
			}
			f.opt.Log.Error("restore a replicated file", "file", rel, "err", err)
			continue
		}
		f.files[rel] = fl
	}
	if readErr == nil {
		readErr = f.heard(ctx)
	}
	st := Status{From: f.target.URL, Gen: f.target.gen, Checked: time.Now().UTC(), Files: map[string]FileStatus{},
		Beat: f.beat, BeatSeen: f.beatSeen}
	if readErr != nil {
		st.ReplicaErr = readErr.Error()
	}
	// The files are caught up a few at a time: each is its own file and
	// its own lock, and one round waits mostly on reads of the replica
	// and on the disk.
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, catchUpWorkers)
	for rel, fl := range f.files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			path := filepath.Join(f.dataDir, filepath.FromSlash(rel))
			txid, err := catchUp(ctx, fl.client, path, ltx.TXID(fl.st.TXID))
			if err != nil && ctx.Err() == nil {
				f.opt.Log.Error("apply the replica's transactions", "file", rel, "err", err)
			}
			fl.refresh(ctx, txid)
			mu.Lock()
			st.Files[rel] = fl.st
			mu.Unlock()
		}()
	}
	wg.Wait()
	return writeStatus(f.dataDir, st)
}

// catchUpWorkers is how many files a follower's round catches up at once.
const catchUpWorkers = 8

// heard reads the primary's heartbeat and notes when it changed.
func (f *follower) heard(ctx context.Context) error {
	b, err := lastBeat(ctx, f.target)
	if err != nil {
		f.opt.Log.Error("read the primary's heartbeat", "err", err)
		return err
	}
	if b != f.beat {
		f.beat, f.beatSeen = b, time.Now().UTC()
	}
	return nil
}

var errNotFollowed = errors.New("is not a followed copy (no Litestream -txid file beside it): a standby needs a data directory of its own")

// start restores rel if it is missing locally and reads how far the copy
// is.
func (f *follower) start(ctx context.Context, rel string) (*followed, error) {
	path := filepath.Join(f.dataDir, filepath.FromSlash(rel))
	client := f.target.client(rel)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if err := restoreForFollow(ctx, client, path); err != nil {
			return nil, fmt.Errorf("%s: %w", rel, err)
		}
	}
	txid, err := litestream.ReadTXIDFile(path)
	if err != nil || txid == 0 {
		return nil, fmt.Errorf("%s %w", path, errNotFollowed)
	}
	return &followed{rel: rel, client: client, st: FileStatus{TXID: uint64(txid)}}, nil
}

// restoreForFollow restores the replica's latest state to path in
// rollback-journal mode with its TXID beside it (Litestream's -txid
// file), so that catchUp resumes from it and a reader never sees the
// file in WAL mode. It goes
// through a temporary name: the serving process may look for the file
// (a tenant just registered) and must find it whole or not at all.
func restoreForFollow(ctx context.Context, client litestream.ReplicaClient, path string) error {
	plan, err := litestream.CalcRestorePlan(ctx, client, 0, time.Time{}, slog.Default())
	if err != nil || len(plan) == 0 {
		if errors.Is(err, litestream.ErrTxNotAvailable) || errors.Is(err, litestream.ErrNoSnapshots) || len(plan) == 0 {
			return ErrNothingToRestore
		}
		return err
	}
	txid := plan[len(plan)-1].MaxTXID
	tmp := path + ".restoring"
	for _, p := range []string{tmp, litestream.TXIDPath(tmp)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	r := litestream.NewReplicaWithClient(nil, client)
	opt := litestream.NewRestoreOptions()
	opt.OutputPath, opt.TXID, opt.IntegrityCheck = tmp, txid, litestream.IntegrityCheckQuick
	if err := r.Restore(ctx, opt); err != nil {
		return err
	}
	if err := rollbackJournalMode(tmp); err != nil {
		return err
	}
	if err := litestream.WriteTXIDFile(path, txid); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// rollbackJournalMode sets the file format bytes of a SQLite header to
// the legacy (rollback-journal) values, as applyLTX does: readers then
// lock the file itself.
func rollbackJournalMode(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt([]byte{1, 1}, 18)
	return errors.Join(err, f.Sync(), f.Close())
}

// refresh records the TXID applied and the commit times of it and of
// the first transaction not applied yet.
func (fl *followed) refresh(ctx context.Context, txid ltx.TXID) {
	if uint64(txid) != fl.st.TXID || fl.st.Commit.IsZero() {
		fl.st.TXID = uint64(txid)
		fl.st.Commit = fl.commitTime(ctx, litestream.SnapshotLevel, func(info *ltx.FileInfo) bool { return info.MaxTXID == txid })
	}
	fl.st.Pending = fl.commitTime(ctx, 0, func(info *ltx.FileInfo) bool { return info.MinTXID > txid })
}

// commitTime is the timestamp of the first LTX file that matches (the
// primary's commit time of its last transaction), from level 0 up to
// maxLevel (compacted levels, once level 0 was cleaned up).
func (fl *followed) commitTime(ctx context.Context, maxLevel int, match func(*ltx.FileInfo) bool) time.Time {
	for level := 0; level <= maxLevel; level++ {
		itr, err := fl.client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			return time.Time{}
		}
		var found *ltx.FileInfo
		for itr.Next() {
			if info := itr.Item(); match(info) {
				found = info
				break
			}
		}
		_ = itr.Close()
		if found == nil {
			continue
		}
		rc, err := fl.client.OpenLTXFile(ctx, found.Level, found.MinTXID, found.MaxTXID, 0, ltx.HeaderSize)
		if err != nil {
			return found.CreatedAt
		}
		b := make([]byte, ltx.HeaderSize)
		_, err = io.ReadFull(rc, b)
		_ = rc.Close()
		var hdr ltx.Header
		if err != nil || hdr.UnmarshalBinary(b) != nil {
			return found.CreatedAt
		}
		return time.UnixMilli(hdr.Timestamp).UTC()
	}
	return time.Time{}
}

func writeStatus(dataDir string, st Status) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	path := StatusPath(dataDir)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// files lists the files the replica holds: instance.db and tenants/*.db.
func (t Target) files(ctx context.Context) ([]string, error) {
	if t.Remote() {
		return t.remoteFiles(ctx)
	}
	var out []string
	root := filepath.Join(t.dir, filepath.FromSlash(t.genDir()))
	if _, err := os.Stat(filepath.Join(root, "instance.db")); err == nil {
		out = append(out, "instance.db")
	}
	ents, err := os.ReadDir(filepath.Join(root, "tenants"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return out, err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasSuffix(e.Name(), ".db") {
			out = append(out, "tenants/"+e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}
