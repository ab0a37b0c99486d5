//go:build unix

package cli

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// reexec replaces this process with a new run of the same binary and
// arguments (same process id: a supervisor sees no exit), with env added
// to the environment.
func reexec(env ...string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	environ := os.Environ()
	for _, e := range env {
		if e != "" {
			environ = append(environ, e)
		}
	}
	return syscall.Exec(exe, os.Args, environ)
}

func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// inheritable lets f's descriptor survive the exec (Go opens every
// descriptor close-on-exec) and returns its number. Not through f.Fd,
// which would turn the socket, shared with the listener still serving,
// to blocking mode.
func inheritable(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var fd int
	var ferr error
	if err := rc.Control(func(d uintptr) {
		fd = int(d)
		_, ferr = unix.FcntlInt(d, unix.F_SETFD, 0)
	}); err != nil {
		return 0, err
	}
	return fd, ferr
}
