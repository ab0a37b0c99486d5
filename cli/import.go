package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/dataimport"
)

func importCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "import", Short: "import records from files"})
	cmd.AddCommand(importUsersCmd(g))
	return cmd
}

// importUsersCmd is xr import users: subscribers from a CSV or XLSX file
// through the import engine of POST /admin/import/jobs (app/dataimport).
func importUsersCmd(g *globals) *cobra.Command {
	var tenant, file, parent, plan, mapping, onDup, pwPolicy string
	var dryRun, partial bool
	cmd := &cobra.Command{
		Use:   "users",
		Short: "import subscribers from a CSV or XLSX file (all-or-nothing unless --partial)",
		Long: "Fields (header row required; columns are matched by name, English or Arabic, without case or accents, or by --mapping): " +
			strings.Join(fieldNames(), ", ") + ".\n" +
			"profile is a plan name; parent a manager's username; expiration yyyy-MM-dd[ HH:mm:ss] UTC; mac one or more addresses separated by ';'\n" +
			"(turns the MAC lock on); balance an opening balance in major units. Each refused row is reported with its line number.",
		Example: "  xr import users --tenant acme --file users.csv --parent reseller1 --dry-run\n" +
			"  xr import users --tenant acme --file users.xlsx --mapping '{\"username\":\"Login\",\"password\":\"PIN\"}' --on-duplicate update",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if file == "" {
				return app.ErrValidation("file_required", "file")
			}
			if _, err := os.Stat(file); err != nil {
				return err
			}
			spec := dataimport.Spec{Parent: parent, Plan: plan, OnDuplicate: onDup, PasswordPolicy: pwPolicy, Partial: partial}
			if mapping != "" {
				if err := json.Unmarshal([]byte(mapping), &spec.Mapping); err != nil {
					return app.ErrValidation("invalid_mapping", "mapping")
				}
			}
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				ctx := context.Background()
				act, err := app.SystemActor(ctx, t)
				if err != nil {
					return err
				}
				var rep *dataimport.Report
				if dryRun {
					rep, err = dataimport.Validate(ctx, act, file, "", spec)
				} else {
					rep, err = dataimport.Import(ctx, act, file, "", spec)
				}
				if err != nil {
					return err
				}
				var b strings.Builder
				for _, e := range rep.Errors {
					if e.Outcome != "failed" {
						continue
					}
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
				case rep.Failed > 0 && !partial:
					fmt.Fprintf(&b, "nothing imported: %d of %d rows refused (use --partial to import the valid rows)", rep.Failed, rep.Rows)
				case dryRun:
					fmt.Fprintf(&b, "dry run: %d of %d rows would be imported, %d skipped, %d refused", rep.Imported, rep.Rows, rep.Skipped, rep.Failed)
				default:
					fmt.Fprintf(&b, "imported %d of %d rows into %s (%d created, %d updated), %d skipped, %d refused", rep.Imported, rep.Rows, t.Slug,
						rep.Created, rep.Updated, rep.Skipped, rep.Failed)
				}
				if rep.Failed > 0 && !partial {
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
	fl.StringVar(&file, "file", "", "CSV or XLSX file")
	fl.StringVar(&parent, "parent", "", "manager (username) the subscribers go under; default the owner")
	fl.StringVar(&plan, "plan", "", "plan (name) of rows without a profile column")
	fl.StringVar(&mapping, "mapping", "", `column mapping as JSON: {"field":"column header",...}; default: matched by header names`)
	fl.StringVar(&onDup, "on-duplicate", "fail", "a row whose username exists: fail, skip or update")
	fl.StringVar(&pwPolicy, "password-policy", "require", "a row without a password: require (refused) or generate")
	fl.BoolVar(&dryRun, "dry-run", false, "validate only; write nothing")
	fl.BoolVar(&partial, "partial", false, "import the valid rows and report the others")
	required(cmd, "tenant", "file")
	return cmd
}

func fieldNames() []string {
	var out []string
	for _, k := range dataimport.Catalogue() {
		if k.Kind == dataimport.KindSubscribers {
			for _, f := range k.Fields {
				out = append(out, f.Name)
			}
		}
	}
	return out
}
