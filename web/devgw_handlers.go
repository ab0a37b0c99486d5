package web

import (
	"io"
	"mime"
	"net/http"

	"xr/app/devgw"
)

// devgwWS is /admin/devgw/ssh/ws, every method: the gateway checks its
// ticket and relays the console (a GET with a WebSocket upgrade); it
// returns when the console ends.
func (s *Server) devgwWS(c *Ctx) error {
	return devgw.Serve(c.W, c.R, c.Tenant, c.IP)
}

// devgwTarget parses {kind}/{id}.
func devgwTarget(c *Ctx) (string, int64, error) {
	id, err := c.ID("id")
	return c.R.PathValue("kind"), id, err
}

func (s *Server) getDevgwCredentials(c *Ctx) error {
	kind, id, err := devgwTarget(c)
	if err != nil {
		return err
	}
	out, err := devgw.GetCredentials(c.R.Context(), c.Actor, kind, id)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) putDevgwCredentials(c *Ctx) error {
	kind, id, err := devgwTarget(c)
	if err != nil {
		return err
	}
	// The code before the body: 403 before validation.
	if err := c.Actor.Require(devgw.PermNasRemote, devgw.PermNasDevicesRemote); err != nil {
		return err
	}
	var in devgw.CredentialsInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := devgw.PutCredentials(c.R.Context(), c.Actor, kind, id, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) acceptDevgwHostKey(c *Ctx) error {
	kind, id, err := devgwTarget(c)
	if err != nil {
		return err
	}
	var in devgw.AcceptHostKeyInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := devgw.AcceptHostKey(c.R.Context(), c.Actor, kind, id, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) closeConsoleSession(c *Ctx) error {
	sid, err := c.ID("sid")
	if err != nil {
		return err
	}
	out, err := devgw.CloseSession(c.R.Context(), c.Actor, sid)
	if err != nil {
		return err
	}
	return c.OK(out)
}

// consoleRecording downloads a console's asciicast v2 recording.
func (s *Server) consoleRecording(c *Ctx) error {
	sid, err := c.ID("sid")
	if err != nil {
		return err
	}
	rc, name, err := devgw.OpenRecording(c.R.Context(), c.Actor, sid)
	if err != nil {
		return err
	}
	defer rc.Close()
	h := c.W.Header()
	h.Set("Content-Type", "application/x-asciicast")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("Cache-Control", "private, no-store")
	c.W.WriteHeader(http.StatusOK)
	_, err = io.Copy(c.W, rc)
	return err
}
