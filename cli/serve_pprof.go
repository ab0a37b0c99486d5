package cli

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// servePprof serves Go's profiler on the loopback address in XR_PPROF
// (e.g. 127.0.0.1:6060) when set: how a profile of `xr serve` under the
// RADIUS yardstick's load is taken (docs/radius.md). Off by default; an
// address off loopback is refused, the profiler is not for the network.
func servePprof(log *slog.Logger) error {
	addr := os.Getenv("XR_PPROF")
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("XR_PPROF=%q: want a loopback address and port, e.g. 127.0.0.1:6060", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("XR_PPROF: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Warn("profiler stopped", "err", err)
		}
	}()
	log.Warn("Go profiler serving (XR_PPROF)", "addr", ln.Addr().String())
	return nil
}
