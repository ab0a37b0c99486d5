package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/subs"
)

func importCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "import", Short: "import records from files"})
	cmd.AddCommand(importUsersCmd(g))
	return cmd
}

// importUsersCmd is xr import users: subscribers from a CSV with a header
// row (columns: username, password, profile, expiration, email, firstname,
// lastname, phone, static_ip, mac, balance).
func importUsersCmd(g *globals) *cobra.Command {
	var tenant, file, parent string
	var dryRun, partial bool
	cmd := &cobra.Command{
		Use:   "users",
		Short: "import subscribers from a CSV file (all-or-nothing unless --partial)",
		Long: "Columns (header row required; username and password required): " + strings.Join(subs.ImportColumns, ", ") + ".\n" +
			"profile is a plan name; expiration yyyy-MM-dd[ HH:mm:ss] UTC; mac one or more addresses separated by ';' (turns the MAC lock on);\n" +
			"balance an opening balance in major units. Each refused row is reported with its line number.",
		Example: "  xr import users --tenant acme --file users.csv --parent reseller1 --dry-run",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return app.ErrValidation("file_required", "file")
			}
			f, err := os.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				ctx := context.Background()
				act, err := app.SystemActor(ctx, t)
				if err != nil {
					return err
				}
				rep, err := subs.ImportUsers(ctx, act, f, subs.ImportOptions{ParentUsername: parent, DryRun: dryRun, Partial: partial})
				if err != nil {
					return err
				}
				var b strings.Builder
				for _, e := range rep.Errors {
					fmt.Fprintf(&b, "line %d: %s", e.Line, e.Reason)
					if e.Field != "" {
						fmt.Fprintf(&b, " (%s)", e.Field)
					}
					if e.Username != "" {
						fmt.Fprintf(&b, " [%s]", e.Username)
					}
					b.WriteString("\n")
				}
				switch {
				case len(rep.Errors) > 0 && !partial:
					fmt.Fprintf(&b, "nothing imported: %d of %d rows refused (use --partial to import the valid rows)", rep.Failed, rep.Rows)
				case dryRun:
					fmt.Fprintf(&b, "dry run: %d of %d rows would be imported, %d refused", rep.Imported, rep.Rows, rep.Failed)
				default:
					fmt.Fprintf(&b, "imported %d of %d rows into %s, %d refused", rep.Imported, rep.Rows, t.Slug, rep.Failed)
				}
				if len(rep.Errors) > 0 && !partial {
					// The report goes with the refusal: its lines on stdout
					// as text, inside the one error object with --json.
					if !g.json {
						fmt.Fprintln(g.out, b.String())
					}
					return app.ErrValidation("import_refused", "file").With("rows", rep.Rows).With("refused", rep.Failed).With("errors", rep.Errors)
				}
				g.print(rep, b.String())
				return nil
			})
		},
	}
	fl := cmd.Flags()
	tenantFlag(cmd, &tenant)
	fl.StringVar(&file, "file", "", "CSV file")
	fl.StringVar(&parent, "parent", "", "manager (username) the subscribers go under; default the owner")
	fl.BoolVar(&dryRun, "dry-run", false, "validate only; write nothing")
	fl.BoolVar(&partial, "partial", false, "import the valid rows and report the others")
	required(cmd, "tenant", "file")
	return cmd
}
