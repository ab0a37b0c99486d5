// Code first generated from the spec tables; maintained by hand since.

package web

import (
	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/subs"
)

func (s *Server) cardsRoutes() []Route {
	bulk := app.BulkResult{}
	ids := app.BulkIDs{}
	// The refusals of a series' generation spec (POST /card-batches' rules),
	// which card templates share.
	batchRules := []string{"400 type_required", "400 invalid_quantity", "400 quantity_too_large", "400 face_value_required", "400 invalid_face_value", "400 invalid_code_length", "400 invalid_unit_price", "400 expiration_required", "400 invalid_expiration", "400 plan_profile_id_required", "400 plan_not_assignable", "400 invalid_owner_manager_id", "400 too_long"}
	return []Route{
		// Cards group
		{M: "POST", P: "/cards/redeem", Access: Staff, Perms: []app.Perm{cards.PermCardsVerify}, Buckets: []string{"card_redeem"},
			H: bodyCall(cards.Redeem), Req: cards.RedeemInput{}, Resp: cards.RedeemResult{},
			Summary: "redeem a card onto a subscriber: refill credits the balance, voucher activates the plan; request_id required; a replay answers the same card_id, mode, effect_applied without new_balance; card or subscriber outside the subtree is 404; 409 card_consumed, card_revoked, card_batch_suspended, card_expired"},
		{M: "POST", P: "/admin/cards/redeem-otc", Access: Staff, Perms: []app.Perm{cards.PermCardsVerify}, Buckets: []string{"card_redeem"},
			H: bodyCall(cards.RedeemOTC), Req: cards.OTCInput{}, Resp: cards.RedeemResult{},
			Summary: "redeem over the counter: the acting manager is recorded as the reseller, paid and charged amounts are snapshotted"},
		{M: "POST", P: "/cards/redeem-create", Access: Public, Buckets: []string{"card_redeem_public"},
			H: s.redeemCreate, Req: cards.RedeemCreateInput{}, Resp: cards.RedeemResult{},
			Summary: "public (tenant from the host): a voucher card makes a new subscriber (username, password) and activates its plan; request_id required"},
		{M: "POST", P: "/admin/cards/redeem-to-wallet", Access: Staff, Perms: []app.Perm{identity.PermManagersSelfDeposit}, Buckets: []string{"card_wallet_redeem"},
			H: bodyCall(cards.RedeemToWallet), Req: cards.WalletRedeemInput{}, Resp: cards.RedeemResult{},
			Summary: "a refill card's face value credited to the caller's wallet; request_id required"},
		{M: "GET", P: "/admin/cards/redemptions/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsList},
			H: idCall(cards.GetRedemption), Resp: cards.Redemption{}, Summary: "one card redemption"},
		{M: "GET", P: "/admin/cards/redemptions/{id}/reversals", Access: Staff, Perms: []app.Perm{cards.PermCardsList},
			H: idAllCall(cards.ListReversals), Resp: cards.Reversal{}, List: true, Summary: "the reversals of a card redemption"},
		{M: "POST", P: "/admin/cards/redemptions/{id}/reversals", Access: Staff, Perms: []app.Perm{subs.PermUsersRefund},
			H: idBodyCall(cards.ReverseRedemption), Req: cards.ReversalInput{}, Resp: cards.Reversal{},
			Summary: "reverse a redemption (request_id required): the effect is taken back (balance debited, activation reverted, wallet debited) and the card becomes revoked (default) or unused; one reversal per redemption"},
		{M: "GET", P: "/cards/search", Access: Staff, Perms: []app.Perm{cards.PermCardsVerify}, Buckets: []string{"card_search"},
			H: s.searchCards, Resp: cards.Lookup{},
			Summary: "query kind (code, serial, username) and keyword; a code is normalised (upper-case, spaces/dashes and the xr:c: prefix dropped); outside the subtree answers the 404 of an unknown card"},
		{M: "POST", P: "/cards/{id}/revoke", Access: Staff, Perms: []app.Perm{cards.PermCardsSuspendRelease},
			H: idCall(cards.RevokeCard), Resp: cards.Card{}, Summary: "terminal: the card can never be redeemed; 409 card_revoked when it already was"},
		{M: "GET", P: "/cards/{id}/timeline", Access: Staff, Perms: []app.Perm{cards.PermCardsList}, Buckets: []string{"card_timeline"},
			H: idCall(cards.CardTimeline), Resp: cards.Timeline{},
			Summary: "header facts and events in order: minted, printed, held, sold, transferred, redeemed, reversed, first_use, exhausted, revoked, suspended, released, expiry_changed, regenerated"},
		// Card transfers (the spec names three transfer endpoints requiring
		// request_id; their paths are this design's).
		{M: "POST", P: "/cards/transfers", Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser},
			H: bodyCall(cards.TransferCards), Req: cards.TransferInput{}, Resp: cards.Transfer{}, Reasons: []string{"400 invalid_serial_range", "409 cards_not_transferable", "409 insufficient_stock"},
			Summary: "move available cards (card_ids; or batch_id and quantity; or first_serial to last_serial of one series, every card of the range available with the sender) from from_manager_id (default the caller) to to_manager_id; a holder moves its cards of a series it does not own; the receiver pays the series' price for it when one applies; request_id required"},
		{M: "GET", P: "/cards/holdings", Access: Staff, Perms: []app.Perm{cards.PermCardsList},
			H: listCall(cards.HoldingListSpec(), cards.ListHoldings), Resp: cards.Holding{}, List: true,
			Summary: "the unsold stock each manager of the caller's subtree holds, per series (available cards and the serials they span); filter[manager_id], filter[batch_id]; sort manager (default), batch_id, available"},
		{M: "POST", P: "/card-batches/{id}/transfer", Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser},
			H: idBodyCall(cards.TransferSeries), Req: cards.SeriesTransferInput{}, Resp: cards.Transfer{},
			Summary: "the series and its owner's available cards move to to_manager_id; request_id required"},
		{M: "POST", P: "/cards/transfers/{id}/revert", Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser},
			H: idBodyCall(cards.RevertTransfer), Req: cards.RevertInput{}, Resp: cards.Transfer{},
			Summary: "the transfer's cards still unsold with the receiver go back, and their price; request_id required"},
		// Card series group
		{M: "GET", P: "/card-batches", Access: Staff, Perms: []app.Perm{cards.PermCardsList},
			H: listCall(cards.BatchListSpec(), cards.ListBatches), Resp: cards.Batch{}, List: true,
			Summary: "filter[status] generating|ready|failed, filter[card_mode] voucher_account|refill_balance, filter[owner_manager_id], filter[suspended], filter[template_id], filter[plan_id]; q: plan name, name, distribution note, series id; sort id (default), created_at, quantity, face_value, expiration, available, status"},
		{M: "POST", P: "/card-batches", Status: 202, Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser},
			H: s.createBatch, Req: cards.CreateInput{}, Resp: cards.CreateResult{},
			Summary: "202 fresh, 200 replay (replay true, the original batch_id); a job mints the cards (status generating → ready, or failed with a reason)"},
		{M: "POST", P: "/card-batches/bulk-delete", Access: Staff, Perms: []app.Perm{cards.PermCardsDelete}, H: bodyCall(cards.BulkDelete), Req: ids, Resp: bulk,
			Summary: "delete several card series (unused cards only)"},
		{M: "POST", P: "/card-batches/bulk-expiry", Access: Staff, Perms: []app.Perm{cards.PermCardsChangeExpiry}, H: bodyCall(cards.BulkExpiry), Req: cards.BulkExpiryInput{}, Resp: bulk,
			Summary: "set the expiry of several card series"},
		{M: "POST", P: "/card-batches/bulk-print-job", Access: Staff, Perms: []app.Perm{cards.PermCardsDownload}, Buckets: []string{"t_heavy"},
			H: bodyCall(cards.BulkPrintJob), Req: ids, Resp: bulk, Summary: "queues the PDF sheet of each series; fetch with GET /card-batches/{id}/pdf"},
		{M: "POST", P: "/card-batches/bulk-printed", Access: Staff, Perms: []app.Perm{cards.PermCardsDownload}, H: bodyCall(cards.BulkPrinted), Req: ids, Resp: bulk,
			Summary: "mark several card series printed"},
		{M: "POST", P: "/card-batches/bulk-release", Access: Staff, Perms: []app.Perm{cards.PermCardsSuspendRelease}, H: bodyCall(cards.BulkRelease), Req: ids, Resp: bulk,
			Summary: "release several suspended card series"},
		{M: "POST", P: "/card-batches/bulk-suspend", Access: Staff, Perms: []app.Perm{cards.PermCardsSuspendRelease}, H: bodyCall(cards.BulkSuspend), Req: ids, Resp: bulk,
			Summary: "suspend several card series"},
		{M: "GET", P: "/card-batches/code-length", Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser}, H: s.codeLength, Resp: cards.CodeLengthInfo{},
			Summary: "query code_charset (default numeric), quantity (default 1): the minimum code length the live pool requires (live / charset^length ≤ 1e-6)"},
		{M: "DELETE", P: "/card-batches/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsDelete}, H: idCall(cards.DeleteBatch), Resp: cards.Deleted{},
			Summary: "409 card_batch_in_use once any card was redeemed, used, transferred or sold; the owner's charge is refunded"},
		{M: "GET", P: "/card-batches/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsList}, H: idCall(cards.GetBatch), Resp: cards.Batch{},
			Summary: "one card series with its counts"},
		{M: "PATCH", P: "/card-batches/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner}, H: idBodyCall(cards.PatchBatch), Req: cards.PatchInput{}, Resp: cards.Batch{},
			Reasons: []string{"400 invalid_design_id"}, Summary: "name, note, sell_online, auto_activate, template_id, design_id (the card_sheet design the PDF sheet prints with; null: the default)"},
		{M: "GET", P: "/card-batches/{id}/cards", Access: Staff, Perms: []app.Perm{cards.PermCardsList},
			H: idListCall(cards.CardListSpec(), cards.ListCards), Resp: cards.Card{}, List: true,
			Summary: "filter[state] unused|consumed|active|exhausted|revoked, filter[disposition], filter[has_customer]; q: serial, code or login"},
		{M: "POST", P: "/card-batches/{id}/expiry", Access: Staff, Perms: []app.Perm{cards.PermCardsChangeExpiry}, H: idBodyCall(cards.ChangeExpiry), Req: cards.ExpiryInput{}, Resp: cards.ExpiryResult{},
			Summary: "set the expiry of a card series"},
		{M: "GET", P: "/card-batches/{id}/pdf", Content: "application/pdf", Access: Staff, File: true, Perms: []app.Perm{cards.PermCardsDownload}, Buckets: []string{"t_heavy"}, H: s.batchPDF, Resp: cards.PDFState{},
			Summary: "application/pdf when the sheet is rendered; else 202 with the render job (the first call queues it)"},
		{M: "GET", P: "/card-batches/{id}/pricing", Access: Staff, Perms: []app.Perm{cards.PermCardsList}, H: idAllCall(cards.ListPricing), Resp: cards.Price{}, List: true,
			Summary: "the per-reseller prices of a card series"},
		{M: "PUT", P: "/card-batches/{id}/pricing/{resellerId}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner}, H: s.setPricing, Req: cards.PriceInput{}, Resp: cards.Price{},
			Summary: "set a reseller's price of a card series"},
		{M: "DELETE", P: "/card-batches/{id}/pricing/{resellerId}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner}, H: s.deletePricing,
			Summary: "remove a reseller's price of a card series"},
		{M: "GET", P: "/card-batches/{id}/print-job", Access: Staff, Perms: []app.Perm{cards.PermCardsDownload}, H: s.printJob, Resp: cards.PrintJob{},
			Summary: "data for client-side rendering of the sheet (page, page_size ≤ 5000)"},
		{M: "POST", P: "/card-batches/{id}/printed", Access: Staff, Perms: []app.Perm{cards.PermCardsDownload}, H: idCall(cards.MarkPrinted), Resp: cards.Batch{},
			Summary: "mark a card series printed"},
		{M: "POST", P: "/card-batches/{id}/regenerate", Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser}, H: idBodyCall(cards.Regenerate), Req: cards.RegenerateInput{}, Resp: cards.RegenerateResult{},
			Summary: "fresh codes for the series' unsold stock; request_id required"},
		{M: "POST", P: "/card-batches/{id}/release", Access: Staff, Perms: []app.Perm{cards.PermCardsSuspendRelease}, H: idCall(cards.ReleaseBatch), Resp: cards.SuspendResult{},
			Summary: "release a suspended card series"},
		{M: "POST", P: "/card-batches/{id}/suspend", Access: Staff, Perms: []app.Perm{cards.PermCardsSuspendRelease}, H: idCall(cards.SuspendBatch), Resp: cards.SuspendResult{},
			Summary: "suspend a card series (its cards cannot be redeemed)"},
		// Card series group (named by the idempotency rule): a series from a
		// card template, answering like POST /card-batches.
		{M: "POST", P: "/card-templates/{id}/generate", Status: 202, Access: Staff, Perms: []app.Perm{cards.PermCardsGenerateUser},
			H: s.generateFromTemplate, Req: cards.GenerateInput{}, Resp: cards.CreateResult{},
			Reasons: append([]string{"400 request_id_required", "409 request_id_conflict", "409 insufficient_balance", "400 cannot_price_self"}, batchRules...),
			Summary: "a series from the template's spec (quantity, expiration, owner_manager_id, name, note may be overridden) through the generation job; answers like POST /card-batches: 202 fresh, 200 replay (replay true, the original batch_id); the series keeps template_id and the template's design_id; a template outside the subtree is 404"},
		// Card templates (beyond the spec): a card_sheet design plus a
		// generation spec. Designers write them; designers and generators
		// read them; scope is the owning manager's subtree.
		{M: "GET", P: "/card-templates", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner, cards.PermCardsGenerateUser},
			H: listCall(cards.TemplateListSpec(), cards.ListTemplates), Resp: cards.Template{}, List: true,
			Summary: "card templates owned within the caller's subtree; filter[design_id], filter[manager_id]; q: name or id; sort id (default), name, created_at, updated_at"},
		{M: "POST", P: "/card-templates", Status: 201, Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner},
			H: createCall(cards.CreateTemplate), Req: cards.TemplateInput{}, Resp: cards.Template{},
			Reasons: append([]string{"400 name_required", "400 invalid_design_id", "400 invalid_expiration_days", "400 expiration_rule_conflict"}, batchRules...),
			Summary: "a card template: name, design_id (a card_sheet design; null: the default design) and the generation spec of POST /card-batches (checked by the same rules), with expiration (absolute) or expiration_days (relative to each generation); quantity is the default of a generation"},
		{M: "POST", P: "/card-templates/bulk-delete", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner}, H: bodyCall(cards.BulkDeleteTemplates), Req: ids, Resp: bulk,
			Reasons: []string{"400 ids_required"}, Summary: "delete several card templates (their series keep template_id)"},
		{M: "GET", P: "/card-templates/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner, cards.PermCardsGenerateUser},
			H: idCall(cards.GetTemplate), Resp: cards.Template{}, Summary: "one card template; outside the subtree is 404"},
		{M: "PATCH", P: "/card-templates/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner},
			H: idBodyCall(cards.PatchTemplate), Req: cards.TemplatePatch{}, Resp: cards.Template{},
			Reasons: append([]string{"400 name_required", "400 invalid_design_id", "400 invalid_expiration_days", "400 expiration_rule_conflict"}, batchRules...),
			Summary: "present fields replace the template's; the result is checked as a whole like POST /card-templates; setting expiration clears expiration_days and the reverse"},
		{M: "DELETE", P: "/card-templates/{id}", Access: Staff, Perms: []app.Perm{cards.PermCardsDesigner}, H: idCall(cards.DeleteTemplate), Resp: cards.Deleted{},
			Summary: "delete a card template; the series generated from it keep template_id and their design"},
	}
}
