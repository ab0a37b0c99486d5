package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"xr/app"
)

// Demo credentials, printed at start.
const (
	demoSlug     = "demo"
	demoUser     = "admin"
	demoPassword = "demo-Admin-1"
)

func demoCmd(g *globals) *cobra.Command {
	var o serveOpts
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "serve a seeded demo tenant from a fresh data directory",
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("data") && os.Getenv("XR_DATA") == "" {
				dir, err := os.MkdirTemp("", "xr-demo-")
				if err != nil {
					return err
				}
				g.data = dir
			}
			if err := seedDemo(g); err != nil {
				return err
			}
			o.defaultTenant = demoSlug
			demoBanner(g, o.http)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, g, o, nil)
		},
	}
	o.flags(cmd, "127.0.0.1:8080")
	mustSetDefault(cmd, "radius-auth", "127.0.0.1:1812")
	mustSetDefault(cmd, "radius-acct", "127.0.0.1:1813")
	return cmd
}

// mustSetDefault changes a registered flag's default. It fails only for a
// flag that does not exist or a value it cannot hold: a programming error,
// caught by any run of the command.
func mustSetDefault(cmd *cobra.Command, name, v string) {
	cmd.Flags().Lookup(name).DefValue = v
	if err := cmd.Flags().Set(name, v); err != nil {
		panic(fmt.Sprintf("demo: default of --%s: %v", name, err))
	}
}

func seedDemo(g *globals) error {
	a, err := g.open(app.Config{})
	if err != nil {
		return err
	}
	defer a.Close()
	ctx := context.Background()
	if _, ok := a.TenantBySlug(demoSlug); ok {
		return nil // an existing demo directory is served as it is
	}
	if _, _, err := a.CreateTenant(ctx, app.NewTenant{Slug: demoSlug, Name: "Demo ISP", AdminUsername: demoUser,
		AdminEmail: "admin@demo.example", AdminPassword: demoPassword}); err != nil {
		return err
	}
	t, release, err := a.Acquire(demoSlug)
	if err != nil {
		return err
	}
	defer release()
	for _, seed := range demoSeeders {
		if err := seed(ctx, a, t); err != nil {
			return fmt.Errorf("seed demo: %w", err)
		}
	}
	return nil
}

func splitPort(addr string) (string, string, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			return addr[:i], addr[i+1:], nil
		}
	}
	return addr, "80", nil
}

// demoBanner prints where the demo is served and its login: text, or one
// JSON object with --json.
func demoBanner(g *globals, addr string) {
	_, port, _ := splitPort(addr)
	url := fmt.Sprintf("http://%s.localhost:%s", demoSlug, port)
	text := fmt.Sprintf("xr demo\n  data:     %s\n  console:  %s/ (or http://%s/) in a browser\n  api:      %s/api/v1/auth/context\n  login:    %s / %s\n  try:      curl -s http://%s/api/v1/auth/login -d '{\"email\":\"%s\",\"password\":\"%s\"}'",
		g.data, url, addr, url, demoUser, demoPassword, addr, demoUser, demoPassword)
	g.print(map[string]any{"data": g.data, "url": url, "http": addr, "tenant": demoSlug, "username": demoUser, "password": demoPassword}, text)
}
