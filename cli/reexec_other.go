//go:build !unix

package cli

import (
	"errors"
	"os"
)

func reexec(...string) error {
	return errors.New("promoted: start xr serve again (it comes back as the primary)")
}

func closeOnExec(int) {}

func inheritable(*os.File) (int, error) {
	return 0, errors.New("no handover of sockets on this system")
}
