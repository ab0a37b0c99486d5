package web

import (
	"xr/app"
	"xr/app/tools"
)

// toolsRoutes are the operator tools' announcements and bulk changes
// (app/tools).
func (s *Server) toolsRoutes() []Route {
	ann := []app.Perm{tools.PermToolsAnnouncements}
	bulk := []app.Perm{tools.PermToolsBulkChanges}
	accepted := func(c *Ctx, v any) error { return c.Accepted(v) }
	return []Route{
		// Announcements
		{M: "GET", P: "/admin/tools/announcements", Access: Staff, Perms: ann, H: listCall(tools.AnnouncementListSpec, tools.ListAnnouncements),
			Resp: tools.Announcement{}, List: true, Summary: "announcements, newest first (the caller's own unless tenant-wide); filter state"},
		{M: "POST", P: "/admin/tools/announcements", Access: Staff, Perms: ann, Buckets: []string{"t_egress"}, Status: 202,
			H: bodyWrite(tools.CreateAnnouncement, accepted), Req: tools.AnnouncementInput{}, Resp: tools.Announcement{},
			Summary: "announce to the subscribers a target picks (filters of GET /users plus nas_id, or ids) on email, sms and the portal; variables {username} {expiration} {balance} {plan}; a job fans out through the outbox"},
		{M: "POST", P: "/admin/tools/announcements/preview-count", Access: Staff, Perms: ann, H: bodyCall(tools.PreviewAnnouncementCount),
			Req: tools.PreviewCountInput{}, Resp: tools.Reach{}, Summary: "how many subscribers a target picks and how many each channel reaches, sending nothing"},
		{M: "GET", P: "/admin/tools/announcements/{id}", Access: Staff, Perms: ann, H: idCall(tools.GetAnnouncement),
			Resp: tools.Announcement{}, Summary: "an announcement with its fan-out progress and delivery counts by state"},
		// Bulk changes
		{M: "POST", P: "/admin/tools/bulk/apply", Access: Staff, Perms: bulk, Buckets: []string{"t_heavy"}, Status: 202,
			H: bodyWrite(tools.ApplyBulk, accepted), Req: tools.BulkInput{}, Resp: tools.BulkJob{},
			Summary: "apply operations to the selected subscribers as a resumable job (chunks, one transaction each, per-row log); each operation needs its users permission"},
		{M: "GET", P: "/admin/tools/bulk/jobs", Access: Staff, Perms: bulk, H: listCall(tools.BulkJobListSpec, tools.ListBulkJobs),
			Resp: tools.BulkJob{}, List: true, Summary: "bulk changes, newest first (the caller's own unless tenant-wide); filter state"},
		{M: "GET", P: "/admin/tools/bulk/jobs/{id}", Access: Staff, Perms: bulk, H: idCall(tools.GetBulkJob),
			Resp: tools.BulkJob{}, Summary: "a bulk change with its progress and per-row log (before, after, reason)"},
		{M: "POST", P: "/admin/tools/bulk/preview", Access: Staff, Perms: bulk, H: bodyCall(tools.PreviewBulk),
			Req: tools.BulkInput{}, Resp: tools.BulkPreview{}, Summary: "how many subscribers match, a sample before/after, and the operations the caller may not do; changes nothing"},
	}
}
