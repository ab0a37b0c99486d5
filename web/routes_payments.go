package web

// paymentsPortalRoutes are the portal's payment rows (deposit, purchase, gateways, transactions), written once under /portal; twins adds the /user alias.
func (s *Server) paymentsPortalRoutes() []Route {
	return twins([]Route{
		{M: "POST", P: "/portal/deposit", Access: Subscriber, Buckets: []string{"portal_deposit"}},
		{M: "GET", P: "/portal/payments/gateways", Access: Subscriber},
		{M: "GET", P: "/portal/payments/transactions", Access: Subscriber},
		{M: "POST", P: "/portal/purchase", Access: Subscriber, Buckets: []string{"portal_deposit"}},
	})
}
