package web

import (
	"xr/app"
)

// storageNotReady is /readyz's answer while a database file refuses writes
// for lack of space: 503 ERR_MAINTENANCE storage_full with the number of
// such files (their names are in /metrics: storageCollector in
// web/metrics.go).
func (s *Server) storageNotReady() error {
	st := s.app.StorageStatus()
	if len(st.Full) == 0 {
		return nil
	}
	return app.ErrStorageFull(nil).With("files", len(st.Full))
}
