//go:build !unix

package cli

import "errors"

func reexec() error {
	return errors.New("promoted: start xr serve again (it comes back as the primary)")
}
