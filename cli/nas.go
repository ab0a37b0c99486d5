package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/aaa"
)

func nasCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "nas", Short: "add, list and delete NAS devices (RADIUS clients)"}
	cmd.AddCommand(nasAddCmd(g), nasListCmd(g), nasDeleteCmd(g))
	return cmd
}

// withTenant opens the data directory and one tenant for a command.
func (g *globals) withTenant(slug string, fn func(a *app.App, t *app.Tenant) error) error {
	if slug == "" {
		return app.ErrValidation("tenant_required", "tenant")
	}
	a, err := g.open(app.Config{})
	if err != nil {
		return err
	}
	defer a.Close()
	t, release, err := a.Acquire(slug)
	if err != nil {
		return fmt.Errorf("unknown tenant %q", slug)
	}
	defer release()
	return fn(a, t)
}

func nasAddCmd(g *globals) *cobra.Command {
	var tenant, name, ip, secret, typ string
	var coa int
	var noMA bool
	cmd := &cobra.Command{
		Use:   "add",
		Short: "register a NAS: packets from its IP are answered for this tenant",
		RunE: func(cmd *cobra.Command, args []string) error {
			in := aaa.NASInput{
				Name: app.Opt[string]{Set: true, V: name}, IP: app.Opt[string]{Set: true, V: ip},
				Secret: app.Opt[string]{Set: true, V: secret}, CoAPort: app.Opt[int]{Set: true, V: coa},
				RequireMessageAuthenticator: app.Opt[bool]{Set: true, V: !noMA},
			}
			if !isNASType(typ) {
				return app.ErrValidation("invalid_type", "type")
			}
			in.Type = app.Opt[aaa.NASType]{Set: true, V: aaa.NASType(typ)}
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				n, err := aaa.CreateNAS(context.Background(), a, t, in)
				if err != nil {
					return err
				}
				for _, w := range n.Warnings {
					if w == "short_secret" {
						fmt.Fprintf(g.errOut, "warning: the shared secret is %d characters or fewer; use a longer random secret\n", aaa.ShortSecretLen)
					}
				}
				g.print(n, fmt.Sprintf("added NAS %d %s (%s) to %s", n.ID, n.Name, n.IP, t.Slug))
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&tenant, "tenant", "", "tenant slug")
	f.StringVar(&name, "name", "", "NAS name")
	f.StringVar(&ip, "ip", "", "source IP of its RADIUS packets")
	f.StringVar(&secret, "secret", "", "shared secret")
	f.StringVar(&typ, "type", "mikrotik", "vendor: "+strings.Join(aaa.NASTypes, ", "))
	f.IntVar(&coa, "coa-port", 3799, "CoA/Disconnect port")
	f.BoolVar(&noMA, "no-message-authenticator", false, "accept Access-Requests without Message-Authenticator (old NAS only)")
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
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				list, err := aaa.ListNAS(context.Background(), a, t)
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
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant slug")
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
				if err := aaa.DeleteNAS(context.Background(), a, t, id); err != nil {
					return err
				}
				g.print(map[string]any{"deleted": id}, fmt.Sprintf("deleted NAS %d", id))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant slug")
	return cmd
}
