package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"xr/app/replica"
)

// A running standby (xr serve --standby-of) listens on a unix socket in
// its data directory, DATA/standby/control.sock (mode 0600: only the
// box's operator account), for xr promote. On "promote" it stops its
// follower after a last catch-up, takes the replica over under the next
// generation (replica.Promote), answers with it, and re-executes itself in
// place (the same process id and flags): the promotion record makes it
// the primary of that replica, which applies the accounting journal
// before it serves again, then replicates under the new generation.

// controlPath is a standby's control socket.
func controlPath(dataDir string) string { return filepath.Join(dataDir, "standby", "control.sock") }

// controlReply is the standby's answer to a promote request.
type controlReply struct {
	Generation uint64 `json:"generation,omitempty"`
	Error      string `json:"error,omitempty"`
}

func promoteCmd(g *globals) *cobra.Command {
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "promote",
		Short: "turn the running standby of --data into the primary (it applies its accounting journal and replicates under a new generation)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			p, err := promote(ctx, g.data)
			if err != nil {
				return err
			}
			g.print(p, fmt.Sprintf("promoted: %s is the primary of %s, generation %d; accounting journal applied: %s",
				g.data, p.Of, p.Gen, journalText(p.Journal)))
			return nil
		},
	}
	cmd.Flags().DurationVar(&wait, "wait", 2*time.Minute, "how long to wait for the box to serve as the primary")
	return cmd
}

// promote asks the standby serving dataDir to promote itself and waits
// until it serves as the primary.
func promote(ctx context.Context, dataDir string) (replica.Promotion, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", controlPath(dataDir))
	if err != nil {
		if p, ok, _ := replica.ReadPromotion(dataDir); ok && !p.Primary.IsZero() {
			return p, fmt.Errorf("%s was already promoted (generation %d, %s)", dataDir, p.Gen, p.Primary.Format(time.RFC3339))
		}
		return replica.Promotion{}, fmt.Errorf("%s is not a running standby (xr serve --standby-of): %w", dataDir, err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write([]byte("promote\n")); err != nil {
		return replica.Promotion{}, err
	}
	line, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		return replica.Promotion{}, fmt.Errorf("the standby did not answer: %w", err)
	}
	var rep controlReply
	if err := json.Unmarshal(line, &rep); err != nil {
		return replica.Promotion{}, fmt.Errorf("the standby's answer: %w", err)
	}
	if rep.Error != "" {
		return replica.Promotion{}, fmt.Errorf("promotion refused: %s", rep.Error)
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if p, ok, err := replica.ReadPromotion(dataDir); err == nil && ok && p.Gen == rep.Generation && !p.Primary.IsZero() {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return replica.Promotion{}, fmt.Errorf("generation %d taken over, but the box does not serve as the primary yet (see its log): %w", rep.Generation, ctx.Err())
		case <-tick.C:
		}
	}
}

func journalText(j any) string {
	b, err := json.Marshal(j)
	if err != nil || string(b) == "null" {
		return "nothing"
	}
	return string(b)
}

// controlListener is a standby's control socket: promote requests arrive
// on requests, each answered through its reply channel.
type controlListener struct {
	ln       net.Listener
	requests chan chan controlReply
}

func listenControl(dataDir string) (*controlListener, error) {
	path := controlPath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// A socket left by a process that died: nobody listens on it.
	if c, err := net.Dial("unix", path); err == nil {
		_ = c.Close()
		return nil, fmt.Errorf("%s: another standby serves this data directory", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, errors.Join(err, ln.Close())
	}
	cl := &controlListener{ln: ln, requests: make(chan chan controlReply)}
	go cl.accept()
	return cl, nil
}

func (cl *controlListener) accept() {
	for {
		c, err := cl.ln.Accept()
		if err != nil {
			return
		}
		go cl.serve(c)
	}
}

func (cl *controlListener) serve(c net.Conn) {
	defer func() { _ = c.Close() }()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	var rep controlReply
	if cmd := strings.TrimSpace(line); cmd != "promote" {
		rep.Error = fmt.Sprintf("unknown request %q", cmd)
	} else {
		reply := make(chan controlReply, 1)
		cl.requests <- reply
		rep = <-reply
	}
	b, _ := json.Marshal(rep)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Write(append(b, '\n'))
}

func (cl *controlListener) close() { _ = cl.ln.Close() }
