package cli

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/aaa"
	"xr/app/egress"
)

func nasCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "nas", Short: "add, list and delete NAS devices (RADIUS clients)"})
	cmd.AddCommand(nasAddCmd(g), nasListCmd(g), nasDeleteCmd(g), nasRadSecCertCmd(g))
	return cmd
}

// withTenant opens the data directory and one tenant for a command.
func (g *globals) withTenant(slug string, fn func(a *app.App, t *app.Tenant) error) error {
	return g.withTenantCfg(slug, app.Config{}, fn)
}

// withTenantCfg is withTenant with the App opened under cfg.
func (g *globals) withTenantCfg(slug string, cfg app.Config, fn func(a *app.App, t *app.Tenant) error) error {
	if slug == "" {
		return app.ErrValidation("tenant_required", "tenant")
	}
	a, err := g.open(cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	if _, ok := a.TenantBySlug(slug); !ok {
		return errTenantNotFound(slug)
	}
	t, release, err := a.Acquire(slug)
	if err != nil {
		return err
	}
	defer release()
	return fn(a, t)
}

// errTenantNotFound is the refusal of a --tenant no tenant has.
func errTenantNotFound(slug string) error {
	return (&app.Error{Code: app.CodeNotFound, Status: 404, Reason: "tenant_not_found", Field: "tenant"}).With("tenant", slug)
}

// tenantFlag registers --tenant.
func tenantFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "tenant", "", "tenant slug")
}

// minNASSecretLen is the shortest shared secret the command line accepts
// without --weak-secret. The API keeps the spec's rule (a short secret is
// stored with a short_secret warning): this is the operator's tool, and a
// script can still opt in with --weak-secret for an old NAS.
const minNASSecretLen = 16

func nasAddCmd(g *globals) *cobra.Command {
	var tenant, name, ip, typ string
	var coa int
	var noMA, weak bool
	secret := secretSource{flag: "secret", env: "XR_NAS_SECRET"}
	cmd := &cobra.Command{
		Use:   "add",
		Short: "register a NAS: packets from its IP are answered for this tenant",
		Long: "The shared secret comes from --secret, from the first line of standard input with --secret-stdin, or from the\n" +
			"environment variable XR_NAS_SECRET. It must be at least 16 characters unless --weak-secret is given.",
		Example: "  printf '%s\\n' \"$SECRET\" | xr nas add --tenant acme --name core --ip 10.0.0.1 --secret-stdin",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sec, ok, err := secret.resolve(cmd, g.in)
			if err != nil {
				return err
			}
			if !ok || sec == "" {
				return app.ErrValidation("secret_required", "secret")
			}
			if len(sec) < minNASSecretLen && !weak {
				return app.ErrValidation("secret_too_short", "secret").With("min_length", minNASSecretLen)
			}
			in := aaa.NASInput{
				Name: app.Opt[string]{Set: true, V: name}, IP: app.Opt[string]{Set: true, V: ip},
				Secret: app.Opt[string]{Set: true, V: sec}, CoAPort: app.Opt[int]{Set: true, V: coa},
				RequireMessageAuthenticator: app.Opt[bool]{Set: true, V: !noMA},
			}
			if !isNASType(typ) {
				return app.ErrValidation("invalid_type", "type")
			}
			in.Type = app.Opt[aaa.NASType]{Set: true, V: aaa.NASType(typ)}
			// The egress guard keeps tenant admins (the API, the console)
			// from naming loopback or the box's own addresses; the operator
			// at the box's shell is who the guard defers to, as with
			// xr serve --allow-private-egress. xr still sends CoA and probes
			// to such an address only when serve runs with that flag.
			return g.withTenantCfg(tenant, app.Config{AllowPrivateEgress: true}, func(a *app.App, t *app.Tenant) error {
				act, err := app.SystemActor(context.Background(), t)
				if err != nil {
					return err
				}
				n, err := aaa.CreateNAS(context.Background(), act, in)
				if err != nil {
					return err
				}
				if addr, err := netip.ParseAddr(n.IP); err == nil {
					if c := (egress.Guard{Policy: egress.Device}).Refusal(addr); c != "" {
						fmt.Fprintf(g.errOut, "warning: %s is a %s address: xr answers its RADIUS packets, but sends it CoA/Disconnect and probes only when xr serve runs with --allow-private-egress\n", n.IP, c)
					}
				}
				if len(sec) < minNASSecretLen {
					fmt.Fprintf(g.errOut, "warning: the shared secret is shorter than %d characters (--weak-secret); use a longer random secret when the NAS allows\n", minNASSecretLen)
				}
				g.print(n, fmt.Sprintf("added NAS %d %s (%s) to %s", n.ID, n.Name, n.IP, t.Slug))
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&name, "name", "", "NAS name")
	f.StringVar(&ip, "ip", "", "source IP of its RADIUS packets")
	f.StringVar(&secret.value, "secret", "", "shared secret, 16+ characters (else --secret-stdin or env XR_NAS_SECRET)")
	secret.addStdinFlag(cmd)
	f.BoolVar(&weak, "weak-secret", false, "accept a shared secret shorter than 16 characters (an old NAS that cannot hold more)")
	f.StringVar(&typ, "type", "mikrotik", "vendor: "+strings.Join(aaa.NASTypes, ", "))
	f.IntVar(&coa, "coa-port", 3799, "CoA/Disconnect port")
	f.BoolVar(&noMA, "no-message-authenticator", false, "accept Access-Requests without Message-Authenticator (old NAS only)")
	required(cmd, "tenant", "name", "ip")
	return cmd
}

func isNASType(s string) bool {
	for _, t := range aaa.NASTypes {
		if s == t {
			return true
		}
	}
	return false
}

func nasListCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list a tenant's NAS devices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				act, err := app.SystemActor(context.Background(), t)
				if err != nil {
					return err
				}
				list, err := aaa.ListNAS(context.Background(), act)
				if err != nil {
					return err
				}
				var sb strings.Builder
				tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tNAME\tIP\tTYPE\tCOA PORT\tREQUIRE MA")
				for _, n := range list {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%v\n", n.ID, n.Name, n.IP, n.Type, n.CoAPort, n.RequireMessageAuthenticator)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				g.print(map[string]any{"nas": list}, strings.TrimRight(sb.String(), "\n"))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	required(cmd, "tenant")
	return cmd
}

func nasDeleteCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "delete a NAS",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return app.ErrValidation("invalid_id", "id")
			}
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				act, err := app.SystemActor(context.Background(), t)
				if err != nil {
					return err
				}
				if err := aaa.DeleteNAS(context.Background(), act, id); err != nil {
					return err
				}
				g.print(map[string]any{"deleted": id}, fmt.Sprintf("deleted NAS %d", id))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	required(cmd, "tenant")
	return cmd
}
