package web

import (
	"fmt"
	"io"
	"strconv"

	"xr/app"
)

// storageNotReady is /readyz's answer while a database file refuses writes
// for lack of space: 503 ERR_MAINTENANCE storage_full with the number of
// such files (their names are in /metrics).
func (s *Server) storageNotReady() error {
	st := s.app.StorageStatus()
	if len(st.Full) == 0 {
		return nil
	}
	return app.ErrStorageFull(nil).With("files", len(st.Full))
}

// writeStorageMetrics appends the storage-health series to /metrics.
func (s *Server) writeStorageMetrics(w io.Writer) {
	st := s.app.StorageStatus()
	full := 0
	if len(st.Full) > 0 {
		full = 1
	}
	fmt.Fprintf(w, "# HELP xr_storage_full 1 while some database file refuses writes for lack of space (SQLITE_FULL).\n# TYPE xr_storage_full gauge\nxr_storage_full %d\n", full)
	fmt.Fprintf(w, "# HELP xr_storage_full_files Database files refusing writes for lack of space, by file (instance or tenant slug).\n# TYPE xr_storage_full_files gauge\n")
	for _, f := range st.Full {
		fmt.Fprintf(w, "xr_storage_full_files{file=%s} 1\n", strconv.Quote(f))
	}
	fmt.Fprintf(w, "# HELP xr_storage_full_errors_total Writes refused with SQLITE_FULL since start.\n# TYPE xr_storage_full_errors_total counter\nxr_storage_full_errors_total %d\n", st.Failures)
}
