package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/replica"
	"xr/db"
)

// replicaCmd holds xr replica follow, the follower process xr serve
// --standby-of starts (hidden: operators run serve, never it directly).
func replicaCmd(g *globals) *cobra.Command {
	cmd := group(&cobra.Command{Use: "replica", Short: "the standby's follower process (started by xr serve --standby-of)", Hidden: true})
	var from string
	follow := &cobra.Command{
		Use:   "follow",
		Short: "restore the replica's files missing under --data and follow them until standard input closes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			target, err := replica.ParseTarget(from)
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			// The parent writes a remote target's credentials as the first
			// line of our standard input (never on the command line), then
			// holds it open: end of file means it died (even by kill -9),
			// and a follower must not outlive the standby it feeds.
			in := bufio.NewReader(g.in)
			if target.Remote() {
				if target, err = readCredentials(in, target); err != nil {
					return err
				}
			}
			ctx, cancel := context.WithCancel(ctx)
			go func() { _, _ = io.Copy(io.Discard, in); cancel() }()
			return replica.Follow(ctx, target, g.data, replica.FollowOptions{Log: g.logger()})
		},
	}
	follow.Flags().StringVar(&from, "from", "", "the replica to follow (file://, sftp:// or s3://; a remote one's credentials come as the first line of standard input)")
	required(follow, "from")
	cmd.AddCommand(follow)
	return cmd
}

// writeCredentials hands a remote target's credentials to the follower:
// one JSON line on its standard input.
func writeCredentials(w io.Writer, t replica.Target) error {
	b, err := json.Marshal(t.Credentials())
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// readCredentials reads what writeCredentials wrote.
func readCredentials(r *bufio.Reader, t replica.Target) (replica.Target, error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return t, fmt.Errorf("the replica's credentials on standard input: %w", err)
	}
	var c replica.Credentials
	if err := json.Unmarshal(line, &c); err != nil {
		return t, fmt.Errorf("the replica's credentials on standard input: %w", err)
	}
	return t.WithCredentials(c), nil
}

// follower is the child process of a standby.
type follower struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
}

// startFollower starts xr replica follow on the data directory and waits
// until its first status: every file the replica held then is restored.
func startFollower(ctx context.Context, g *globals, bin string, target replica.Target) (*follower, error) {
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		bin = exe
	}
	status := replica.StatusPath(g.data)
	if err := os.Remove(status); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	cmd := exec.Command(bin, "--data", g.data, "--log-level", g.logLevel, "replica", "follow", "--from", target.URL)
	cmd.Stdout, cmd.Stderr = g.errOut, g.errOut
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the follower: %w", err)
	}
	f := &follower{cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	if target.Remote() {
		if err := writeCredentials(stdin, target); err != nil {
			f.stop()
			return nil, err
		}
	}
	go func() { _ = cmd.Wait(); close(f.exited) }()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, err := replica.ReadStatus(g.data); err == nil {
			if _, ok := st.Files["instance.db"]; ok {
				return f, nil
			}
		}
		select {
		case <-ctx.Done():
			f.stop()
			return nil, ctx.Err()
		case <-f.exited:
			return nil, fmt.Errorf("the follower of %s stopped before it restored instance.db: %s", target.URL, cmd.ProcessState)
		case <-tick.C:
		}
	}
}

// stop ends the follower (closing its standard input) and waits for it.
func (f *follower) stop() {
	_ = f.stdin.Close()
	select {
	case <-f.exited:
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-f.exited
	}
}

// standbyConfig makes cfg a standby's: followed files, and the lag and
// the primary's silence read from the follower's status file.
func standbyConfig(cfg *app.Config, dataDir string, target replica.Target, promoteAfter time.Duration) {
	cfg.Checkpoints = db.CheckpointFollowed
	cfg.Standby = func() app.Replication {
		r := app.Replication{Of: target.URL, PromoteAfter: promoteAfter}
		st, err := replica.ReadStatus(dataDir)
		if err != nil {
			r.Err = err
			return r
		}
		now := time.Now()
		r.Lag, r.LastCommit = st.Lag(now), st.LastCommit()
		r.PrimarySilent, r.SilenceKnown = st.Silent(now)
		return r
	}
}
