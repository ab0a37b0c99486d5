package app

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"xr/db"
)

// storageHealth remembers which database files refused a write for lack of
// space (SQLITE_FULL). A failed write sets a file's flag; a later successful
// write, or the periodic probe (RunStorageProbe), clears it once the file has
// room again. Writes are never held back by the flag: it only reports, so
// everything resumes by itself once space is freed.
type storageHealth struct {
	mu       sync.Mutex
	full     map[string]time.Time // "instance" or a tenant slug → since
	failures atomic.Int64         // writes refused with SQLITE_FULL since start
}

// StorageStatus is what /readyz and /metrics report.
type StorageStatus struct {
	Full     []string `json:"full"`     // files refusing writes: "instance" or tenant slugs
	Failures int64    `json:"failures"` // writes refused for lack of space since start
}

// StorageStatus lists the files that are out of space now.
func (a *App) StorageStatus() StorageStatus {
	s := &a.storage
	s.mu.Lock()
	out := StorageStatus{Full: make([]string, 0, len(s.full)), Failures: s.failures.Load()}
	for name := range s.full {
		out.Full = append(out.Full, name)
	}
	s.mu.Unlock()
	sort.Strings(out.Full)
	return out
}

func (a *App) fileName(d *db.DB) string {
	if d == a.Inst {
		return "instance"
	}
	return strings.TrimSuffix(filepath.Base(d.Path), ".db")
}

// observeWrite is every file's db.DB.Observe.
func (a *App) observeWrite(d *db.DB, err error) {
	s := &a.storage
	switch {
	case db.IsFull(err):
		s.failures.Add(1)
		name := a.fileName(d)
		s.mu.Lock()
		_, was := s.full[name]
		if !was {
			if s.full == nil {
				s.full = map[string]time.Time{}
			}
			s.full[name] = time.Now()
		}
		s.mu.Unlock()
		if !was {
			a.Log.Error("storage full: writes to this database are refused until space is freed", "file", name, "err", err)
		}
	case err == nil:
		name := a.fileName(d)
		s.mu.Lock()
		_, was := s.full[name]
		s.mu.Unlock()
		if was {
			a.probeFile(context.Background(), name, d)
		}
	}
}

// probeFile clears name's flag when d has room again.
func (a *App) probeFile(ctx context.Context, name string, d *db.DB) {
	ok, err := d.HasRoom(ctx)
	if err != nil || !ok {
		return
	}
	s := &a.storage
	s.mu.Lock()
	since, was := s.full[name]
	delete(s.full, name)
	s.mu.Unlock()
	if was {
		a.Log.Info("storage has room again: writes resume", "file", name, "full_for", time.Since(since).Round(time.Second).String())
	}
}

// ProbeStorage checks every file flagged full once and clears the flags of
// those that have room again.
func (a *App) ProbeStorage(ctx context.Context) {
	for _, name := range a.StorageStatus().Full {
		if name == "instance" {
			a.probeFile(ctx, name, a.Inst)
			continue
		}
		d, release, err := a.Pool.Acquire(name, false)
		if err != nil {
			// Deleted meanwhile: nothing left to report.
			if _, ok := a.TenantBySlug(name); !ok {
				a.storage.mu.Lock()
				delete(a.storage.full, name)
				a.storage.mu.Unlock()
			}
			continue
		}
		a.probeFile(ctx, name, d)
		release()
	}
}

// RunStorageProbe runs ProbeStorage once an interval until ctx ends, so the
// flag clears even when no write arrives after space was freed.
func (a *App) RunStorageProbe(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.ProbeStorage(ctx)
		}
	}
}
