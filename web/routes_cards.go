// Code first generated from the spec tables; maintained by hand since.

package web

func (s *Server) cardsRoutes() []Route {
	return []Route{
		// Cards group
		{M: "POST", P: "/cards/redeem", Access: Staff, Perms: []string{"prm_cards_verify"}, Buckets: []string{"card_redeem"}},
		{M: "POST", P: "/admin/cards/redeem-otc", Access: Staff, Perms: []string{"prm_cards_verify"}, Buckets: []string{"card_redeem"}},
		{M: "POST", P: "/cards/redeem-create", Access: Public, Buckets: []string{"card_redeem_public"}},
		{M: "POST", P: "/admin/cards/redeem-to-wallet", Access: Staff, Perms: []string{"prm_managers_self_deposit"}, Buckets: []string{"card_wallet_redeem"}},
		{M: "GET", P: "/admin/cards/redemptions/{id}", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "GET", P: "/admin/cards/redemptions/{id}/reversals", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "POST", P: "/admin/cards/redemptions/{id}/reversals", Access: Staff, Perms: []string{"prm_users_refund"}},
		{M: "GET", P: "/cards/search", Access: Staff, Perms: []string{"prm_cards_verify"}, Buckets: []string{"card_search"}},
		{M: "POST", P: "/cards/{id}/revoke", Access: Staff, Perms: []string{"prm_cards_suspend_release"}},
		{M: "GET", P: "/cards/{id}/timeline", Access: Staff, Perms: []string{"prm_cards_list"}, Buckets: []string{"card_timeline"}},
		// Card series group
		{M: "GET", P: "/card-batches", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "POST", P: "/card-batches", Access: Staff, Perms: []string{"prm_cards_generate_user"}},
		{M: "POST", P: "/card-batches/bulk-delete", Access: Staff, Perms: []string{"prm_cards_delete"}},
		{M: "POST", P: "/card-batches/bulk-expiry", Access: Staff, Perms: []string{"prm_cards_change_expiry"}},
		{M: "POST", P: "/card-batches/bulk-print-job", Access: Staff, Perms: []string{"prm_cards_download"}, Buckets: []string{"t_heavy"}},
		{M: "POST", P: "/card-batches/bulk-printed", Access: Staff, Perms: []string{"prm_cards_download"}},
		{M: "POST", P: "/card-batches/bulk-release", Access: Staff, Perms: []string{"prm_cards_suspend_release"}},
		{M: "POST", P: "/card-batches/bulk-suspend", Access: Staff, Perms: []string{"prm_cards_suspend_release"}},
		{M: "GET", P: "/card-batches/code-length", Access: Staff, Perms: []string{"prm_cards_generate_user"}},
		{M: "DELETE", P: "/card-batches/{id}", Access: Staff, Perms: []string{"prm_cards_delete"}},
		{M: "GET", P: "/card-batches/{id}", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "PATCH", P: "/card-batches/{id}", Access: Staff, Perms: []string{"prm_cards_designer"}},
		{M: "GET", P: "/card-batches/{id}/cards", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "POST", P: "/card-batches/{id}/expiry", Access: Staff, Perms: []string{"prm_cards_change_expiry"}},
		{M: "GET", P: "/card-batches/{id}/pdf", Access: Staff, Perms: []string{"prm_cards_download"}, Buckets: []string{"t_heavy"}},
		{M: "GET", P: "/card-batches/{id}/pricing", Access: Staff, Perms: []string{"prm_cards_list"}},
		{M: "PUT", P: "/card-batches/{id}/pricing/{resellerId}", Access: Staff, Perms: []string{"prm_cards_designer"}},
		{M: "DELETE", P: "/card-batches/{id}/pricing/{resellerId}", Access: Staff, Perms: []string{"prm_cards_designer"}},
		{M: "GET", P: "/card-batches/{id}/print-job", Access: Staff, Perms: []string{"prm_cards_download"}},
		{M: "POST", P: "/card-batches/{id}/printed", Access: Staff, Perms: []string{"prm_cards_download"}},
		{M: "POST", P: "/card-batches/{id}/regenerate", Access: Staff, Perms: []string{"prm_cards_generate_user"}},
		{M: "POST", P: "/card-batches/{id}/release", Access: Staff, Perms: []string{"prm_cards_suspend_release"}},
		{M: "POST", P: "/card-batches/{id}/suspend", Access: Staff, Perms: []string{"prm_cards_suspend_release"}},
		// Card series group (named by the idempotency rule)
		{M: "POST", P: "/card-templates/{id}/generate", Access: Staff, Perms: []string{"prm_cards_generate_user"}},
	}
}
