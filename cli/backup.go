package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"xr/app"
)

func backupCmd(g *globals) *cobra.Command {
	var tenant, out string
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "write a consistent snapshot of one tenant (safe while xr serve runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return app.ErrValidation("out_required", "out")
			}
			abs, _ := filepath.Abs(out)
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				if err := a.BackupTenant(context.Background(), t, abs); err != nil {
					return err
				}
				g.print(map[string]any{"tenant": t.Slug, "file": abs}, fmt.Sprintf("backed up %s to %s", t.Slug, abs))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&out, "out", "", "file to write (must not exist)")
	required(cmd, "tenant", "out")
	return cmd
}

func restoreCmd(g *globals) *cobra.Command {
	var tenant, from, sourceData, sourceMaster string
	var force bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "replace one tenant's data with a backup file, atomically (safe while xr serve runs)",
		Long: "replace one tenant's data with a backup file, atomically (safe while xr serve runs).\n\n" +
			"A backup taken on another instance holds secrets sealed under that instance's keys: it is refused\n" +
			"(backup_sealed_with_other_keys) unless --source-data names that instance's data directory (and\n" +
			"--source-master-key-file its master key when its keys are wrapped): its secrets are then re-sealed\n" +
			"under this instance's key in the copy restored (the file given is not changed).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return app.ErrValidation("from_required", "from")
			}
			abs, _ := filepath.Abs(from)
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				ctx := context.Background()
				file, resealed := abs, 0
				if sourceData != "" {
					tmp, n, err := resealedCopy(ctx, a, abs, sourceData, sourceMaster)
					if err != nil {
						return err
					}
					defer removeFile(tmp)
					file, resealed = tmp, n
				}
				if err := a.RestoreTenant(ctx, t, file, force); err != nil {
					return err
				}
				g.print(map[string]any{"tenant": t.Slug, "file": abs, "resealed": resealed},
					fmt.Sprintf("restored %s from %s (%d secrets re-sealed)", t.Slug, abs, resealed))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&from, "from", "", "backup file")
	cmd.Flags().BoolVar(&force, "force-other-tenant", false, "restore a backup taken from another tenant")
	cmd.Flags().StringVar(&sourceData, "source-data", "", "data directory of the instance the backup was taken on: its secrets are re-sealed under this instance's key")
	cmd.Flags().StringVar(&sourceMaster, "source-master-key-file", "", "master key of the --source-data instance, when its keys are wrapped")
	required(cmd, "tenant", "from")
	return cmd
}

// resealedCopy copies the backup at src next to the tenant files and
// re-seals its secrets from the keys of the instance at sourceData; a
// value none of them opens refuses it.
func resealedCopy(ctx context.Context, a *app.App, src, sourceData, sourceMaster string) (string, int, error) {
	var master []byte
	if sourceMaster != "" {
		var err error
		if master, err = readMasterKeyFile(sourceMaster, sourceData, "--source-master-key-file"); err != nil {
			return "", 0, err
		}
	}
	keys, err := app.ReadSealingKeys(ctx, sourceData, master)
	if err != nil {
		return "", 0, err
	}
	in, err := os.Open(src)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Join(a.Cfg.DataDir, "tenants"), ".restore-*.db")
	if err != nil {
		return "", 0, err
	}
	_, err = io.Copy(out, in)
	if err = errors.Join(err, out.Close()); err != nil {
		removeFile(out.Name())
		return "", 0, err
	}
	n, unreadable, err := a.ResealFile(ctx, out.Name(), keys)
	if err == nil && unreadable > 0 {
		err = app.ErrSealedWithOtherKeys("from", unreadable)
	}
	if err != nil {
		removeFile(out.Name())
		return "", 0, err
	}
	return out.Name(), n, nil
}

// removeFile removes a temporary copy and its SQLite side files.
func removeFile(p string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(p + s) // a temporary copy: best effort
	}
}
