// Package cli holds xr's cobra commands. Every command takes --data (env
// XR_DATA) and --json for scripts.
package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
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
	out           io.Writer
	errOut        io.Writer
}

// Execute runs the command line and returns the exit code.
func Execute() int { return Run(os.Args[1:], os.Stdout, os.Stderr) }

// Run runs xr with args (tests call it directly).
func Run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "xr: "+oneLine(err))
		return 1
	}
	return 0
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{out: stdout, errOut: stderr}
	root := &cobra.Command{
		Use:           "xr",
		Short:         "xr: subscriber management, RADIUS and billing for small ISPs in one binary",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	def := os.Getenv("XR_DATA")
	if def == "" {
		def = "./xr-data"
	}
	root.PersistentFlags().StringVar(&g.data, "data", def, "data directory (env XR_DATA)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print one JSON object on stdout")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "info", "debug, info, warn or error")
	root.PersistentFlags().StringVar(&g.masterKeyFile, "master-key-file", "",
		"file holding the master key that wraps the instance keys, kept outside the data directory (else env XR_MASTER_KEY)")
	root.AddCommand(serveCmd(g), tenantCmd(g), nasCmd(g), backupCmd(g), restoreCmd(g), demoCmd(g), versionCmd(g))
	for _, extra := range areaCommands {
		root.AddCommand(extra(g))
	}
	return root
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

// open opens the data directory for a one-shot command.
func (g *globals) open(cfg app.Config) (*app.App, error) {
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

// print writes v as JSON with --json, else the text form.
func (g *globals) print(v any, text string) {
	if g.json {
		b, _ := json.Marshal(v)
		fmt.Fprintln(g.out, string(b))
		return
	}
	fmt.Fprintln(g.out, text)
}

// oneLine renders an error as the one-line reason the CLI contract wants.
func oneLine(err error) string {
	if e := app.Classify(err); e != nil {
		s := e.Reason
		if e.Field != "" {
			s += " (" + e.Field + ")"
		} else if f, ok := e.Details["field"].(string); ok {
			s += " (" + f + ")"
		}
		return s
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
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
