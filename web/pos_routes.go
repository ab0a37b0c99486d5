package web

import (
	"xr/app"
	"xr/app/cards"
	"xr/app/pos"
)

// posRoutes are the point of sale: shifts, till sales, voids, receipts.
func (s *Server) posRoutes() []Route {
	sell := []app.Perm{pos.PermPosSell}
	saleReasons := []string{"400 request_id_required", "400 lines_required", "400 too_many_lines", "400 too_many_cards", "400 card_batch_not_found",
		"400 user_not_found", "400 addon_id_required", "400 batch_id_required", "400 user_required", "400 out_of_range", "409 shift_not_open",
		"409 insufficient_stock", "409 insufficient_balance", "409 card_batch_not_ready", "409 card_batch_suspended", "409 card_batch_not_mintable",
		"409 code_space_exhausted", "409 request_id_conflict", "409 addon_not_allowed", "409 profile_disabled", "400 profile_required"}
	return []Route{
		{M: "GET", P: "/pos/products", Access: Staff, Perms: sell, H: actorCall(pos.ListProducts), Resp: pos.Products{},
			Summary: "what the caller may sell at the till: cards of ready series it owns or was allotted, renewals, add-ons, top-ups"},
		{M: "GET", P: "/pos/sales", Access: Staff, Perms: sell, H: listCall(pos.SaleListSpec(), pos.ListSales), Resp: pos.Sale{}, List: true,
			Summary: "the caller's till sales (with prm_pos_void its subtree's); meta.aggregates.total over completed sales"},
		{M: "POST", P: "/pos/sales", Status: 201, Access: Staff, Perms: sell, H: s.posSell, Req: pos.SaleInput{}, Resp: pos.Sale{}, Reasons: saleReasons,
			Summary: "sell at the till in the caller's open shift (one transaction; request_id required; a replay answers the original sale)"},
		{M: "GET", P: "/pos/sales/{id}/print-job", Access: Staff, Perms: sell, H: idCall(pos.GetPrintJob), Resp: pos.PrintJob{},
			Reasons: []string{"404 not_found"}, Summary: "receipt data with the card codes, rendered for 58 mm and 80 mm thermal paper"},
		{M: "POST", P: "/pos/sales/{id}/printed", Access: Staff, Perms: sell, H: idCall(pos.Printed), Resp: pos.Sale{},
			Reasons: []string{"404 not_found"}, Summary: "stamp printed_at and count a print of the receipt"},
		{M: "POST", P: "/pos/sales/{id}/void", Access: Staff, Perms: []app.Perm{pos.PermPosSell, pos.PermPosVoid}, H: idBodyCall(pos.Void),
			Req: pos.VoidInput{}, Resp: pos.Sale{}, Reasons: []string{"404 not_found", "409 void_window_passed", "409 card_already_redeemed",
				"409 activation_superseded", "409 insufficient_balance", "409 addon_used", "409 addon_already_refunded"},
			Summary: "reverse every effect of a sale (own sale within pos_undo_window_seconds, or any time with prm_pos_void); idempotent"},
		{M: "GET", P: "/pos/shifts", Access: Staff, Perms: sell, H: listCall(pos.ShiftListSpec(), pos.ListShifts), Resp: pos.Shift{}, List: true,
			Summary: "the caller's shifts (with prm_pos_void its subtree's)"},
		{M: "POST", P: "/pos/shifts", Status: 201, Access: Staff, Perms: sell, H: createCall(pos.OpenShift), Req: pos.OpenShiftInput{}, Resp: pos.Shift{},
			Reasons: []string{"409 shift_already_open", "400 amount_must_not_be_negative"}, Summary: "open a shift for the caller with an opening float"},
		{M: "GET", P: "/pos/shifts/current", Access: Staff, Perms: sell, H: actorCall(pos.CurrentShift), Resp: pos.Shift{},
			Reasons: []string{"404 shift_not_open"}, Summary: "the caller's open shift"},
		{M: "POST", P: "/pos/shifts/{id}/close", Access: Staff, Perms: sell, H: idBodyCall(pos.CloseShift), Req: pos.CloseShiftInput{}, Resp: pos.Shift{},
			Reasons: []string{"404 not_found", "409 shift_closed", "400 counted_cash_required", "400 amount_must_not_be_negative"},
			Summary: "close a shift with the counted cash; the difference from the expected cash is recorded"},
		{M: "GET", P: "/pos/stuck-cards", Access: Staff, Perms: []app.Perm{pos.PermPosVoid}, H: allCall(pos.StuckCards), Resp: cards.StuckCard{}, List: true,
			Summary: "cards held by a till sale that never completed (disposition stuck, counted by each series' stuck_sale) in the caller's subtree"},
		{M: "GET", P: "/pos/shifts/{id}/report", Access: Staff, Perms: sell, H: idCall(pos.Report), Resp: pos.ShiftReport{},
			Reasons: []string{"404 not_found"}, Summary: "a shift's sales, voids, totals per product and payment method, expected against counted cash"},
	}
}

// posSell is POST /pos/sales: 201 for a new sale, 200 for a replay of its
// request_id (the original sale, replay true).
func (s *Server) posSell(c *Ctx) error {
	var in pos.SaleInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	out, err := pos.Sell(c.R.Context(), c.Actor, in)
	if err != nil {
		return err
	}
	if out.Replay {
		return c.OK(out)
	}
	return c.Created(out)
}
