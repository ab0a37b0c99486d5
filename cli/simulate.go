package cli

import (
	"context"
	"fmt"
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
	var mode, mix string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "act as a NAS: send RADIUS auth/accounting load to a server and report rate and latency",
		Example: `  xr simulate --nas-secret demo-radius-secret --mode auth --users 10000 --duration 10s
  xr simulate --nas-secret S --mode auth --auth-method mschapv2 --users 1000
  xr simulate --nas-secret S --mode acct-interim --sessions 10000 --count 100000
  xr simulate --nas-secret S --mode storm --sessions 10000
  xr simulate --nas-secret S --mode acct-churn --users 10000 --count 200000
  xr simulate --nas-secret S --mode session --users 500 --concurrency 200 --interim 10s --coa-listen 127.0.0.1:3799
  xr simulate --nas-secret S --mode mixed --mix session=70,auth=25,interim=5,wrong=10 --duration 5m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Mode = sim.Mode(mode)
			var err error
			if cfg.Mix, err = sim.ParseMix(mix); err != nil {
				return err
			}
			if !g.json && !quiet {
				// The live progress line, rewritten in place on stderr.
				cfg.Progress = func(p sim.Progress) { fmt.Fprintf(g.errOut, "\r%s ", p) }
			}
			if cfg.CoAListen != "" && !g.json {
				cfg.CoAReady = func(addr string) { fmt.Fprintf(g.errOut, "answering Disconnect/CoA on %s\n", addr) }
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			rep, err := sim.Run(ctx, cfg)
			if cfg.Progress != nil {
				fmt.Fprintln(g.errOut)
			}
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
	f.StringVar(&mode, "mode", "auth", "auth, acct-interim, storm (Accounting-On then auth + Start per session), acct-churn (Start, 2 Interims, Stop per new session), "+
		"session (whole sessions: Access-Request, Start, Interims, Stop; --concurrency live at once) or mixed (sessions blended with re-auth and stray accounting, --mix)")
	f.StringVar(&cfg.AuthMethod, "auth-method", "pap", "Access-Request authentication: pap, chap or mschapv2")
	f.DurationVar(&cfg.Interim, "interim", 30*time.Second, "session, mixed: Interim-Update interval")
	f.DurationVar(&cfg.SessionLength, "session-length", 0, "session, mixed: mean session length (default 10 interims)")
	f.Int64Var(&cfg.OctetsPerInterim, "octets-per-interim", 2<<20, "session, mixed: mean download per interim and session, bytes")
	f.StringVar(&mix, "mix", "", "mixed: worker shares and knobs, e.g. session=80,auth=15,interim=5,wrong=10,think=200ms (the default)")
	f.StringVar(&cfg.CoAListen, "coa-listen", "", "session, mixed: answer Disconnect-Request/CoA-Request here like a NAS (e.g. 127.0.0.1:3799)")
	f.IntVar(&cfg.First, "first", 0, "first index: session and mixed modes play users first..first+users-1; acct-churn numbers its sessions from it")
	f.BoolVar(&quiet, "quiet", false, "no live progress line")
	f.StringVar(&cfg.UserFormat, "user-format", "user%05d", "username format by index")
	f.StringVar(&cfg.PasswordFormat, "password-format", "pass", "password format by index")
	f.IntVar(&cfg.Users, "users", 10000, "distinct users")
	f.IntVar(&cfg.Sessions, "sessions", 0, "sessions (interim, storm); default --users")
	f.IntVar(&cfg.Concurrency, "concurrency", 64, "requests in flight")
	f.DurationVar(&cfg.Duration, "duration", 0, "run for this long")
	f.IntVar(&cfg.Count, "count", 0, "run for this many requests (sessions in storm, session and mixed modes; these run until --duration or Ctrl-C without it)")
	f.DurationVar(&cfg.Timeout, "timeout", time.Second, "wait for an answer per try")
	f.IntVar(&cfg.Retries, "retries", 2, "retransmissions after a timeout")
	f.BoolVar(&cfg.NoMessageAuthenticator, "no-message-authenticator", false, "omit Message-Authenticator from Access-Requests")
	return cmd
}
