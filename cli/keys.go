package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/modules"
)

// masterKey reads the master key from --master-key-file, else XR_MASTER_KEY;
// nil when neither is set.
func (g *globals) masterKey() ([]byte, error) {
	if g.masterKeyFile != "" {
		return readMasterKeyFile(g.masterKeyFile, g.data, "--master-key-file")
	}
	if env := os.Getenv("XR_MASTER_KEY"); env != "" {
		k, err := app.ParseMasterKey([]byte(env))
		if err != nil {
			return nil, fmt.Errorf("XR_MASTER_KEY: %w", err)
		}
		return k, nil
	}
	return nil, nil
}

// readMasterKeyFile reads a key file that must live outside the data
// directory: a copy of the directory must not carry its key.
func readMasterKeyFile(path, dataDir, flag string) ([]byte, error) {
	absKey, err1 := filepath.Abs(path)
	absData, err2 := filepath.Abs(dataDir)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(absData, absKey); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("%s %s: the master key must live outside the data directory", flag, path)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	k, err := app.ParseMasterKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return k, nil
}

// openWithMaster opens the instance with exactly this master key (nil: none).
func (g *globals) openWithMaster(master []byte) (*app.App, error) {
	if err := g.requireInstance(); err != nil {
		return nil, err
	}
	return modules.Open(app.Config{DataDir: g.data, MasterKey: master,
		Logger: slog.New(slog.NewTextHandler(g.errOut, &slog.HandlerOptions{Level: slog.LevelWarn}))})
}

func keysCmd(g *globals) *cobra.Command {
	c := group(&cobra.Command{Use: "keys", Short: "instance keys: status, rotation, wrapping under a master key"})
	c.AddCommand(keysStatusCmd(g), keysRotateCmd(g), keysWrapCmd(g), keysUnwrapCmd(g), keysGenerateCmd(g))
	return c
}

func keysStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "say whether the instance keys are wrapped and which key seals each stored secret",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			master, err := g.masterKey()
			if err != nil {
				return err
			}
			if err := g.requireInstance(); err != nil {
				return err
			}
			st, err := app.InspectKeys(cmd.Context(), g.data, master)
			if err != nil {
				return err
			}
			if st.Opens {
				a, err := g.openWithMaster(master)
				if err != nil {
					return err
				}
				defer a.Close()
				if st, err = a.KeyStatus(cmd.Context()); err != nil {
					return err
				}
			}
			var b strings.Builder
			if st.Wrapped {
				b.WriteString("keys: wrapped by a master key")
			} else {
				b.WriteString("keys: NOT wrapped (stored plain in instance.db; see xr keys wrap)")
			}
			if st.Opens {
				fmt.Fprintf(&b, "\nsealed secrets: %d under the current key, %d under a retired key, %d unreadable", st.SealedCurrent, st.SealedPrevious, st.SealedUnusable)
			} else {
				fmt.Fprintf(&b, "\ncannot open the keys: %s", st.Problem)
			}
			if st.PreviousKeys > 0 {
				fmt.Fprintf(&b, "\nretired sealing keys kept: %d (a rotation did not finish: run xr keys rotate)", st.PreviousKeys)
			}
			g.print(st, b.String())
			return nil
		},
	}
}

func keysRotateCmd(g *globals) *cobra.Command {
	var settle time.Duration
	c := &cobra.Command{
		Use:   "rotate",
		Short: "re-seal every stored secret under a new encryption key (safe while xr serve runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			if settle == 0 {
				settle = -1
			}
			rep, err := a.RotateKeys(cmd.Context(), app.RotateOptions{Settle: settle})
			if err != nil {
				return err
			}
			text := fmt.Sprintf("rotated: %d secrets re-sealed in %d tenants", rep.Resealed, rep.Tenants)
			if rep.Unreadable > 0 {
				text += fmt.Sprintf("; %d values no key opens were left as they were", rep.Unreadable)
			}
			if rep.PreviousKept {
				text += "; the previous key is kept because values kept arriving under it: run xr keys rotate again"
			}
			g.print(rep, text)
			return nil
		},
	}
	c.Flags().DurationVar(&settle, "settle", 3*time.Second, "wait after installing the new key, so a running server switches before re-sealing (0: none)")
	return c
}

func keysWrapCmd(g *globals) *cobra.Command {
	var oldFile string
	c := &cobra.Command{
		Use:   "wrap",
		Short: "wrap the instance keys under the master key of --master-key-file / XR_MASTER_KEY",
		Long: "Wraps the instance keys under the master key given by --master-key-file (or XR_MASTER_KEY). Keys already wrapped\n" +
			"are re-wrapped when --old-master-key-file names the key they are wrapped under now. The keys themselves do not\n" +
			"change; restart xr serve with the master key afterwards (it refuses to start without it).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			master, err := g.masterKey()
			if err != nil {
				return err
			}
			if master == nil {
				return errors.New("xr keys wrap needs the master key: --master-key-file FILE or XR_MASTER_KEY")
			}
			var old []byte
			if oldFile != "" {
				if old, err = readMasterKeyFile(oldFile, g.data, "--old-master-key-file"); err != nil {
					return err
				}
			}
			a, err := g.openWithMaster(old)
			if err != nil {
				if errors.Is(err, app.ErrMasterKeyMissing) {
					return errors.New("the instance keys are already wrapped: name the key they are wrapped under with --old-master-key-file to re-wrap them")
				}
				return err
			}
			defer a.Close()
			n, err := a.WrapKeys(cmd.Context(), master)
			if err != nil {
				return err
			}
			g.print(map[string]any{"wrapped": n}, fmt.Sprintf("wrapped %d instance keys; start xr serve with this master key from now on", n))
			return nil
		},
	}
	c.Flags().StringVar(&oldFile, "old-master-key-file", "", "the master key the instance keys are wrapped under now (to re-wrap them)")
	return c
}

func keysUnwrapCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "unwrap",
		Short: "store the instance keys plain again (needs the current master key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			if a.Cfg.MasterKey == nil {
				return errors.New("the instance keys are not wrapped")
			}
			n, err := a.WrapKeys(cmd.Context(), nil)
			if err != nil {
				return err
			}
			g.print(map[string]any{"unwrapped": n}, fmt.Sprintf("unwrapped %d instance keys; start xr serve without a master key", n))
			return nil
		},
	}
}

func keysGenerateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "generate",
		Short: "print a new random master key (store it outside the data directory)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			k := app.NewMasterKey()
			g.print(map[string]string{"master_key": k}, k)
			return nil
		},
	}
}
