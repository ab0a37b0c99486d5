package web

import (
	"xr/app/tickets"
)

// Handlers of the support tickets rows (tickets_routes.go); most rows name
// their app function through the adapters.

func (s *Server) applyTicketMacro(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	mid, err := c.ID("macroId")
	if err != nil {
		return err
	}
	out, err := tickets.ApplyMacro(c.R.Context(), c.Actor, id, mid)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) updateTicketField(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	fid, err := c.ID("fid")
	if err != nil {
		return err
	}
	var in tickets.FieldInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := tickets.UpdateField(c.R.Context(), c.Actor, id, fid, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}

func (s *Server) deleteTicketField(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	fid, err := c.ID("fid")
	if err != nil {
		return err
	}
	if err := tickets.DeleteField(c.R.Context(), c.Actor, id, fid); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": fid})
}

func (s *Server) attachTicket(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	max, err := tickets.SettingTicketsAttachmentMax.Get(c.R.Context(), c.Tenant.DB.R)
	if err != nil {
		return err
	}
	name, src, fields, err := UploadPart(c, max)
	if err != nil {
		return err
	}
	internal := truthy(fields["internal"]) || truthy(c.Query().Get("internal"))
	out, err := tickets.Attach(c.R.Context(), c.Actor, id, name, src, internal)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func ticketAtt(c *Ctx) (int64, int64, error) {
	id, err := c.ID("id")
	if err != nil {
		return 0, 0, err
	}
	att, err := c.ID("attId")
	return id, att, err
}

func (s *Server) downloadTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	f, err := tickets.GetAttachment(c.R.Context(), c.Actor, id, att)
	if err != nil {
		return err
	}
	return serveFile(c, f)
}

func (s *Server) deleteTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	if err := tickets.DeleteAttachment(c.R.Context(), c.Actor, id, att); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": att})
}

// ---- Portal ----

func (s *Server) portalAttachTicket(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	max, err := tickets.SettingTicketsAttachmentMax.Get(c.R.Context(), c.Tenant.DB.R)
	if err != nil {
		return err
	}
	name, src, _, err := UploadPart(c, max)
	if err != nil {
		return err
	}
	out, err := tickets.PortalAttach(c.R.Context(), c.Actor, id, name, src)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) portalTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	f, err := tickets.PortalAttachment(c.R.Context(), c.Actor, id, att)
	if err != nil {
		return err
	}
	return serveFile(c, f)
}

func (s *Server) portalDeleteTicketAttachment(c *Ctx) error {
	id, att, err := ticketAtt(c)
	if err != nil {
		return err
	}
	if err := tickets.PortalDeleteAttachment(c.R.Context(), c.Actor, id, att); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": att})
}
