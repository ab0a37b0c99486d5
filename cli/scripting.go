package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/identity"
	"xr/app/subs"
)

// Scripting commands for the daily tasks: subscribers, plans and an API
// token to bootstrap automation. Each calls the same app function as its
// API route, as the system actor of the tenant (the owner's authority,
// tenant-wide): the operator at the box's shell owns it.

// withSystem runs fn with the tenant's system actor.
func (g *globals) withSystem(tenant string, fn func(ctx context.Context, act *app.Actor) error) error {
	return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
		ctx := context.Background()
		act, err := app.SystemActor(ctx, t)
		if err != nil {
			return err
		}
		return fn(ctx, act)
	})
}

// table renders rows under a header with aligned columns.
func table(header string, rows [][]string) (string, error) {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return "", err
	}
	return strings.TrimRight(sb.String(), "\n"), nil
}

func timeText(t app.Time) string {
	if t.IsZero() {
		return "-"
	}
	return app.FormatTime(t.Time)
}

func userCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "user", Short: "list, add, show, enable and disable subscribers"})
	cmd.AddCommand(userListCmd(g), userAddCmd(g), userShowCmd(g), userSetEnabledCmd(g, true), userSetEnabledCmd(g, false))
	return cmd
}

func userListCmd(g *globals) *cobra.Command {
	var tenant, q, sort, order string
	var page, pageSize int
	var filters []string
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "list subscribers (one page, as GET /users)",
		Example: "  xr user list --tenant acme --q ali --filter enabled=true --page-size 200 --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := url.Values{}
			v.Set("q", q)
			v.Set("sort", sort)
			v.Set("order", order)
			v.Set("page", strconv.Itoa(page))
			v.Set("page_size", strconv.Itoa(pageSize))
			for _, f := range filters {
				k, val, ok := strings.Cut(f, "=")
				if !ok || k == "" {
					return app.ErrValidation("invalid_filter", "filter").With("filter", f)
				}
				v.Set("filter["+k+"]", val)
			}
			lq, err := app.ParseList(v, subs.UserListSpec())
			if err != nil {
				return err
			}
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				p, err := subs.ListUsers(ctx, act, lq)
				if err != nil {
					return err
				}
				rows := make([][]string, 0, len(p.Rows))
				for _, u := range p.Rows {
					rows = append(rows, []string{strconv.FormatInt(u.ID, 10), u.Username, u.ProfileName, u.ParentUsername,
						strconv.FormatBool(u.Enabled), timeText(u.Expiration), u.Balance.String()})
				}
				text, err := table("ID\tUSERNAME\tPLAN\tPARENT\tENABLED\tEXPIRATION\tBALANCE", rows)
				if err != nil {
					return err
				}
				text += fmt.Sprintf("\npage %d, %d of %d subscribers", p.Meta.Page, len(p.Rows), p.Meta.Total)
				if p.Rows == nil {
					p.Rows = []subs.User{}
				}
				g.print(map[string]any{"data": p.Rows, "meta": p.Meta}, text)
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&q, "q", "", "search username, names, email, phone")
	f.StringVar(&sort, "sort", "id", "id, username, created_at, expiration, balance or updated_at")
	f.StringVar(&order, "order", "asc", "asc or desc")
	f.IntVar(&page, "page", 1, "page number")
	f.IntVar(&pageSize, "page-size", app.DefaultPageSize, fmt.Sprintf("rows per page (at most %d)", app.MaxPageSize))
	f.StringArrayVar(&filters, "filter", nil, "KEY=VALUE as filter[KEY] of GET /users (enabled, expired, online, profile_id, parent_id, username_exact, ...); repeatable")
	required(cmd, "tenant")
	return cmd
}

// findUser resolves ID or USERNAME to a subscriber the actor can see.
func findUser(ctx context.Context, act *app.Actor, ref string) (*subs.UserDetail, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		u, err := subs.GetUser(ctx, act, id)
		if err == nil || app.Classify(err) == nil || app.Classify(err).Reason != "not_found" {
			return u, err
		}
		// A numeric username (a phone number) is looked up by name below.
	}
	lq, err := app.ParseList(url.Values{"filter[username_exact]": {ref}, "page_size": {"2"}}, subs.UserListSpec())
	if err != nil {
		return nil, err
	}
	p, err := subs.ListUsers(ctx, act, lq)
	if err != nil {
		return nil, err
	}
	if len(p.Rows) != 1 {
		return nil, app.ErrNotFound().With("user", ref)
	}
	return subs.GetUser(ctx, act, p.Rows[0].ID)
}

func userText(u *subs.UserDetail) string {
	plan := "-"
	if u.ProfileID != nil {
		plan = fmt.Sprintf("%d %s", *u.ProfileID, u.ProfileName)
	}
	var sb strings.Builder
	for _, kv := range [][2]string{
		{"id", strconv.FormatInt(u.ID, 10)}, {"username", u.Username}, {"enabled", strconv.FormatBool(u.Enabled)},
		{"can_connect", strconv.FormatBool(u.Status.CanConnect)}, {"expired", strconv.FormatBool(u.Status.Expired)},
		{"plan", plan}, {"parent", fmt.Sprintf("%d %s", u.ParentID, u.ParentUsername)}, {"expiration", timeText(u.Expiration)},
		{"balance", u.Balance.String()}, {"debt", u.Debt.String()}, {"email", u.Email}, {"created_at", timeText(u.CreatedAt)},
	} {
		fmt.Fprintf(&sb, "%-12s %s\n", kv[0]+":", kv[1])
	}
	return strings.TrimRight(sb.String(), "\n")
}

func userShowCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "show ID|USERNAME",
		Short: "show one subscriber (as GET /users/{id})",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				u, err := findUser(ctx, act, args[0])
				if err != nil {
					return err
				}
				g.print(u, userText(u))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	required(cmd, "tenant")
	return cmd
}

func userSetEnabledCmd(g *globals, enable bool) *cobra.Command {
	var tenant string
	verb, fn := "disable", subs.DisableUser
	if enable {
		verb, fn = "enable", subs.EnableUser
	}
	cmd := &cobra.Command{
		Use:   verb + " ID|USERNAME",
		Short: verb + " a subscriber (as POST /users/{id}/" + verb + ")",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				u, err := findUser(ctx, act, args[0])
				if err != nil {
					return err
				}
				d, err := fn(ctx, act, u.ID)
				if err != nil {
					return err
				}
				g.print(d, fmt.Sprintf("%sd subscriber %d %s", verb, d.ID, d.Username))
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	required(cmd, "tenant")
	return cmd
}

// findPlan resolves ID or NAME to a plan.
func findPlan(ctx context.Context, act *app.Actor, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		p, err := subs.GetProfile(ctx, act, id)
		if err == nil {
			return p.ID, nil
		}
		if e := app.Classify(err); e == nil || e.Reason != "not_found" {
			return 0, err
		}
	}
	lq, err := app.ParseList(url.Values{"q": {ref}, "page_size": {strconv.Itoa(app.MaxPageSize)}}, subs.ProfileListSpec())
	if err != nil {
		return 0, err
	}
	page, err := subs.ListProfiles(ctx, act, lq)
	if err != nil {
		return 0, err
	}
	for _, p := range page.Rows {
		if p.Name == ref {
			return p.ID, nil
		}
	}
	return 0, app.ErrValidation("profile_not_found", "plan").With("plan", ref)
}

func userAddCmd(g *globals) *cobra.Command {
	var tenant, username, plan, expiration, email, firstname, lastname, phone string
	var parent int64
	var disabled bool
	pw := secretSource{flag: "password", env: "XR_USER_PASSWORD"}
	cmd := &cobra.Command{
		Use:   "add",
		Short: "create a subscriber (as POST /users: identity only, no money, no activation)",
		Long: "The password comes from --password, from the first line of standard input with --password-stdin, or from the\n" +
			"environment variable XR_USER_PASSWORD. --plan (an id or a name) is recorded, not activated.",
		Example: "  xr user add --tenant acme --username ali --password-stdin --plan 'Home 50M' --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, ok, err := pw.resolve(cmd, g.in)
			if err != nil {
				return err
			}
			if !ok {
				return app.ErrValidation("password_required", "password")
			}
			in := subs.CreateInput{Username: username, Password: p, Email: email, Firstname: firstname, Lastname: lastname, Phone: phone}
			if cmd.Flags().Changed("parent") {
				in.ParentID = &parent
			}
			if disabled {
				f := false
				in.Enabled = &f
			}
			if expiration != "" {
				var d app.DateOrTime
				if err := d.UnmarshalJSON([]byte(strconv.Quote(expiration))); err != nil {
					return app.ErrValidation("invalid_expiration", "expiration")
				}
				in.Expiration = &d
			}
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				if plan != "" {
					id, err := findPlan(ctx, act, plan)
					if err != nil {
						return err
					}
					in.ProfileID = &id
				}
				c, err := subs.Create(ctx, act, in)
				if err != nil {
					return err
				}
				g.print(c, fmt.Sprintf("added subscriber %d %s", c.ID, c.Username))
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&username, "username", "", "login name")
	f.StringVar(&pw.value, "password", "", "RADIUS password (else --password-stdin or env XR_USER_PASSWORD)")
	pw.addStdinFlag(cmd)
	f.StringVar(&plan, "plan", "", "plan id or exact name (recorded; activate through the API or console)")
	f.Int64Var(&parent, "parent", 0, "manager id the subscriber goes under (default the owner)")
	f.StringVar(&expiration, "expiration", "", "yyyy-MM-dd[ HH:mm:ss] UTC")
	f.StringVar(&email, "email", "", "email")
	f.StringVar(&firstname, "firstname", "", "first name")
	f.StringVar(&lastname, "lastname", "", "last name")
	f.StringVar(&phone, "phone", "", "phone")
	f.BoolVar(&disabled, "disabled", false, "create the subscriber disabled")
	required(cmd, "tenant", "username")
	return cmd
}

func planCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "plan", Short: "list and add plans (profiles)"})
	cmd.AddCommand(planListCmd(g), planAddCmd(g))
	return cmd
}

func planListCmd(g *globals) *cobra.Command {
	var tenant string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list plans (as GET /admin/profiles, up to 200)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			lq, err := app.ParseList(url.Values{"page_size": {strconv.Itoa(app.MaxPageSize)}, "order": {"asc"}}, subs.ProfileListSpec())
			if err != nil {
				return err
			}
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				p, err := subs.ListProfiles(ctx, act, lq)
				if err != nil {
					return err
				}
				rows := make([][]string, 0, len(p.Rows))
				for _, r := range p.Rows {
					rows = append(rows, []string{strconv.FormatInt(r.ID, 10), r.Name, r.Price.String(), strconv.FormatInt(r.DurationDays, 10),
						fmt.Sprintf("%d/%d", r.RateDownKbps, r.RateUpKbps), strconv.FormatInt(r.BytesLimit, 10), strconv.FormatBool(r.Enabled),
						strconv.FormatInt(r.UsersCount, 10)})
				}
				text, err := table("ID\tNAME\tPRICE\tDAYS\tRATE KBPS (DOWN/UP)\tBYTES LIMIT\tENABLED\tUSERS", rows)
				if err != nil {
					return err
				}
				if p.Rows == nil {
					p.Rows = []subs.Profile{}
				}
				g.print(map[string]any{"data": p.Rows, "meta": p.Meta}, text)
				return nil
			})
		},
	}
	tenantFlag(cmd, &tenant)
	required(cmd, "tenant")
	return cmd
}

func planAddCmd(g *globals) *cobra.Command {
	var tenant, name, price, description string
	var days, down, up, bytesLimit, simUse int64
	cmd := &cobra.Command{
		Use:     "add",
		Short:   "create a plan (as POST /admin/profiles)",
		Example: "  xr plan add --tenant acme --name 'Home 50M' --price 25 --days 30 --rate-down 51200 --rate-up 10240",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := subs.ProfileInput{Name: app.Opt[string]{Set: true, V: name}}
			if cmd.Flags().Changed("price") {
				m, err := app.ParseMoney(price)
				if err != nil {
					return app.ErrValidation("invalid_price", "price")
				}
				in.Price = app.Opt[app.Money]{Set: true, V: m}
			}
			for _, o := range []struct {
				flag string
				dst  *app.Opt[int64]
				v    int64
			}{{"days", &in.DurationDays, days}, {"rate-down", &in.RateDownKbps, down}, {"rate-up", &in.RateUpKbps, up},
				{"bytes-limit", &in.BytesLimit, bytesLimit}, {"simultaneous-use", &in.SimultaneousUse, simUse}} {
				if cmd.Flags().Changed(o.flag) {
					*o.dst = app.Opt[int64]{Set: true, V: o.v}
				}
			}
			if cmd.Flags().Changed("description") {
				in.Description = app.Opt[string]{Set: true, V: description}
			}
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				p, err := subs.CreateProfile(ctx, act, in)
				if err != nil {
					return err
				}
				g.print(p, fmt.Sprintf("added plan %d %s", p.ID, p.Name))
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&name, "name", "", "plan name")
	f.StringVar(&price, "price", "0", "price in major units (up to 3 decimals)")
	f.Int64Var(&days, "days", 30, "duration in days")
	f.Int64Var(&down, "rate-down", 0, "download rate in kbit/s (0: unlimited)")
	f.Int64Var(&up, "rate-up", 0, "upload rate in kbit/s (0: unlimited)")
	f.Int64Var(&bytesLimit, "bytes-limit", 0, "data quota in bytes (0: unlimited)")
	f.Int64Var(&simUse, "simultaneous-use", 1, "sessions at once")
	f.StringVar(&description, "description", "", "description")
	required(cmd, "tenant", "name")
	return cmd
}

func tokenCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "token", Short: "API tokens for automation"})
	cmd.AddCommand(tokenCreateCmd(g))
	return cmd
}

func tokenCreateCmd(g *globals) *cobra.Command {
	var tenant, name, expires string
	var scopes []string
	var full bool
	cmd := &cobra.Command{
		Use:   "create",
		Short: "mint an API token of the tenant's owner (as POST /developer/api-tokens), to bootstrap automation",
		Long: "Prints the token (xrt_...) alone on stdout, or the token record with its plaintext under \"token\" with --json.\n" +
			"The plaintext is shown here once; later only through the console's reveal.",
		Example: "  TOKEN=$(xr token create --tenant acme --name billing-sync --scope prm_users_index --scope prm_users_deposit)",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in := identity.APITokenInput{Name: name, Scopes: scopes, FullAccess: full}
			if in.Scopes == nil {
				in.Scopes = []string{}
			}
			if !full && len(scopes) == 0 {
				return app.ErrValidation("scope_required", "scope")
			}
			if expires != "" {
				if err := in.ExpiresAt.UnmarshalJSON([]byte(strconv.Quote(expires))); err != nil {
					return app.ErrValidation("invalid_expires_at", "expires")
				}
			}
			return g.withSystem(tenant, func(ctx context.Context, act *app.Actor) error {
				k, err := identity.CreateAPIToken(ctx, act, in)
				if err != nil {
					return err
				}
				if !g.json {
					fmt.Fprintf(g.errOut, "created API token %d %q of the owner; it is shown once\n", k.ID, k.Name)
				}
				g.print(k, k.Token)
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&name, "name", "", "what the token is for")
	f.StringArrayVar(&scopes, "scope", nil, "permission code the token may use (prm_...); repeatable")
	f.BoolVar(&full, "full-access", false, "the owner's full authority instead of --scope")
	f.StringVar(&expires, "expires", "", "expiry yyyy-MM-dd[ HH:mm:ss] UTC (default: never)")
	required(cmd, "tenant", "name")
	return cmd
}
