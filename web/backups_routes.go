package web

import (
	"xr/app"
	"xr/app/backups"
)

// backupsRoutes are the backups of a tenant (/admin/tools/backup*) and the
// factory reset.
func (s *Server) backupsRoutes() []Route {
	perm := []app.Perm{backups.PermToolsBackup}
	return []Route{
		{M: "GET", P: "/admin/tools/backup", Access: Staff, Perms: perm, H: allCall(backups.List), Resp: backups.Backup{}, List: true,
			Summary: "backups of the tenant with their verification and copies"},
		{M: "POST", P: "/admin/tools/backup", Access: Staff, Perms: perm, Buckets: []string{"t_heavy"},
			H: s.createBackup, Req: backups.CreateInput{}, Resp: backups.JobRef{}, Status: 202, Summary: "queue a backup (request_id optional)"},
		{M: "POST", P: "/admin/tools/backup/bulk-delete", Access: Staff, Perms: perm, H: bodyCall(backups.BulkDelete), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Summary: "delete backups and their files"},
		{M: "GET", P: "/admin/tools/backup/jobs", Access: Staff, Perms: perm, H: allCall(backups.Jobs), Resp: app.Job{}, List: true,
			Summary: "the latest backup and copy jobs with their progress"},
		{M: "GET", P: "/admin/tools/backup/jobs/{id}", Access: Staff, Perms: perm, H: idCall(backups.Job), Resp: app.Job{},
			Summary: "one backup or copy job with its progress"},
		{M: "GET", P: "/admin/tools/backup/schedule", Access: Staff, Perms: perm, H: actorCall(backups.GetSchedule), Resp: backups.ScheduleView{},
			Summary: "the backup schedule, its retention and destinations"},
		{M: "PUT", P: "/admin/tools/backup/schedule", Access: Staff, Perms: perm, H: bodyCall(backups.PutSchedule), Req: backups.ScheduleConfig{}, Resp: backups.ScheduleView{},
			Summary: "set the backup schedule: daily or weekly at a time of the tenant time zone"},
		{M: "POST", P: "/admin/tools/backup/upload", Access: Staff, File: true, Perms: perm, Buckets: []string{"t_heavy"},
			H: s.uploadBackup, Resp: backups.Backup{}, Status: 201, Summary: "upload a backup file (multipart or raw body), checked like xr restore",
			Reasons: []string{"400 archive_too_large", "400 backup_sealed_with_other_keys"}},
		{M: "DELETE", P: "/admin/tools/backup/{id}", Access: Staff, Perms: perm, H: idAction(backups.Delete), Summary: "delete a backup and its file"},
		{M: "GET", P: "/admin/tools/backup/{id}/download", Access: Staff, File: true, Fallback: true, // conflicts with /admin/tools/backup/jobs/{id}
			Perms: perm, Buckets: []string{"t_heavy"}, H: s.downloadBackup, Content: "application/zstd", Summary: "the backup file (zstd)"},
		{M: "POST", P: "/admin/tools/backup/{id}/download-ticket", Access: Staff, Perms: perm, Buckets: []string{"t_heavy"},
			H: idCall(backups.CreateTicket), Resp: backups.Ticket{}, Summary: "a single-use URL token to download without the bearer header"},
		// Not a spec row: where a download ticket is spent (no credential).
		{M: "GET", P: "/admin/tools/backup/download/{ticket}", Access: Public, File: true, Buckets: []string{"t_heavy"},
			H: s.downloadBackupTicket, Content: "application/zstd", Summary: "the backup file of a download ticket (once, before it expires)"},
		{M: "POST", P: "/admin/tools/backup/{id}/restore", Access: Staff, Perms: perm, Buckets: []string{"t_heavy"},
			H: idBodyCall(backups.Restore), Req: backups.RestoreInput{}, Resp: backups.RestoreResult{},
			Reasons: []string{"400 backup_sealed_with_other_keys"},
			Summary: "safety backup, then replace the tenant's data with this backup; writes are refused (503 restore_in_progress) from the safety backup until the swap"},
		// Factory reset
		{M: "POST", P: "/admin/tools/factory-reset", Access: Staff, SessionOnly: true, Perms: []app.Perm{backups.PermToolsFactoryReset},
			Buckets: []string{"t_heavy"}, H: bodyCall(backups.FactoryReset), Req: backups.ResetInput{}, Resp: backups.ResetResult{},
			Summary: "safety backup, then empty the tenant (password re-checked)"},
		{M: "GET", P: "/admin/tools/factory-reset/preview", Access: Staff, Perms: []app.Perm{backups.PermToolsFactoryReset},
			H: actorCall(backups.ResetPreviewOf), Resp: backups.ResetPreview{}, Summary: "what a factory reset would delete"},
	}
}
