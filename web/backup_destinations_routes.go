package web

import (
	"xr/app"
	"xr/app/backups"
)

// backupDestinationsRoutes are the spec's "Backup destinations" group
// (issue 13): where verified backups are copied. {provider} is a
// destination's id or name.
func (s *Server) backupDestinationsRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/backup/destinations", Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: actorCall(backups.ListDestinations), Resp: backups.DestinationList{},
			Summary: "the tenant's backup destinations (credentials never shown) and whether copies are encrypted"},
		{M: "PATCH", P: "/admin/backup/destinations", Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: bodyCall(backups.PatchDestinations), Req: backups.DestinationPatch{}, Resp: backups.DestinationList{},
			Summary: "change one destination (provider: its id or name) and/or the encryption passphrase"},
		{M: "POST", P: "/admin/backup/destinations", Status: 201, Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: s.createBackupDestination, Req: backups.DestinationInput{}, Resp: backups.Destination{},
			Summary: "add a destination of a kind of remote-types; hosts follow the webhook egress rules"},
		{M: "DELETE", P: "/admin/backup/destinations/{provider}", Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: s.deleteBackupDestination, Resp: backups.Deleted{},
			Summary: "delete a destination (copies already made stay where they are)"},
		{M: "POST", P: "/admin/backup/destinations/{provider}/connect", Access: Staff, Perms: []app.Perm{app.PermSettings}, Buckets: []string{"t_probe"},
			H: providerCall(backups.ConnectDestination), Resp: backups.Destination{},
			Summary: "connect and authenticate (pins an SFTP host key on the first connect)"},
		{M: "POST", P: "/admin/backup/destinations/{provider}/test", Access: Staff, Perms: []app.Perm{app.PermSettings}, Buckets: []string{"t_probe"},
			H: providerCall(backups.TestDestination), Resp: backups.TestResult{},
			Summary: "write, read back and delete a probe object; a failure is 502 naming details.step"},
		{M: "GET", P: "/admin/backup/remote-types", Access: Staff, Perms: []app.Perm{app.PermSettings},
			H: allCall(backups.RemoteTypes), Resp: backups.RemoteType{}, List: true,
			Summary: "the kinds of destination (s3, sftp, local) and the fields each needs"},
	}
}
