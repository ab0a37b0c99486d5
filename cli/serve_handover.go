package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A promoted standby re-executes itself (reexec) and comes back as the
// primary. Its listening sockets are handed over across the re-execution
// rather than closed: the kernel keeps them open, so what NASes and
// browsers send in that second waits in the sockets' queues and the new
// process answers it, instead of the port being closed (a NAS would count
// those as lost). The sockets go to the new process as open descriptors
// named in handoverEnv ("udp 127.0.0.1:1812=5;tcp :8080=6").
const handoverEnv = "XR_HANDOVER_FDS"

// sockets opens xr serve's listeners, taking the ones handed over when
// there are, and remembers them for the next handover.
type sockets struct {
	mu        sync.Mutex
	inherited map[string]*os.File // by key, until taken
	opened    map[string]filer    // by key
	kept      []*os.File          // duplicates held until the exec
	env       string              // the handoverEnv entry naming them (keep)
}

func newSockets() *sockets {
	return &sockets{inherited: map[string]*os.File{}, opened: map[string]filer{}}
}

// filer is a listener whose descriptor can be duplicated.
type filer interface{ File() (*os.File, error) }

// inheritedSockets reads the sockets handed over to this process.
func inheritedSockets() *sockets {
	s := newSockets()
	spec := os.Getenv(handoverEnv)
	_ = os.Unsetenv(handoverEnv) // not for the follower, nor for a later exec
	for item := range strings.SplitSeq(spec, ";") {
		key, fd, ok := strings.Cut(item, "=")
		n, err := strconv.Atoi(fd)
		if !ok || err != nil || n < 3 {
			continue
		}
		closeOnExec(n) // no child of this process (the follower) may hold it
		s.inherited[key] = os.NewFile(uintptr(n), key)
	}
	return s
}

// listen is a TCP listener on addr.
func (s *sockets) listen(addr string) (net.Listener, error) {
	key := "tcp " + addr
	if f := s.take(key); f != nil {
		ln, err := net.FileListener(f)
		if err == nil {
			s.remember(key, ln.(*net.TCPListener))
		}
		return ln, errors.Join(err, f.Close())
	}
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		s.remember(key, ln.(*net.TCPListener))
	}
	return ln, err
}

// listenPacket is a UDP socket on addr.
func (s *sockets) listenPacket(addr string) (net.PacketConn, error) {
	key := "udp " + addr
	if f := s.take(key); f != nil {
		c, err := net.FilePacketConn(f)
		if err == nil {
			s.remember(key, c.(*net.UDPConn))
		}
		return c, errors.Join(err, f.Close())
	}
	c, err := net.ListenPacket("udp", addr)
	if err == nil {
		s.remember(key, c.(*net.UDPConn))
	}
	return c, err
}

func (s *sockets) take(key string) *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.inherited[key]
	delete(s.inherited, key)
	return f
}

func (s *sockets) remember(key string, l filer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened[key] = l
}

// closeUnused closes the sockets handed over that this run did not take
// (its flags changed).
func (s *sockets) closeUnused() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, f := range s.inherited {
		_ = f.Close()
		delete(s.inherited, key)
	}
}

// keep duplicates every listener before the servers close theirs, so the
// sockets stay open until the exec, and sets env, the environment entry
// naming them for the next process.
func (s *sockets) keep() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var spec []string
	for key, l := range s.opened {
		f, err := l.File()
		if err != nil {
			return fmt.Errorf("keep %s open: %w", key, err)
		}
		s.kept = append(s.kept, f)
		fd, err := inheritable(f)
		if err != nil {
			return fmt.Errorf("keep %s open: %w", key, err)
		}
		spec = append(spec, key+"="+strconv.Itoa(fd))
	}
	s.env = handoverEnv + "=" + strings.Join(spec, ";")
	return nil
}
