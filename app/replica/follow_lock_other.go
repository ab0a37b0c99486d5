//go:build !unix

package replica

import (
	"errors"
	"os"
)

var errNoLocks = errors.New("a standby needs POSIX file locks (Linux, BSD, macOS)")

func lockExclusive(*os.File) error { return errNoLocks }

func unlock(*os.File) error { return errNoLocks }
