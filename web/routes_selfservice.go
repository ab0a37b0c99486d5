package web

// selfserviceRoutes are the portal's self-service rows: quotes, plan changes, extensions, auto-renew, bucket order, speed boost, written once under /portal; twins adds the /user alias.
func (s *Server) selfserviceRoutes() []Route {
	return twins([]Route{
		{M: "POST", P: "/portal/auto-renew", Access: Subscriber},
		{M: "PUT", P: "/portal/bucket-order", Access: Subscriber},
		{M: "POST", P: "/portal/change-profile", Access: Subscriber},
		{M: "POST", P: "/portal/extend", Access: Subscriber},
		{M: "GET", P: "/portal/extensions", Access: Subscriber},
		{M: "GET", P: "/portal/extensions/{id}", Access: Subscriber},
		{M: "POST", P: "/portal/quote", Access: Subscriber},
		{M: "GET", P: "/portal/speed", Access: Subscriber},
		{M: "PUT", P: "/portal/speed", Access: Subscriber},
		{M: "DELETE", P: "/portal/speed", Access: Subscriber},
	})
}
