package web

import (
	"xr/app"
	"xr/app/subs"
	"xr/app/tickets"
)

// ticketsRoutes are the support tickets group: the spec's rows, then the
// rows of the group the spec does not show (one ticket, its conversation,
// state actions, assignment, macros applied, SLA editing).
func (s *Server) ticketsRoutes() []Route {
	view := []app.Perm{tickets.PermTicketsView}
	reply := []app.Perm{tickets.PermTicketsReply}
	assign := []app.Perm{tickets.PermTicketsAssign}
	config := []app.Perm{tickets.PermTicketsConfig}
	return []Route{
		// Support tickets
		{M: "GET", P: "/tickets", Access: Staff, Perms: view, H: listCall(tickets.ListSpec(), tickets.List), Resp: tickets.Ticket{}, List: true, Summary: "list tickets: q (number, subject, requester, message text), filters state, priority, category, assignee (id or me), team, unassigned, breached, requester, subscriber, tag, spam; sorts updated_at, created_at, number, priority, state, subject, due times"},
		{M: "POST", P: "/tickets", Access: Staff, Perms: reply, H: createCall(tickets.Create), Req: tickets.CreateInput{}, Resp: tickets.Detail{}, Status: 201, Summary: "open a ticket for a subscriber (user_id) or an email; assigned by the tenant's strategy unless assignee_id is given"},
		{M: "GET", P: "/tickets/assignees", Access: Staff, Perms: view, H: allCall(tickets.ListAssignees), Resp: tickets.Assignee{}, List: true, Summary: "the managers who may take tickets (active, holding prm_tickets_reply), with their open count"},
		{M: "GET", P: "/tickets/assignment-strategies", Access: Staff, Perms: config, H: actorCall(tickets.GetStrategies), Resp: tickets.StrategiesView{}, Summary: "the assignment strategies and the tenant's current one (setting tickets_assignment_strategy)"},
		{M: "GET", P: "/tickets/blocklist", Access: Staff, Perms: config, H: allCall(tickets.ListBlocks), Resp: tickets.Block{}, List: true, Summary: "the blocklist: emails, domains and subscribers whose new tickets are refused or marked spam"},
		{M: "POST", P: "/tickets/blocklist", Access: Staff, Perms: config, H: createCall(tickets.AddBlock), Req: tickets.BlockInput{}, Resp: tickets.Block{}, Status: 201, Summary: "add a blocklist entry (kind email, domain or subscriber; action refuse or spam)"},
		{M: "POST", P: "/tickets/blocklist/bulk-delete", Access: Staff, Perms: config, H: bodyCall(tickets.BulkDeleteBlocks), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "remove blocklist entries"},
		{M: "DELETE", P: "/tickets/blocklist/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeleteBlock), Summary: "remove a blocklist entry"},
		{M: "POST", P: "/tickets/bulk-assign", Access: Staff, Perms: assign, H: bodyCall(tickets.BulkAssign), Req: tickets.BulkAssignInput{}, Resp: app.BulkResult{}, Summary: "assign tickets to one agent (assignee_id null unassigns)"},
		{M: "POST", P: "/tickets/bulk-category", Access: Staff, Perms: reply, H: bodyCall(tickets.BulkCategory), Req: tickets.BulkCategoryInput{}, Resp: app.BulkResult{}, Summary: "set the category of tickets (due times recomputed)"},
		{M: "POST", P: "/tickets/bulk-close", Access: Staff, Perms: reply, H: bodyCall(tickets.BulkClose), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "close tickets"},
		{M: "POST", P: "/tickets/bulk-priority", Access: Staff, Perms: assign, H: bodyCall(tickets.BulkPriority), Req: tickets.BulkPriorityInput{}, Resp: app.BulkResult{}, Summary: "set the priority of tickets (due times recomputed)"},
		{M: "POST", P: "/tickets/bulk-reopen", Access: Staff, Perms: reply, H: bodyCall(tickets.BulkReopen), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "reopen resolved tickets, and closed ones within tickets_reopen_days of closing"},
		{M: "POST", P: "/tickets/bulk-resolve", Access: Staff, Perms: reply, H: bodyCall(tickets.BulkResolve), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "resolve tickets"},
		{M: "POST", P: "/tickets/bulk-snooze", Access: Staff, Perms: reply, H: bodyCall(tickets.BulkSnooze), Req: tickets.BulkSnoozeInput{}, Resp: app.BulkResult{}, Summary: "snooze tickets until a time (they reopen then)"},
		{M: "POST", P: "/tickets/bulk-team", Access: Staff, Perms: assign, H: bodyCall(tickets.BulkTeam), Req: tickets.BulkTeamInput{}, Resp: app.BulkResult{}, Summary: "set the team of tickets"},
		{M: "GET", P: "/tickets/canned-replies", Access: Staff, Perms: config, H: allCall(tickets.ListCanned), Resp: tickets.CannedReply{}, List: true, Summary: "canned replies (variables {requester}, {ticket_number}, {agent}, {subject})"},
		{M: "POST", P: "/tickets/canned-replies", Access: Staff, Perms: config, H: createCall(tickets.CreateCanned), Req: tickets.CannedInput{}, Resp: tickets.CannedReply{}, Status: 201, Summary: "add a canned reply"},
		{M: "PUT", P: "/tickets/canned-replies/{id}", Access: Staff, Perms: config, H: idBodyCall(tickets.PutCanned), Req: tickets.CannedInput{}, Resp: tickets.CannedReply{}, Summary: "replace a canned reply"},
		{M: "DELETE", P: "/tickets/canned-replies/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeleteCanned), Summary: "delete a canned reply"},
		{M: "GET", P: "/tickets/categories", Access: Staff, Perms: config, H: allCall(tickets.ListCategories), Resp: tickets.Category{}, List: true, Summary: "ticket categories with their custom fields"},
		{M: "POST", P: "/tickets/categories", Access: Staff, Perms: config, H: createCall(tickets.CreateCategory), Req: tickets.CategoryInput{}, Resp: tickets.Category{}, Status: 201, Summary: "add a category"},
		{M: "PATCH", P: "/tickets/categories/{id}", Access: Staff, Perms: config, H: idBodyCall(tickets.UpdateCategory), Req: tickets.CategoryInput{}, Resp: tickets.Category{}, Summary: "change a category"},
		{M: "DELETE", P: "/tickets/categories/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeleteCategory), Summary: "delete a category (its tickets keep no category)"},
		{M: "GET", P: "/tickets/categories/{id}/fields", Access: Staff, Perms: config, H: idAllCall(tickets.ListFields), Resp: subs.FormField{}, List: true, Summary: "a category's custom fields, in order"},
		{M: "POST", P: "/tickets/categories/{id}/fields", Access: Staff, Perms: config, H: idCreateCall(tickets.CreateField), Req: tickets.FieldInput{}, Resp: subs.FormField{}, Status: 201, Summary: "add a custom field (the rules of the subscriber custom forms)"},
		{M: "PATCH", P: "/tickets/categories/{id}/fields/{fid}", Access: Staff, Perms: config, H: s.updateTicketField, Req: tickets.FieldInput{}, Resp: subs.FormField{}, Summary: "change a custom field (name and type are fixed)"},
		{M: "DELETE", P: "/tickets/categories/{id}/fields/{fid}", Access: Staff, Perms: config, H: s.deleteTicketField, Summary: "delete a custom field"},
		{M: "GET", P: "/tickets/counts", Access: Staff, Perms: view, H: actorCall(tickets.GetCounts), Resp: tickets.Counts{}, Summary: "ticket counts per state plus mine, unassigned and breached (cheap enough to poll)"},
		{M: "GET", P: "/tickets/form", Access: Staff, Perms: view, H: actorCall(tickets.GetForm), Resp: tickets.Form{}, Summary: "what a new-ticket form needs: priorities, categories with their fields, attachment limits"},
		{M: "GET", P: "/tickets/macros", Access: Staff, Perms: config, H: allCall(tickets.ListMacros), Resp: tickets.Macro{}, List: true, Summary: "macros: a reply plus actions (state, priority, category, assignee, tags)"},
		{M: "POST", P: "/tickets/macros", Access: Staff, Perms: config, H: createCall(tickets.CreateMacro), Req: tickets.MacroInput{}, Resp: tickets.Macro{}, Status: 201, Summary: "add a macro"},
		{M: "PUT", P: "/tickets/macros/{id}", Access: Staff, Perms: config, H: idBodyCall(tickets.PutMacro), Req: tickets.MacroInput{}, Resp: tickets.Macro{}, Summary: "replace a macro"},
		{M: "DELETE", P: "/tickets/macros/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeleteMacro), Summary: "delete a macro"},
		{M: "GET", P: "/tickets/sla/breaches", Access: Staff, Perms: view, H: listCall(tickets.BreachSpec(), tickets.Breaches), Resp: tickets.Ticket{}, List: true, Summary: "active tickets past a due time, or due within `within` minutes"},
		{M: "GET", P: "/tickets/sla/calendars", Access: Staff, Perms: config, H: allCall(tickets.ListCalendars), Resp: tickets.Calendar{}, List: true, Summary: "SLA calendars: business hours per weekday, holidays, time zone"},

		// Rows of the group beyond the spec's listing.
		{M: "POST", P: "/tickets/sla/calendars", Access: Staff, Perms: config, H: createCall(tickets.CreateCalendar), Req: tickets.CalendarInput{}, Resp: tickets.Calendar{}, Status: 201, Summary: "add an SLA calendar"},
		{M: "PUT", P: "/tickets/sla/calendars/{id}", Access: Staff, Perms: config, H: idBodyCall(tickets.PutCalendar), Req: tickets.CalendarInput{}, Resp: tickets.Calendar{}, Summary: "replace an SLA calendar"},
		{M: "DELETE", P: "/tickets/sla/calendars/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeleteCalendar), Summary: "delete an SLA calendar (409 in_use while a policy uses it)"},
		{M: "GET", P: "/tickets/sla/policies", Access: Staff, Perms: config, H: allCall(tickets.ListPolicies), Resp: tickets.Policy{}, List: true, Summary: "SLA policies: first-response and resolution targets in business minutes per priority and/or category"},
		{M: "POST", P: "/tickets/sla/policies", Access: Staff, Perms: config, H: createCall(tickets.CreatePolicy), Req: tickets.PolicyInput{}, Resp: tickets.Policy{}, Status: 201, Summary: "add an SLA policy"},
		{M: "PUT", P: "/tickets/sla/policies/{id}", Access: Staff, Perms: config, H: idBodyCall(tickets.PutPolicy), Req: tickets.PolicyInput{}, Resp: tickets.Policy{}, Summary: "replace an SLA policy"},
		{M: "DELETE", P: "/tickets/sla/policies/{id}", Access: Staff, Perms: config, H: idAction(tickets.DeletePolicy), Summary: "delete an SLA policy"},
		{M: "GET", P: "/tickets/{id}", Access: Staff, Perms: view, H: idCall(tickets.Get), Resp: tickets.Detail{}, Summary: "one ticket with its messages (internal notes included) and attachments"},
		{M: "PATCH", P: "/tickets/{id}", Access: Staff, Perms: reply, H: idBodyCall(tickets.Update), Req: tickets.UpdateInput{}, Resp: tickets.Ticket{}, Summary: "change subject, priority, category, tags, custom fields or the spam mark"},
		{M: "POST", P: "/tickets/{id}/messages", Access: Staff, Perms: reply, H: idCreateCall(tickets.Reply), Req: tickets.ReplyInput{}, Resp: tickets.Detail{}, Status: 201, Summary: "a public reply (the requester is emailed) or an internal note; optional canned_reply_id, attachment_ids and a state action after"},
		{M: "POST", P: "/tickets/{id}/state", Access: Staff, Perms: reply, H: idBodyCall(tickets.ChangeState), Req: tickets.StateInput{}, Resp: tickets.Ticket{}, Summary: "a state action: open, pend, snooze (until), resolve, close, reopen; 409 for a move the state machine forbids"},
		{M: "POST", P: "/tickets/{id}/assign", Access: Staff, Perms: assign, H: idBodyCall(tickets.Assign), Req: tickets.AssignInput{}, Resp: tickets.Ticket{}, Summary: "set the assignee (emailed) and/or team"},
		{M: "POST", P: "/tickets/{id}/macros/{macroId}/apply", Access: Staff, Perms: reply, H: s.applyTicketMacro, Resp: tickets.Detail{}, Summary: "apply a macro: its reply then its actions, in one transaction"},
		{M: "POST", P: "/tickets/{id}/attach", Access: Staff, Perms: reply, File: true, H: s.attachTicket, Resp: tickets.Attachment{}, Status: 201, Summary: "attach a file (multipart file; internal=true hides it from the subscriber): images, PDF, text"},
		{M: "GET", P: "/tickets/{id}/attachments/{attId}/download", Access: Staff, Perms: view, File: true, H: s.downloadTicketAttachment, Content: "*/*", Summary: "the file: inline for images and PDF, else as an attachment; nosniff"},
		{M: "DELETE", P: "/tickets/{id}/attachments/{attId}", Access: Staff, Perms: reply, H: s.deleteTicketAttachment, Summary: "delete an attachment and its file"},
	}
}

// portalTicketsRoutes are the portal's ticket rows (under /portal and /user).
func (s *Server) portalTicketsRoutes() []Route {
	return twins([]Route{
		{M: "GET", P: "/portal/tickets", Access: Subscriber, H: listCall(tickets.PortalSpec(), tickets.PortalList), Resp: tickets.PortalTicket{}, List: true, Summary: "the subscriber's tickets (q: number or subject; filter state)"},
		{M: "POST", P: "/portal/tickets", Access: Subscriber, H: createCall(tickets.PortalCreate), Req: tickets.PortalCreateInput{}, Resp: tickets.PortalDetail{}, Status: 201, Summary: "open a ticket as the subscriber"},
		{M: "GET", P: "/portal/tickets/form", Access: Subscriber, H: actorCall(tickets.PortalForm), Resp: tickets.Form{}, Summary: "what the portal's new-ticket form needs (categories offered on the portal)"},
		{M: "GET", P: "/portal/tickets/{id}", Access: Subscriber, H: idCall(tickets.PortalGet), Resp: tickets.PortalDetail{}, Summary: "one of the subscriber's tickets with its public messages"},
		{M: "POST", P: "/portal/tickets/{id}/attach", Access: Subscriber, File: true, H: s.portalAttachTicket, Resp: tickets.Attachment{}, Status: 201, Summary: "attach a file to one of the subscriber's tickets (multipart file): images, PDF, text"},
		{M: "GET", P: "/portal/tickets/{id}/attachments/{attId}", Access: Subscriber, File: true, H: s.portalTicketAttachment, Content: "*/*", Summary: "the file: inline for images and PDF, else as an attachment; nosniff"},
		{M: "DELETE", P: "/portal/tickets/{id}/attachments/{attId}", Access: Subscriber, H: s.portalDeleteTicketAttachment, Summary: "delete a file the subscriber attached"},
		{M: "POST", P: "/portal/tickets/{id}/messages", Access: Subscriber, H: idCreateCall(tickets.PortalReply), Req: tickets.PortalReplyInput{}, Resp: tickets.PortalDetail{}, Status: 201, Summary: "the subscriber's reply (reopens a resolved ticket)"},
	})
}
