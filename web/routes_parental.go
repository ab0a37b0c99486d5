package web

// parentalRoutes are the portal's parental-control and guest-access rows, written once under /portal; twins adds the /user alias.
func (s *Server) parentalRoutes() []Route {
	return twins([]Route{
		{M: "GET", P: "/portal/guest/context", Access: Subscriber, Buckets: []string{"portal_guest"}},
		{M: "POST", P: "/portal/guest/register", Access: Subscriber, Buckets: []string{"portal_guest"}},
		{M: "GET", P: "/portal/parental", Access: Subscriber},
		{M: "POST", P: "/portal/parental/pause", Access: Subscriber},
		{M: "POST", P: "/portal/parental/pin", Access: Subscriber},
		{M: "PUT", P: "/portal/parental/rules", Access: Subscriber},
		{M: "POST", P: "/portal/parental/unlock", Access: Public, Buckets: []string{"portal_parental_unlock"}},
	})
}
