package web

import (
	"net/http"

	"xr/app"
)

// rootRoutes live outside /api/v1: probes, the OpenAPI document, metrics.
func (s *Server) rootRoutes() []Route {
	return []Route{
		{M: "GET", P: "/healthz", Root: true, Access: Public, H: s.healthz, Summary: "process is up"},
		{M: "GET", P: "/readyz", Root: true, Access: Public, H: s.readyz, Summary: "databases are open"},
		{M: "GET", P: "/openapi.json", Root: true, Access: Public, H: s.openapi, Summary: "this document"},
		{M: "GET", P: "/metrics", Root: true, Access: Public, H: s.metrics, Summary: "Prometheus metrics"},
	}
}

func (s *Server) healthz(c *Ctx) error {
	return c.OK(map[string]any{"ok": true, "version": app.Version})
}

func (s *Server) readyz(c *Ctx) error {
	if err := s.app.Inst.R.PingContext(c.R.Context()); err != nil {
		return app.ErrUnavailable("instance_db_unavailable")
	}
	if err := s.storageNotReady(); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "tenants": len(s.app.TenantSlugs()), "open_tenant_files": s.app.Pool.OpenCount()})
}

func (s *Server) metrics(c *Ctx) error {
	c.W.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	c.W.WriteHeader(http.StatusOK)
	if s.Metrics != nil {
		s.Metrics(c.W)
	}
	s.writeStorageMetrics(c.W)
	return nil
}
