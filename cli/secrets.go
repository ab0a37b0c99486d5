package cli

import (
	"bufio"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"xr/app"
)

// secretSource says where a secret may come from besides its flag (which
// is visible to other users of the machine in the process list): standard
// input with --<flag>-stdin, or an environment variable (env, may be "").
type secretSource struct {
	flag  string // the plain flag, e.g. "admin-password"
	value string // its value
	stdin bool   // --<flag>-stdin was given
	env   string // environment variable consulted when neither is given
}

// addStdinFlag registers --<flag>-stdin.
func (s *secretSource) addStdinFlag(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&s.stdin, s.flag+"-stdin", false, "read --"+s.flag+" from the first line of standard input")
}

// resolve returns the secret and whether one was given: the flag, else
// standard input, else the environment. The flag and --<flag>-stdin
// together are refused (conflicting_flags); standard input that holds no
// line is refused (stdin_empty).
func (s *secretSource) resolve(cmd *cobra.Command, in io.Reader) (string, bool, error) {
	changed := cmd.Flags().Changed(s.flag)
	switch {
	case changed && s.stdin:
		return "", false, app.ErrValidation("conflicting_flags", s.flag+"-stdin")
	case changed:
		return s.value, true, nil
	case s.stdin:
		v, err := readSecretLine(in)
		if err != nil {
			return "", false, err
		}
		if v == "" {
			return "", false, app.ErrValidation("stdin_empty", s.flag+"-stdin")
		}
		return v, true, nil
	case s.env != "":
		if v, ok := os.LookupEnv(s.env); ok {
			return v, true, nil
		}
	}
	return "", false, nil
}

// readSecretLine reads the first line of r without its line ending.
func readSecretLine(r io.Reader) (string, error) {
	if r == nil {
		return "", nil
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
