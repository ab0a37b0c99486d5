// Package cli holds xr's cobra commands. Every command takes --data (env
// XR_DATA) and --json for scripts.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/modules"
)

type globals struct {
	data          string
	masterKeyFile string // --master-key-file; else env XR_MASTER_KEY
	json          bool
	logLevel      string
	in            io.Reader // standard input, for secrets read with --*-stdin
	out           io.Writer
	errOut        io.Writer
	// mayCreate lets open create a new instance in an empty or missing data
	// directory: only serve --init, tenant create and demo set it.
	mayCreate bool
}

// Execute runs the command line and returns the exit code.
func Execute() int { return RunIO(os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }

// Run runs xr with args and no standard input (tests call it directly).
func Run(args []string, stdout, stderr io.Writer) int {
	return RunIO(args, strings.NewReader(""), stdout, stderr)
}

// RunIO runs xr with args and the given standard streams, and returns the
// exit code: 0, 1 for a failure, 2 for a usage mistake (see errors.go).
func RunIO(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err != nil {
		return report(cmd, err, wantsJSON(args), stdout, stderr)
	}
	return 0
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{in: stdin, out: stdout, errOut: stderr}
	root := &cobra.Command{
		Use:           "xr",
		Short:         "xr: subscriber management, RADIUS and billing for small ISPs in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	def := os.Getenv("XR_DATA")
	if def == "" {
		def = "./xr-data"
	}
	root.PersistentFlags().StringVar(&g.data, "data", def, "data directory (env XR_DATA)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print one JSON object on stdout (errors too)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "debug, info, warn or error")
	root.PersistentFlags().StringVar(&g.masterKeyFile, "master-key-file", "",
		"file holding the master key that wraps the instance keys, kept outside the data directory (else env XR_MASTER_KEY)")
	root.AddCommand(serveCmd(g), tenantCmd(g), nasCmd(g), backupCmd(g), restoreCmd(g), demoCmd(g), versionCmd(g), replicaCmd(g), promoteCmd(g))
	for _, extra := range areaCommands {
		root.AddCommand(extra(g))
	}
	return root
}

// group makes cmd a command of subcommands that refuses an unknown
// subcommand with suggestions (cobra would print the help and exit 0).
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's own default for the root
		}
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return errors.New(msg)
	}
	return cmd
}

// required marks flags as required: cobra refuses the command without
// them (flag_required) and the help says so.
func required(cmd *cobra.Command, names ...string) {
	for _, n := range names {
		f := cmd.Flags().Lookup(n)
		if f == nil {
			panic("required: no flag --" + n)
		}
		f.Usage += " (required)"
		if err := cmd.MarkFlagRequired(n); err != nil {
			panic(err)
		}
	}
}

func (g *globals) logger() *slog.Logger {
	lvl := slog.LevelInfo
	switch strings.ToLower(g.logLevel) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(g.errOut, &slog.HandlerOptions{Level: lvl}))
}

// open opens the data directory for a one-shot command. A directory that
// holds no instance is refused (a mistyped --data would otherwise become a
// new, empty instance) unless the command creates one (mayCreate).
func (g *globals) open(cfg app.Config) (*app.App, error) {
	if err := g.requireInstance(); err != nil {
		return nil, err
	}
	cfg.DataDir = g.data
	if cfg.MasterKey == nil {
		k, err := g.masterKey()
		if err != nil {
			return nil, err
		}
		cfg.MasterKey = k
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(g.errOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return modules.Open(cfg)
}

// requireInstance refuses a data directory without instance.db, unless
// the command may create the instance.
func (g *globals) requireInstance() error {
	if g.mayCreate {
		return nil
	}
	st, err := os.Stat(filepath.Join(g.data, "instance.db"))
	if err == nil && st.Mode().IsRegular() {
		return nil
	}
	return app.ErrValidation("no_instance", "data").With("data", g.data)
}

// print writes v as JSON with --json, else the text form.
func (g *globals) print(v any, text string) {
	if g.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(g.out, string(b))
		return
	}
	fmt.Fprintln(g.out, text)
}

func versionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the release version",
		RunE: func(cmd *cobra.Command, args []string) error {
			g.print(map[string]string{"version": app.Version}, "xr "+app.Version)
			return nil
		},
	}
}
