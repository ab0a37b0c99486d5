package web

import (
	"xr/app"
	"xr/app/aaa"
	"xr/app/reports"
	"xr/app/subs"
)

// RADIUS diagnostics: the explainer (the authorization policy of a login,
// check by check, without its effects) and the auth log (every decision).
// The explainer shows a subscriber's state, so it needs what reading the
// subscriber needs (prm_users_index); the auth log is a sessions report
// (prm_report_sessions). Both are scoped like subscribers.
func (s *Server) radiusRoutes() []Route {
	return []Route{
		{M: "POST", P: "/admin/radius/explain", Access: Staff, Perms: []app.Perm{subs.PermUsersIndex}, H: s.explainRadius,
			Req: aaa.ExplainInput{}, Resp: aaa.Explanation{}, Summary: "explain what RADIUS would answer for a username and password, step by step"},
		{M: "GET", P: "/admin/radius/auth-log", Access: Staff, Perms: []app.Perm{reports.PermReportSessions},
			H: listCall(aaa.AuthLogListSpec, aaa.ListAuthLog), List: true, Resp: aaa.AuthLogEntry{}, Summary: "recent RADIUS authentication attempts and their outcome"},
	}
}

func (s *Server) explainRadius(c *Ctx) error {
	var in aaa.ExplainInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := s.Radius.Explain(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}
