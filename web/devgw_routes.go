package web

import (
	"xr/app"
	"xr/app/devgw"
)

// devgwRoutes are the device gateway (SSH to a NAS or monitored device over a WebSocket) and the console sessions it records.
func (s *Server) devgwRoutes() []Route {
	remote := []app.Perm{devgw.PermNasRemote, devgw.PermNasDevicesRemote}
	// The spec lists ten methods for the gateway, Public: the endpoint does
	// its own credential check, so every method gets the ticket's 401s and,
	// with a valid ticket but no WebSocket upgrade (only a GET can be
	// one), the same 400 websocket_required as a bad upgrade.
	wsReasons := []string{"401 ticket_required", "401 ticket_invalid", "401 ticket_expired", "400 websocket_required"}
	ws := func(m string) Route {
		return Route{M: m, P: "/admin/devgw/ssh/ws", Access: Public, H: s.devgwWS, Reasons: wsReasons,
			Summary: "the console gateway's path: the ticket is checked (401), then 400 websocket_required (the console opens with GET and a WebSocket upgrade)"}
	}
	return []Route{
		{M: "GET", P: "/admin/console-sessions", Access: Staff, Perms: remote, List: true, H: listCall(devgw.SessionListSpec, devgw.ListSessions), Resp: devgw.Session{},
			Summary: "consoles of the caller's scope, live and past: who, which NAS or device, from which address, started, ended, bytes each way, end reason; " +
				"filters state (live|ended), kind (nas|device), target_id, manager_id, since/until (started at); q matches the target and the manager; " +
				"the NAS remote code sees NAS consoles, the devices remote code device consoles",
			Reasons: []string{"400 invalid_enum"}},
		{M: "DELETE", P: "/admin/console-sessions", Access: Staff, Perms: remote, H: actorCall(devgw.CloseAll), Resp: devgw.CloseAllResult{},
			Summary: "close every live console of the caller's scope: each socket and SSH channel ends at once (reason closed_by_staff)"},
		{M: "POST", P: "/admin/console-sessions/bulk-close", Access: Staff, Perms: remote, H: bodyCall(devgw.BulkClose), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "close the listed live consoles; an ended one fails with session_not_live, one outside the scope with not_authorized",
			Reasons: []string{"400 ids_required", "400 too_many_ids", "400 invalid_id"}},
		{M: "DELETE", P: "/admin/console-sessions/{sid}", Access: Staff, Perms: remote, H: s.closeConsoleSession, Resp: devgw.CloseResult{},
			Summary: "close a live console: its socket and SSH channel end within a second and its row is ended (reason closed_by_staff) before the answer",
			Reasons: []string{"409 session_not_live"}},
		{M: "GET", P: "/admin/console-sessions/{sid}/recording", Access: Staff, Perms: []app.Perm{devgw.PermNasRemote}, File: true, H: s.consoleRecording,
			Content: "application/x-asciicast",
			Summary: "download a console's recording: its output (never its input) as asciicast v2, as an attachment; 404 when it was not recorded (setting devgw_record)"},
		{M: "POST", P: "/admin/devgw/tickets", Access: Staff, Perms: remote, Buckets: []string{"t_probe"}, NoImpersonation: true, H: createCall(devgw.MintTicket), Status: 201,
			Req: devgw.TicketInput{}, Resp: devgw.Ticket{},
			Summary: "mint a console ticket: single use, valid 30 s, bound to the caller, the NAS or device and the tenant; kind nas needs prm_nas_remote, " +
				"kind device prm_nas_devices_remote; url is the gateway's path with the ticket, to open with a WebSocket upgrade; " +
				"refused to a manager acting through login-as (the console's row names who opened it)",
			Reasons: []string{"400 invalid_kind", "400 id_required", "409 credentials_missing", "409 target_not_allowed", "409 console_limit_tenant", "409 console_limit_manager", "403 manager_required"}},
		{M: "GET", P: "/admin/devgw/credentials/{kind}/{id}", Access: Staff, Perms: remote, H: s.getDevgwCredentials, Resp: devgw.CredentialsView{},
			Summary: "a NAS's (kind nas) or monitored device's (kind device) SSH credentials: port, user, whether a password and a key are set (never them), the trusted host key and a pending one"},
		{M: "PUT", P: "/admin/devgw/credentials/{kind}/{id}", Access: Staff, Perms: remote, H: s.putDevgwCredentials, Req: devgw.CredentialsInput{}, Resp: devgw.CredentialsView{},
			Summary: "set a target's SSH port, user, password and private key (OpenSSH or PEM, no passphrase); fields left out keep their value, null clears a secret; secrets are sealed at rest and never returned",
			Reasons: []string{"400 invalid_port", "400 invalid_username", "400 invalid_password", "400 invalid_private_key"}},
		{M: "POST", P: "/admin/devgw/credentials/{kind}/{id}/accept-host-key", Access: Staff, Perms: remote, H: s.acceptDevgwHostKey, Req: devgw.AcceptHostKeyInput{}, Resp: devgw.CredentialsView{},
			Summary: "trust the host key the device offered after a change (the pending fingerprint, given again as checked on the device)",
			Reasons: []string{"400 fingerprint_required", "409 no_pending_host_key", "409 host_key_mismatch"}},
		ws("CONNECT"),
		ws("DELETE"),
		{M: "GET", P: "/admin/devgw/ssh/ws", Access: Public, Stream: true, H: s.devgwWS, Status: 101,
			Summary: "open a console (SSH to a NAS or monitored device) over a WebSocket: " + devgw.Protocol,
			Reasons: append(wsReasons, "409 credentials_missing", "409 target_not_allowed", "409 console_limit_tenant", "409 console_limit_manager")},
		ws("HEAD"),
		ws("OPTIONS"),
		ws("PATCH"),
		ws("POST"),
		ws("PUT"),
		ws("QUERY"),
		ws("TRACE"),
	}
}
