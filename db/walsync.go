package db

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// walSync makes commits durable by fsyncing the WAL file after them, one
// fsync for every commit that finished before it started (group commit).
type walSync struct {
	path      string
	committed atomic.Uint64 // commits finished
	mu        sync.Mutex    // serialises fsyncs
	synced    uint64        // commits known to be on disk
	f         *os.File
	fsyncs    atomic.Uint64 // fsyncs made (tests check the grouping)
}

// sync returns once the caller's commit (already finished) is on disk.
func (w *walSync) sync() error {
	mine := w.committed.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.synced >= mine {
		return nil // a later fsync already covered this commit
	}
	target := w.committed.Load()
	if err := w.fsync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	w.synced = target
	w.fsyncs.Add(1)
	return nil
}

// fsync syncs the current WAL file. SQLite keeps the same file while
// connections are open but deletes and recreates it when the last one
// closes, so the handle is reopened when the name points elsewhere.
func (w *walSync) fsync() error {
	st, err := os.Stat(w.path)
	if err != nil {
		if os.IsNotExist(err) {
			// No WAL: everything was checkpointed into the database file,
			// which SQLite synced at the checkpoint.
			return nil
		}
		return err
	}
	if w.f != nil {
		if fst, err := w.f.Stat(); err != nil || !os.SameFile(st, fst) {
			w.f.Close()
			w.f = nil
		}
	}
	if w.f == nil {
		if w.f, err = os.OpenFile(w.path, os.O_RDWR, 0); err != nil {
			return err
		}
	}
	return w.f.Sync()
}

func (w *walSync) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}
