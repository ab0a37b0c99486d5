package web

// portalEntryRoutes are the portal's ways in: sign-up, captcha, invite join, code exchange, tunnel identification, messenger, written once under /portal; twins adds the /user alias.
func (s *Server) portalEntryRoutes() []Route {
	return twins([]Route{
		{M: "GET", P: "/portal/captcha", Access: Public, Buckets: []string{"portal_captcha"}},
		{M: "POST", P: "/portal/exchange", Access: Public, Buckets: []string{"portal_exchange"}},
		{M: "POST", P: "/portal/join", Access: Public, Buckets: []string{"portal_join"}},
		{M: "GET", P: "/portal/join/context", Access: Public, Buckets: []string{"portal_join"}},
		{M: "POST", P: "/portal/signup", Access: Public, Buckets: []string{"portal_signup"}},
		{M: "GET", P: "/portal/signup/schema", Access: Public},
		{M: "POST", P: "/portal/messenger-exchange", Access: Public, Buckets: []string{"portal_messenger_exchange"}},
		{M: "GET", P: "/portal/messenger/link", Access: Subscriber},
		{M: "POST", P: "/portal/tunnel-identify", Access: Public, Buckets: []string{"portal_tunnel_identify"}},
		{M: "POST", P: "/portal/tunnel-tenant", Access: Public, Buckets: []string{"portal_tunnel_tenant"}},
	})
}
