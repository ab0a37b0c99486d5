package web

import (
	"io"
	"time"

	"xr/app"
	"xr/app/backups"
)

// rootRoutes live outside /api/v1: probes, the OpenAPI document, metrics.
func (s *Server) rootRoutes() []Route {
	return []Route{
		{M: "GET", P: "/healthz", Root: true, Access: Public, H: s.healthz, Summary: "process is up"},
		{M: "GET", P: "/readyz", Root: true, Access: Public, H: s.readyz, Summary: "databases are open", Reasons: []string{"503 instance_db_unavailable", "503 storage_full", "503 fenced"}},
		{M: "GET", P: "/openapi.json", Root: true, Access: Public, H: s.openapi, Summary: "this document"},
		// The API reference, generated from this table (web/docs.go).
		{M: "GET", P: "/docs", Root: true, Access: Public, H: s.docsPage, Content: "text/html", Summary: "the API reference for people (Redoc over /openapi.json)"},
		{M: "GET", P: "/docs/redoc.standalone.js", Root: true, Access: Public, H: s.docsScript, Content: "text/javascript", Summary: "the reference's renderer (Redoc 2.5.2, vendored)"},
		{M: "GET", P: "/docs/ops/{op}", Root: true, Access: Public, H: s.docsOp, Content: "text/markdown", Summary: "one operation as Markdown: {op} is the operationId followed by .md"},
		{M: "GET", P: "/llms.txt", Root: true, Access: Public, H: s.docsText(func(d *docsSet) string { return d.index }), Content: "text/markdown", Summary: "index of every operation for language models (llmstxt.org)"},
		{M: "GET", P: "/llms-full.txt", Root: true, Access: Public, H: s.docsText(func(d *docsSet) string { return d.full }), Content: "text/markdown", Summary: "every operation's page in one Markdown file"},
		{M: "GET", P: "/skill.md", Root: true, Access: Public, H: s.docsText(func(d *docsSet) string { return d.skill }), Content: "text/markdown", Summary: "how an agent uses this API (a skill file)"},
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
	if f, ok := s.app.Fenced(); ok { // another box holds the replica: send nothing here
		return app.ErrMaintenance("fenced", time.Minute).With("holder", f.Holder).With("generation", f.Generation).
			With("since", f.Since.Format("2006-01-02T15:04:05Z"))
	}
	st := s.app.TenantStats()
	out := map[string]any{"ok": true, "tenants": st.Known, "open_tenant_files": st.Open}
	if sb := s.standbyState(); sb != nil {
		out["standby"] = sb
	}
	return c.OK(out)
}

// metrics serves the Prometheus registry (web/metrics.go); areas that
// print the text format themselves are merged in through a writer.
func (s *Server) metrics(c *Ctx) error {
	return s.serveMetrics(c, func(w io.Writer) { backups.WriteMetrics(c.R.Context(), s.app, w) })
}
