package web_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"xr/internal/webtest"
)

// Shop (prefix sh): publishing, the public buyer rows, the portal purchase
// of cards, and the staff sales rows with resend and reveal.

func TestShopHTTPPublishBuyAndSales(t *testing.T) {
	t.Parallel()
	s, id := webtest.ShopSetup(t, 4)

	// Permissions first: a manager without the code is refused before the
	// body is even looked at.
	_, viewer := s.Manager(s.OwnerID, "viewer", "prm_users_index")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), viewer, map[string]any{"price": "x"}), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, s.Call("GET", "/admin/shop/sales", viewer, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")
	webtest.ExpectErr(t, s.Call("POST", "/admin/shop/sales/1/reveal", viewer, nil), 403, "ERR_FORBIDDEN", "insufficient_permissions")

	rd := s.Call("GET", "/admin/shop/readiness", s.Tok, nil)
	if rd.Status != 200 || rd.Data()["ready"] != false || fmt.Sprint(rd.Data()["missing"]) != "[published_stock delivery_channel]" {
		t.Fatalf("readiness: %d %s", rd.Status, rd.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.Tok, map[string]any{}), 400, "ERR_VALIDATION", "price_required")
	if r := s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.Tok, map[string]any{"price": 2.5}); r.Status != 200 || r.Data()["published"] != true {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	if r := s.Call("GET", "/admin/shop/batches", s.Tok, nil); r.Status != 200 || len(r.List()) != 1 || r.List()[0].(map[string]any)["price"] != 2.5 {
		t.Fatalf("batches: %d %s", r.Status, r.Body)
	}
	pv := s.Call("GET", "/admin/shop/storefront", s.Tok, nil)
	pub := s.Call("GET", "/shop/storefront", "", nil)
	if pv.Status != 200 || pub.Status != 200 || string(pv.Body) != string(pub.Body) {
		t.Fatalf("preview %s\npublic %s", pv.Body, pub.Body)
	}
	items, _ := pub.Data()["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["available"] != 4.0 || items[0].(map[string]any)["price"] != 2.5 {
		t.Fatalf("storefront: %s", pub.Body)
	}
	// The storefront lives on a tenant host only.
	if r := s.Do("GET", "", "/api/v1/shop/storefront", "", nil); r.Status != 404 {
		t.Fatalf("apex storefront: %d %s", r.Status, r.Body)
	}

	// Buying: request_id must be a UUID; a refusal stores nothing.
	buy := func(body map[string]any) webtest.Resp { return s.Call("POST", "/shop/purchases", "", body) }
	webtest.ExpectErr(t, buy(map[string]any{"series_id": id, "gateway": "manual", "contact": "b@example.com", "request_id": "abc"}), 400, "ERR_VALIDATION", "request_id_invalid")
	webtest.ExpectErr(t, buy(map[string]any{"series_id": id, "gateway": "manual", "contact": "b@", "request_id": webtest.ShopUUID1}), 400, "ERR_VALIDATION", "contact_invalid")
	webtest.ExpectErr(t, buy(map[string]any{"series_id": id, "gateway": "manual", "contact": "b@example.com", "request_id": webtest.ShopUUID1, "quantity": 5}), 409, "ERR_CONFLICT", "insufficient_stock")
	webtest.ExpectErr(t, buy(map[string]any{"series_id": id + 100, "gateway": "manual", "contact": "b@example.com", "request_id": webtest.ShopUUID1}), 404, "ERR_NOT_FOUND", "not_found")
	if n := s.Scalar(`SELECT COUNT(*) FROM shop_sales`); n != 0 {
		t.Fatalf("%d sales after refusals", n)
	}
	p := buy(map[string]any{"series_id": id, "gateway": "manual", "contact": "Buyer@Example.com", "request_id": webtest.ShopUUID1, "quantity": 2})
	pay, _ := p.Data()["payment"].(map[string]any)
	if p.Status != 200 || pay["state"] != "pending" || pay["amount"] != 5.0 {
		t.Fatalf("buy: %d %s", p.Status, p.Body)
	}
	ret, _ := p.Data()["return_url"].(string)
	if !strings.HasPrefix(ret, "http://acme.xr.test/shop/return/") {
		t.Fatalf("return url %q", ret)
	}
	// The same key and body (the contact written differently) replays; another body conflicts.
	again := buy(map[string]any{"series_id": id, "gateway": "manual", "contact": " buyer@example.com", "request_id": webtest.ShopUUID1, "quantity": 2})
	if again.Status != 200 || again.Data()["payment"].(map[string]any)["id"] != pay["id"] || again.Data()["return_url"] != p.Data()["return_url"] {
		t.Fatalf("replay: %d %s", again.Status, again.Body)
	}
	webtest.ExpectErr(t, buy(map[string]any{"series_id": id, "gateway": "manual", "contact": "buyer@example.com", "request_id": webtest.ShopUUID1, "quantity": 1}),
		409, "ERR_CONFLICT", "request_id_conflict")
	if n := s.Scalar(`SELECT held FROM card_batches WHERE id = ?`, id); n != 2 {
		t.Fatalf("held %d after replay and conflict, want 2", n)
	}
	token := ret[strings.LastIndexByte(ret, '/')+1:]
	rc := s.Call("GET", "/shop/return/"+token, "", nil)
	if rc.Status != 200 || rc.Data()["state"] != "reserved" || len(rc.Data()["codes"].([]any)) != 0 {
		t.Fatalf("return before payment: %d %s", rc.Status, rc.Body)
	}
	webtest.ExpectErr(t, s.Call("GET", "/shop/return/"+strings.Repeat("a", 32), "", nil), 404, "ERR_NOT_FOUND", "not_found")

	// Staff confirm the transfer: the codes appear on the return page and
	// are queued for the buyer.
	pid := int64(pay["id"].(float64))
	if r := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", pid), s.Tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	rc = s.Call("GET", "/shop/return/"+token, "", nil)
	if rc.Data()["state"] != "paid" || len(rc.Data()["codes"].([]any)) != 2 || rc.Data()["delivery_state"] == "" {
		t.Fatalf("return after payment: %s", rc.Body)
	}
	if s.Scalar(`SELECT sold_online FROM card_batches WHERE id = ?`, id) != 2 {
		t.Fatal("sold_online not counted")
	}
	s.ShopStockOK(id)

	// Sales: masked in the list, whole on reveal (audited), resend queues again.
	sale := int64(p.Data()["payment"].(map[string]any)["purpose_ref"].(float64))
	l := s.Call("GET", "/admin/shop/sales", s.Tok, nil)
	if l.Status != 200 || len(l.List()) != 1 {
		t.Fatalf("sales: %d %s", l.Status, l.Body)
	}
	row := l.List()[0].(map[string]any)
	if row["contact"] != "b***@example.com" || row["payment_state"] != "succeeded" || row["delivery_state"] == "" || strings.Contains(string(l.Body), "buyer@") {
		t.Fatalf("sale row: %v", row)
	}
	rv := s.Call("POST", fmt.Sprintf("/admin/shop/sales/%d/reveal", sale), s.Tok, nil)
	if rv.Status != 200 || rv.Data()["contact"] != "buyer@example.com" {
		t.Fatalf("reveal: %d %s", rv.Status, rv.Body)
	}
	rs := s.Call("POST", fmt.Sprintf("/admin/shop/sales/%d/resend", sale), s.Tok, nil)
	if rs.Status != 200 || rs.Data()["resends"] != 1.0 || len(rs.Data()["deliveries"].([]any)) != 2 {
		t.Fatalf("resend: %d %s", rs.Status, rs.Body)
	}
	d := s.Call("GET", fmt.Sprintf("/admin/shop/sales/%d", sale), s.Tok, nil)
	audit, _ := d.Data()["audit"].([]any)
	if d.Status != 200 || len(audit) != 2 || audit[0].(map[string]any)["action"] != "reveal" || audit[0].(map[string]any)["manager"] != "owner" {
		t.Fatalf("detail: %d %s", d.Status, d.Body)
	}

	// A reseller with prm_shop_sales: another subtree's sale is not found,
	// exactly like a missing one.
	_, rt := s.Manager(s.OwnerID, "shop-north", "prm_shop_sales", "prm_shop_buyer_contact")
	if r := s.Call("GET", "/admin/shop/sales", rt, nil); r.Status != 200 || len(r.List()) != 0 {
		t.Fatalf("reseller list: %d %s", r.Status, r.Body)
	}
	miss := s.Call("GET", fmt.Sprintf("/admin/shop/sales/%d", sale+100), rt, nil)
	out := s.Call("GET", fmt.Sprintf("/admin/shop/sales/%d", sale), rt, nil)
	webtest.ExpectErr(t, out, 404, "ERR_NOT_FOUND", "not_found")
	if miss.Status != out.Status || miss.Code() != out.Code() {
		t.Fatalf("out of scope %s vs missing %s", out.Body, miss.Body)
	}
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/shop/sales/%d/reveal", sale), rt, nil), 404, "ERR_NOT_FOUND", "not_found")
	webtest.ExpectErr(t, s.Call("POST", fmt.Sprintf("/admin/shop/sales/%d/resend", sale), rt, nil), 404, "ERR_NOT_FOUND", "not_found")
	if n := s.Scalar(`SELECT COUNT(*) FROM shop_sale_audit WHERE sale_id = ?`, sale); n != 2 {
		t.Fatalf("%d audit rows", n)
	}

	// Unpublish: gone from the storefront.
	if r := s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/unpublish", id), s.Tok, nil); r.Status != 200 || r.Data()["published"] != false {
		t.Fatalf("unpublish: %d %s", r.Status, r.Body)
	}
	if r := s.Call("GET", "/shop/storefront", "", nil); len(r.Data()["items"].([]any)) != 0 {
		t.Fatalf("storefront after unpublish: %s", r.Body)
	}
	if r := s.Call("POST", "/admin/shop/batches/bulk-publish", s.Tok, map[string]any{"ids": []int64{id}}); r.Status != 200 || len(r.Data()["updated"].([]any)) != 1 {
		t.Fatalf("bulk-publish: %d %s", r.Status, r.Body)
	}
	s.ShopStockOK(id)
}

// TestShopHTTPPortalPurchaseOfCards: a subscriber buys cards through the
// portal (both prefixes); the codes go to its portal inbox.
func TestShopHTTPPortalPurchaseOfCards(t *testing.T) {
	t.Parallel()
	s, id := webtest.ShopSetup(t, 3)
	if r := s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.Tok, map[string]any{"price": 1}); r.Status != 200 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	uid := s.User("", map[string]any{"username": "shopper", "password": "radius-s", "portal_password": "Portal-pass-1"})
	tok := webtest.PortalLogin(t, s, "shopper", "Portal-pass-1")
	for i, pre := range []string{"/portal", "/user"} {
		key := []string{webtest.ShopUUID2, webtest.ShopUUID3}[i]
		r := s.Call("POST", pre+"/purchase", tok, map[string]any{"gateway": "manual", "kind": "card", "series_id": id, "request_id": key})
		pay, _ := r.Data()["payment"].(map[string]any)
		if r.Status != 200 || pay["purpose"] != "shop_card" {
			t.Fatalf("%s purchase: %d %s", pre, r.Status, r.Body)
		}
		if c := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", int64(pay["id"].(float64))), s.Tok, map[string]any{}); c.Status != 200 {
			t.Fatalf("confirm: %d %s", c.Status, c.Body)
		}
	}
	if n := s.Scalar(`SELECT COUNT(*) FROM outbox_messages WHERE channel = 'inbox' AND user_id = ?`, uid); n != 2 {
		t.Fatalf("%d inbox messages", n)
	}
	l := s.Call("GET", "/admin/shop/sales?filter[state]=paid", s.Tok, nil)
	if l.Status != 200 || len(l.List()) != 2 || l.List()[0].(map[string]any)["buyer"] != "subscriber" {
		t.Fatalf("sales: %d %s", l.Status, l.Body)
	}
	s.ShopStockOK(id)
}

// TestShopPublicPages: the buyers' server-rendered storefront escapes what
// staff typed, sends the strict page headers, starts a purchase from its
// form and shows the codes on the return page once paid.
func TestShopPublicPages(t *testing.T) {
	t.Parallel()
	s, id := webtest.ShopSetup(t, 2)
	s.Exec(`UPDATE card_batches SET name = '<b>Pass</b>' WHERE id = ?`, id)
	if r := s.Call("POST", fmt.Sprintf("/admin/shop/batches/%d/publish", id), s.Tok, map[string]any{"price": 4}); r.Status != 200 {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	page := s.Do("GET", "acme", "/shop", "", nil)
	body := string(page.Body)
	if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") || !strings.Contains(page.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Fatalf("storefront page: %d %v", page.Status, page.Header)
	}
	if !strings.Contains(body, "&lt;b&gt;Pass&lt;/b&gt;") || strings.Contains(body, "<b>Pass") || !strings.Contains(body, fmt.Sprintf(`id="buy-%d"`, id)) {
		t.Fatalf("storefront body: %s", body)
	}
	form := func(v url.Values) webtest.Resp {
		return s.Do("POST", "acme", "/shop/buy", "", v.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	}
	bad := form(url.Values{"series_id": {fmt.Sprint(id)}, "quantity": {"1"}, "contact": {"nobody"}, "gateway": {"manual"}, "request_id": {webtest.ShopUUID1}})
	if bad.Status != 400 || !strings.Contains(string(bad.Body), `id="e-contact-`) || s.Scalar(`SELECT COUNT(*) FROM shop_sales`) != 0 {
		t.Fatalf("refused form: %d %s", bad.Status, bad.Body)
	}
	ok := form(url.Values{"series_id": {fmt.Sprint(id)}, "quantity": {"1"}, "contact": {"walkin@example.com"}, "gateway": {"manual"}, "request_id": {webtest.ShopUUID1}})
	m := regexp.MustCompile(`/shop/return/([0-9a-f]{32})`).FindStringSubmatch(string(ok.Body))
	if ok.Status != 200 || m == nil || !strings.Contains(string(ok.Body), `id="receipt-reference"`) {
		t.Fatalf("purchase page: %d %s", ok.Status, ok.Body)
	}
	pid := s.Scalar(`SELECT id FROM payments WHERE purpose = 'shop_card'`)
	if r := s.Call("POST", fmt.Sprintf("/admin/payments/%d/confirm", pid), s.Tok, map[string]any{}); r.Status != 200 {
		t.Fatalf("confirm: %d %s", r.Status, r.Body)
	}
	ret := s.Do("GET", "acme", "/shop/return/"+m[1], "", nil)
	var code string
	if err := s.Ten.DB.R.QueryRow(`SELECT c.code FROM shop_sale_cards sc JOIN cards c ON c.id = sc.card_id`).Scan(&code); err != nil {
		t.Fatal(err)
	}
	if ret.Status != 200 || !strings.Contains(string(ret.Body), `id="receipt-codes"`) || !strings.Contains(string(ret.Body), code) {
		t.Fatalf("return page: %d %s", ret.Status, ret.Body)
	}
	if r := s.Do("GET", "acme", "/shop/return/"+strings.Repeat("0", 32), "", nil); r.Status != 404 {
		t.Fatalf("unknown return page: %d", r.Status)
	}
	s.ShopStockOK(id)
}
