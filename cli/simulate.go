package cli

import (
	"context"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"xr/radiusd/sim"
)

// simulateCmd is a NAS in a box: it drives authentication and accounting
// load against any RADIUS server (xr or another) and reports rate and
// latency, so the comparison can be repeated anywhere.
func simulateCmd(g *globals) *cobra.Command {
	var cfg sim.Config
	var mode string
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "act as a NAS: send RADIUS auth/accounting load to a server and report rate and latency",
		Example: `  xr simulate --nas-secret demo-radius-secret --mode auth --users 10000 --duration 10s
  xr simulate --nas-secret S --mode acct-interim --sessions 10000 --count 100000
  xr simulate --nas-secret S --mode storm --sessions 10000
  xr simulate --nas-secret S --mode acct-churn --users 10000 --count 200000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Mode = sim.Mode(mode)
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			rep, err := sim.Run(ctx, cfg)
			if err != nil {
				return err
			}
			g.print(rep, rep.String())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.AuthAddr, "auth", "127.0.0.1:1812", "server authentication address")
	f.StringVar(&cfg.AcctAddr, "acct", "127.0.0.1:1813", "server accounting address")
	f.StringVar(&cfg.Secret, "nas-secret", "", "shared secret of the NAS entry the server has for the source address")
	f.StringVar(&cfg.LocalIP, "local-ip", "127.0.0.1", "source address (the NAS IP the server knows)")
	f.StringVar(&mode, "mode", "auth", "auth, acct-interim, storm (Accounting-On then auth + Start per session) or acct-churn (Start, 2 Interims, Stop per new session)")
	f.StringVar(&cfg.UserFormat, "user-format", "user%05d", "username format by index")
	f.StringVar(&cfg.PasswordFormat, "password-format", "pass", "password format by index")
	f.IntVar(&cfg.Users, "users", 10000, "distinct users (auth mode)")
	f.IntVar(&cfg.Sessions, "sessions", 0, "sessions (interim, storm); default --users")
	f.IntVar(&cfg.Concurrency, "concurrency", 64, "requests in flight")
	f.DurationVar(&cfg.Duration, "duration", 0, "run for this long")
	f.IntVar(&cfg.Count, "count", 0, "run for this many requests (sessions in storm mode)")
	f.DurationVar(&cfg.Timeout, "timeout", time.Second, "wait for an answer per try")
	f.IntVar(&cfg.Retries, "retries", 2, "retransmissions after a timeout")
	f.BoolVar(&cfg.NoMessageAuthenticator, "no-message-authenticator", false, "omit Message-Authenticator from Access-Requests")
	return cmd
}
