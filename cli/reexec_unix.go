//go:build unix

package cli

import (
	"os"
	"syscall"
)

// reexec replaces this process with a new run of the same binary and
// arguments (same process id: a supervisor sees no exit).
func reexec() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, os.Environ())
}
