package web

import "xr/app"

// jobsRoutes are a background job's state, for its creator and
// tenant-wide callers (app.JobOf).
func (s *Server) jobsRoutes() []Route {
	return []Route{
		{M: "GET", P: "/jobs/{id}", Access: Staff, AnyStaff: true, Summary: "a background job's state and progress", H: idCall(app.JobOf), Resp: app.Job{}},
	}
}
