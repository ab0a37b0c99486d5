//go:build unix

package replica

import (
	"os"

	"golang.org/x/sys/unix"
)

// SQLite's lock bytes (os_unix.c): a writer holds PENDING and the whole
// SHARED range, so no reader of another process is inside the file while
// its pages change, and none starts before they are all written.
const (
	sqlitePendingByte = 0x40000000
	sqliteSharedFirst = sqlitePendingByte + 2
	sqliteSharedSize  = 510
)

// lockExclusive waits for SQLite's readers of f to finish and keeps new
// ones out until unlock.
func lockExclusive(f *os.File) error {
	if err := fcntlLock(f, unix.F_WRLCK, sqlitePendingByte, 1); err != nil {
		return err
	}
	if err := fcntlLock(f, unix.F_WRLCK, sqliteSharedFirst, sqliteSharedSize); err != nil {
		_ = fcntlLock(f, unix.F_UNLCK, sqlitePendingByte, 1)
		return err
	}
	return nil
}

func unlock(f *os.File) error {
	err := fcntlLock(f, unix.F_UNLCK, sqliteSharedFirst, sqliteSharedSize)
	if err2 := fcntlLock(f, unix.F_UNLCK, sqlitePendingByte, 1); err == nil {
		err = err2
	}
	return err
}

func fcntlLock(f *os.File, typ int16, start, n int64) error {
	l := unix.Flock_t{Type: typ, Whence: 0, Start: start, Len: n}
	return unix.FcntlFlock(f.Fd(), unix.F_SETLKW, &l)
}
