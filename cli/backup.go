package cli

import (
	"context"
	"fmt"
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
	var tenant, from string
	var force bool
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "replace one tenant's data with a backup file, atomically (safe while xr serve runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" {
				return app.ErrValidation("from_required", "from")
			}
			abs, _ := filepath.Abs(from)
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				if err := a.RestoreTenant(context.Background(), t, abs, force); err != nil {
					return err
				}
				g.print(map[string]any{"tenant": t.Slug, "file": abs}, fmt.Sprintf("restored %s from %s", t.Slug, abs))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&from, "from", "", "backup file")
	cmd.Flags().BoolVar(&force, "force-other-tenant", false, "restore a backup taken from another tenant")
	required(cmd, "tenant", "from")
	return cmd
}
