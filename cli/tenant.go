package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"xr/app"
	"xr/app/identity"
)

func tenantCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "tenant", Short: "create, list, show, update and delete tenants"})
	cmd.AddCommand(tenantCreateCmd(g), tenantListCmd(g), tenantShowCmd(g), tenantUpdateCmd(g), tenantDeleteCmd(g))
	return cmd
}

// licenceFlags are shared by create and update.
type licenceFlags struct {
	maxUsers, tier, expires string
}

func (l *licenceFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&l.maxUsers, "max-users", "", "licensed subscriber cap (a number, or 'unlimited'; 0 blocks the tenant)")
	cmd.Flags().StringVar(&l.tier, "tier", "", "pin the resource tier: small, medium, large, xl or max (default: derived from --max-users)")
	cmd.Flags().StringVar(&l.expires, "license-expires", "", "licence expiry date YYYY-MM-DD ('never' to clear)")
}

func parseMaxUsers(s string) (app.Opt[int64], error) {
	switch strings.ToLower(s) {
	case "":
		return app.Opt[int64]{}, nil
	case "unlimited", "none":
		return app.Opt[int64]{Set: true, Null: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return app.Opt[int64]{}, app.ErrValidation("invalid_max_users", "max-users")
	}
	return app.Opt[int64]{Set: true, V: n}, nil
}

func parseExpiry(s string) (app.Opt[app.Time], error) {
	switch strings.ToLower(s) {
	case "":
		return app.Opt[app.Time]{}, nil
	case "never":
		return app.Opt[app.Time]{Set: true, Null: true}, nil
	}
	t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
	if err != nil {
		return app.Opt[app.Time]{}, app.ErrValidation("invalid_license_expires", "license-expires")
	}
	// A licence dated D is valid through the end of D.
	return app.Opt[app.Time]{Set: true, V: app.T(t.Add(24*time.Hour - time.Second))}, nil
}

// tenantSlugArg is the tenant a command names: --tenant, or the
// positional SLUG kept as an alias; both must agree.
func tenantSlugArg(flag string, args []string) (string, error) {
	switch {
	case len(args) == 1 && flag != "" && flag != args[0]:
		return "", app.ErrValidation("conflicting_flags", "tenant")
	case len(args) == 1:
		return args[0], nil
	case flag != "":
		return flag, nil
	}
	return "", app.ErrValidation("tenant_required", "tenant")
}

func tenantCreateCmd(g *globals) *cobra.Command {
	var n app.NewTenant
	var lf licenceFlags
	pw := secretSource{flag: "admin-password", env: "XR_ADMIN_PASSWORD"}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "create a tenant, its file and its owner (administrator)",
		Long: "Creates the instance too when --data holds none. The owner's password comes from --admin-password, from the\n" +
			"first line of standard input with --admin-password-stdin, or from the environment variable XR_ADMIN_PASSWORD.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _, err := pw.resolve(cmd, g.in)
			if err != nil {
				return err
			}
			n.AdminPassword = p
			mu, err := parseMaxUsers(lf.maxUsers)
			if err != nil {
				return err
			}
			if mu.Set && !mu.Null {
				n.MaxUsers = &mu.V
			}
			exp, err := parseExpiry(lf.expires)
			if err != nil {
				return err
			}
			n.LicenseExpiresAt = exp.V
			n.Tier = lf.tier
			if err := n.Validate(); err != nil {
				return err
			}
			g.mayCreate = true
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			t, owner, err := a.CreateTenant(context.Background(), n)
			if err != nil {
				return err
			}
			g.print(map[string]any{"id": t.ID, "slug": t.Slug, "owner_id": owner},
				fmt.Sprintf("created tenant %d %s (owner manager %d)", t.ID, t.Slug, owner))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&n.Slug, "slug", "", "tenant slug [a-z0-9-]{2,40}; reached at <slug>.<domain> (alias --tenant)")
	f.StringVar(&n.Name, "name", "", "display name")
	f.StringVar(&n.AdminUsername, "admin-username", "", "owner's username")
	f.StringVar(&n.AdminEmail, "admin-email", "", "owner's email")
	f.StringVar(&pw.value, "admin-password", "", "owner's password, 8+ characters, two classes (else --admin-password-stdin or env XR_ADMIN_PASSWORD)")
	pw.addStdinFlag(cmd)
	lf.add(cmd)
	// --tenant names the tenant everywhere; here it is the new one's slug.
	f.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "tenant" {
			name = "slug"
		}
		return pflag.NormalizedName(name)
	})
	required(cmd, "slug", "name")
	return cmd
}

func tenantRow(t *app.TenantInfo) map[string]any {
	return map[string]any{"id": t.ID, "slug": t.Slug, "name": t.Name, "max_users": t.MaxUsers, "tier": t.Tier(),
		"license_expires_at": t.LicenseExpiresAt, "blocked": t.Blocked, "blocked_reason": t.BlockedReason, "created_at": t.CreatedAt}
}

func tenantListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "list tenants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Tenants(context.Background())
			if err != nil {
				return err
			}
			rows := []map[string]any{}
			var sb strings.Builder
			tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSLUG\tNAME\tMAX USERS\tTIER\tEXPIRES")
			for _, t := range list {
				rows = append(rows, tenantRow(t))
				mu := "unlimited"
				if t.MaxUsers != nil {
					mu = strconv.FormatInt(*t.MaxUsers, 10)
				}
				exp := "never"
				if !t.LicenseExpiresAt.IsZero() {
					exp = app.FormatTime(t.LicenseExpiresAt.Time)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Slug, t.Name, mu, t.Tier(), exp)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			g.print(map[string]any{"tenants": rows}, strings.TrimRight(sb.String(), "\n"))
			return nil
		},
	}
}

func tenantShowCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "show --tenant SLUG",
		Short: "show one tenant (the slug may also be given as the argument)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := tenantSlugArg(tenant, args)
			if err != nil {
				return err
			}
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			t, ok := a.TenantBySlug(slug)
			if !ok {
				return errTenantNotFound(slug)
			}
			row := tenantRow(t)
			if tt, release, err := a.Acquire(t.Slug); err == nil {
				lic, err := tt.CurrentLicense(context.Background())
				release()
				if err != nil {
					return err
				}
				row["license_status"], row["users_count"] = lic.Status, lic.UsersCount
			}
			var sb strings.Builder
			for _, k := range []string{"id", "slug", "name", "max_users", "tier", "license_expires_at", "license_status", "users_count", "blocked", "created_at"} {
				v := row[k]
				if p, ok := v.(*int64); ok {
					if p == nil {
						v = "unlimited"
					} else {
						v = *p
					}
				}
				if tm, ok := v.(app.Time); ok {
					if tm.IsZero() {
						v = "never"
					} else {
						v = app.FormatTime(tm.Time)
					}
				}
				fmt.Fprintf(&sb, "%-19s %v\n", k+":", v)
			}
			g.print(row, strings.TrimRight(sb.String(), "\n"))
			return nil
		},
	}
	tenantFlag(cmd, &tenant)
	return cmd
}

func tenantUpdateCmd(g *globals) *cobra.Command {
	var tenant, name, adminUsername, adminEmail string
	var lf licenceFlags
	var block, unblock bool
	var reason string
	// No environment form here: a variable left set would change the
	// owner's password on every update.
	pw := secretSource{flag: "admin-password"}
	cmd := &cobra.Command{
		Use:   "update --tenant SLUG",
		Short: "change a tenant's name, licence, tier, block or owner (the slug may also be given as the argument)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := tenantSlugArg(tenant, args)
			if err != nil {
				return err
			}
			adminPassword, pwSet, err := pw.resolve(cmd, g.in)
			if err != nil {
				return err
			}
			var u app.TenantUpdate
			if cmd.Flags().Changed("name") {
				u.Name = &name
			}
			if u.MaxUsers, err = parseMaxUsers(lf.maxUsers); err != nil {
				return err
			}
			if cmd.Flags().Changed("tier") {
				if lf.tier != "" && !app.ValidTier(lf.tier) {
					return app.ErrValidation("invalid_tier", "tier")
				}
				u.Tier = &lf.tier
			}
			if u.LicenseExpiresAt, err = parseExpiry(lf.expires); err != nil {
				return err
			}
			if block && unblock {
				return app.ErrValidation("conflicting_flags", "block")
			}
			if reason != "" && !block {
				return app.ErrValidation("reason_needs_block", "reason")
			}
			if block || unblock {
				b := block
				u.Blocked = &b
				u.BlockedReason = &reason
			}
			var owner identity.ManagerInput
			for _, f := range []struct {
				name string
				o    *app.Opt[string]
				v    string
			}{{"admin-username", &owner.Username, adminUsername}, {"admin-email", &owner.Email, adminEmail}} {
				if cmd.Flags().Changed(f.name) {
					*f.o = app.Opt[string]{Set: true, V: f.v}
				}
			}
			if pwSet {
				owner.Password = app.Opt[string]{Set: true, V: adminPassword}
			}
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			if owner.Username.Set || owner.Email.Set || owner.Password.Set {
				// The owner (root manager) first: its refusals come before
				// any change. A new password signs it out everywhere.
				if err := updateOwner(a, slug, owner); err != nil {
					return err
				}
			}
			t, err := a.UpdateTenant(context.Background(), slug, u)
			if err != nil {
				return err
			}
			g.print(tenantRow(t), "updated tenant "+t.Slug)
			return nil
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().StringVar(&name, "name", "", "display name")
	cmd.Flags().StringVar(&adminUsername, "admin-username", "", "owner's new username")
	cmd.Flags().StringVar(&adminEmail, "admin-email", "", "owner's new email")
	cmd.Flags().StringVar(&pw.value, "admin-password", "", "owner's new password, signs the owner out everywhere (else --admin-password-stdin)")
	pw.addStdinFlag(cmd)
	lf.add(cmd)
	cmd.Flags().BoolVar(&block, "block", false, "block the tenant")
	cmd.Flags().BoolVar(&unblock, "unblock", false, "unblock the tenant")
	cmd.Flags().StringVar(&reason, "reason", "", "why the tenant is blocked")
	return cmd
}

// updateOwner changes the tenant owner's identity or password.
func updateOwner(a *app.App, slug string, in identity.ManagerInput) error {
	ctx := context.Background()
	if _, ok := a.TenantBySlug(slug); !ok {
		return app.ErrNotFound()
	}
	t, release, err := a.Acquire(slug)
	if err != nil {
		return err
	}
	defer release()
	sys, err := app.SystemActor(ctx, t)
	if err != nil {
		return err
	}
	_, err = identity.UpdateManager(ctx, sys, sys.ManagerID, in)
	return err
}

func tenantDeleteCmd(g *globals) *cobra.Command {
	var tenant string
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete --tenant SLUG --yes",
		Short: "delete a tenant and its file (the slug may also be given as the argument)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := tenantSlugArg(tenant, args)
			if err != nil {
				return err
			}
			if !yes {
				return app.ErrValidation("yes_required", "yes").With("tenant", slug)
			}
			a, err := g.open(app.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			if err := a.DeleteTenant(context.Background(), slug); err != nil {
				return err
			}
			g.print(map[string]any{"deleted": slug}, "deleted tenant "+slug)
			return nil
		},
	}
	tenantFlag(cmd, &tenant)
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm")
	return cmd
}
