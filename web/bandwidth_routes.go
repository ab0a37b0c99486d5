package web

import (
	"xr/app"
	"xr/app/bandwidth"
)

func (s *Server) bandwidthRoutes() []Route {
	bw := []app.Perm{bandwidth.PermToolsBandwidthControl}
	return []Route{
		{M: "GET", P: "/admin/tools/bandwidth", Access: Staff, Perms: bw,
			H: s.bandwidthOverview, Resp: bandwidth.Overview{}, Summary: "effective rate per plan and the rules in force (now or ?at=)"},
		{M: "POST", P: "/admin/tools/bandwidth/apply", Access: Staff, Perms: bw, Buckets: []string{"t_heavy"},
			H: bodyCall(bandwidth.Apply), Req: bandwidth.ApplyInput{}, Resp: bandwidth.ApplyResult{}, Summary: "change (or revert) the rate of a target set now, with a CoA per online session"},
		{M: "GET", P: "/admin/tools/bandwidth/history", Access: Staff, Perms: bw,
			H: listCall(bandwidth.HistorySpec, bandwidth.History), Resp: bandwidth.CoARecord{}, List: true, Summary: "per-session CoA results of rate changes"},
		{M: "GET", P: "/admin/tools/bandwidth/schedules", Access: Staff, Perms: bw,
			H: allCall(bandwidth.ListSchedules), Resp: bandwidth.Rule{}, List: true, Summary: "bandwidth windows"},
		{M: "POST", P: "/admin/tools/bandwidth/schedules", Status: 201, Access: Staff, Perms: bw,
			H: createCall(bandwidth.CreateSchedule), Req: bandwidth.WindowInput{}, Resp: bandwidth.Rule{}, Summary: "create a weekly bandwidth window"},
		{M: "POST", P: "/admin/tools/bandwidth/schedules/bulk-delete", Access: Staff, Perms: bw,
			H: bulkCall(bandwidth.DeleteSchedule), Req: app.BulkIDs{}, Resp: app.BulkResult{}, Summary: "delete several bandwidth windows"},
		{M: "DELETE", P: "/admin/tools/bandwidth/schedules/{id}", Access: Staff, Perms: bw,
			H: idAction(bandwidth.DeleteSchedule), Summary: "delete a bandwidth window"},
		{M: "PATCH", P: "/admin/tools/bandwidth/schedules/{id}", Access: Staff, Perms: bw,
			H: idBodyCall(bandwidth.PatchSchedule), Req: bandwidth.WindowPatch{}, Resp: bandwidth.Rule{}, Summary: "change a bandwidth window"},
	}
}

func (s *Server) bandwidthOverview(c *Ctx) error {
	out, err := bandwidth.GetOverview(c.R.Context(), c.Actor, c.Query().Get("at"))
	if err != nil {
		return err
	}
	return c.OK(out)
}
