package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"xr/app"
	"xr/app/webhooks"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

func whEmit(t *testing.T, k *webtest.Kit, typ string, data any) {
	t.Helper()
	tn := k.Acquire("acme")
	if err := tn.Write(context.Background(), func(tx *sql.Tx) error { return app.Emit(context.Background(), tx, typ, data) }); err != nil {
		t.Fatal(err)
	}
}

const whEP = "/api/v1/admin/webhooks/endpoints"

func whID(r webtest.Resp) int64 { return int64(r.Data()["id"].(float64)) }

func TestWebhookEndpointsCRUD(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.App.Cfg.AllowPrivateEgress = true
	tok := k.Owner("acme")

	r := k.Do("POST", "acme", whEP, tok, map[string]any{"name": " CRM ", "url": "http://127.0.0.1:9/hook", "events": []string{"user.created", "user.created", "manager.created"}})
	if r.Status != 200 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	d := r.Data()
	sec, _ := d["secret"].(string)
	if len(sec) < 40 || d["name"] != "CRM" || d["enabled"] != true || d["all_events"] != false || fmt.Sprint(d["events"]) != "[user.created manager.created]" {
		t.Fatalf("created %s", r.Body)
	}
	id := whID(r)

	// Validation on save.
	for _, c := range []struct {
		body        map[string]any
		reason, fld string
	}{
		{map[string]any{"url": "https://a.example/"}, "name_required", "name"},
		{map[string]any{"name": "x"}, "url_required", "url"},
		{map[string]any{"name": "x", "url": "gopher://a.example/"}, "url_scheme_not_allowed", "url"},
		{map[string]any{"name": "x", "url": "https://me:pw@a.example/"}, "url_credentials_not_allowed", "url"},
		{map[string]any{"name": "x", "url": "https://a.example/", "events": []string{"user.created", "user.exploded"}}, "unknown_event", "events"},
		{map[string]any{"name": "x", "url": "https://a.example/", "events": "user.created"}, "invalid_type", "events"},
	} {
		r := k.Do("POST", "acme", whEP, tok, c.body)
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", c.reason)
		if r.Field() != c.fld {
			t.Fatalf("%v: field %q", c.body, r.Field())
		}
	}
	r = k.Do("POST", "acme", whEP, tok, map[string]any{"name": "x", "url": "https://a.example/", "events": []string{"user.exploded"}})
	if det := r.JSON["error"].(map[string]any)["details"].(map[string]any); det["key"] != "user.exploded" {
		t.Fatalf("bad key not named: %s", r.Body)
	}
	// all_events ignores the events array.
	r = k.Do("POST", "acme", whEP, tok, map[string]any{"name": "all", "url": "https://a.example/", "all_events": true, "events": []string{"nope"}, "enabled": false})
	if r.Status != 200 || r.Data()["all_events"] != true || r.Data()["enabled"] != false {
		t.Fatalf("all_events: %d %s", r.Status, r.Body)
	}
	allID := whID(r)

	// List: un-paginated, never a secret.
	r = k.Do("GET", "acme", whEP, tok, nil)
	if r.Status != 200 || len(r.List()) != 2 || r.Meta()["page_size"] != 2.0 || r.Meta()["total"] != 2.0 || r.Meta()["has_next"] != false {
		t.Fatalf("list: %s", r.Body)
	}
	for _, row := range r.List() {
		if _, ok := row.(map[string]any)["secret"]; ok {
			t.Fatal("secret listed")
		}
	}

	// PATCH: enabled alone leaves the subscription alone.
	r = k.Do("PATCH", "acme", fmt.Sprintf("%s/%d", whEP, id), tok, map[string]any{"enabled": false})
	if r.Status != 200 || r.Data()["enabled"] != false || fmt.Sprint(r.Data()["events"]) != "[user.created manager.created]" {
		t.Fatalf("patch enabled: %s", r.Body)
	}
	// name/url/events/all_events are replaced outright: a missing events
	// array clears the subscription; enabled stays as it was.
	r = k.Do("PATCH", "acme", fmt.Sprintf("%s/%d", whEP, id), tok, map[string]any{"name": "CRM 2", "url": "http://127.0.0.1:10/x"})
	if r.Status != 200 || r.Data()["name"] != "CRM 2" || r.Data()["url"] != "http://127.0.0.1:10/x" || fmt.Sprint(r.Data()["events"]) != "[]" || r.Data()["enabled"] != false {
		t.Fatalf("patch replace: %s", r.Body)
	}
	r = k.Do("PATCH", "acme", fmt.Sprintf("%s/%d", whEP, allID), tok, map[string]any{"events": []string{"ticket.created"}})
	if r.Status != 200 || r.Data()["all_events"] != false || fmt.Sprint(r.Data()["events"]) != "[ticket.created]" || r.Data()["enabled"] != false {
		t.Fatalf("patch events: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("PATCH", "acme", fmt.Sprintf("%s/%d", whEP, id), tok, map[string]any{"events": []string{"x.y"}}), 400, "ERR_VALIDATION", "unknown_event")
	webtest.ExpectErr(t, k.Do("PATCH", "acme", whEP+"/999", tok, map[string]any{"enabled": true}), 404, "ERR_NOT_FOUND", "not_found")

	// Rotation answers the new secret once.
	r = k.Do("POST", "acme", fmt.Sprintf("%s/%d/rotate-secret", whEP, id), tok, map[string]any{"grace_seconds": 3600})
	if r.Status != 200 || r.Data()["secret"] == sec || r.Data()["previous_secret_expires_at"] == nil {
		t.Fatalf("rotate: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", fmt.Sprintf("%s/%d/rotate-secret", whEP, id), tok, map[string]any{"grace_seconds": -1}), 400, "ERR_VALIDATION", "invalid_grace_seconds")

	// Delete and bulk delete.
	r = k.Do("DELETE", "acme", fmt.Sprintf("%s/%d", whEP, id), tok, nil)
	if r.Status != 200 || r.Data()["deleted"] != true {
		t.Fatalf("delete: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("DELETE", "acme", fmt.Sprintf("%s/%d", whEP, id), tok, nil), 404, "ERR_NOT_FOUND", "not_found")
	r = k.Do("POST", "acme", whEP+"/bulk-delete", tok, map[string]any{"ids": []int64{allID, id}})
	if r.Status != 200 || fmt.Sprint(r.Data()["updated"]) != fmt.Sprintf("[%d]", allID) {
		t.Fatalf("bulk delete: %s", r.Body)
	}
	if f := r.Data()["failed"].([]any); len(f) != 1 || f[0].(map[string]any)["reason"] != "not_found" {
		t.Fatalf("bulk delete failures: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", whEP+"/bulk-delete", tok, map[string]any{"ids": []int64{}}), 400, "ERR_VALIDATION", "ids_required")
}

func TestWebhookSSRFOnSave(t *testing.T) {
	t.Parallel()
	k := webtest.New(t) // no --allow-private-egress
	tok := k.Owner("acme")
	for _, u := range []string{
		"http://127.0.0.1:8080/hook",                                     // loopback
		"http://[::1]/hook",                                              // loopback v6
		"http://[::ffff:127.0.0.1]/hook",                                 // IPv4-mapped
		"http://169.254.169.254/latest/",                                 // link-local (cloud metadata)
		"http://[fe80::1]/",                                              // link-local v6
		"http://10.1.2.3/", "http://172.20.0.1/", "http://192.168.0.10/", // private
		"http://[fd12::1]/",   // ULA
		"http://100.100.1.1/", // CGNAT
		"http://0.0.0.0:80/",  // unspecified
		"http://localhost:9/", // a name resolving to loopback
	} {
		r := k.Do("POST", "acme", whEP, tok, map[string]any{"name": "x", "url": u})
		webtest.ExpectErr(t, r, 400, "ERR_VALIDATION", "url_address_not_allowed")
		if r.Field() != "url" {
			t.Fatalf("%s: field %q", u, r.Field())
		}
	}
	r := k.Do("POST", "acme", whEP, tok, map[string]any{"name": "x", "url": "https://hooks.example.com/xr"})
	if r.Status != 200 {
		t.Fatalf("public url: %d %s", r.Status, r.Body)
	}
	// PATCH validates the url again.
	webtest.ExpectErr(t, k.Do("PATCH", "acme", fmt.Sprintf("%s/%d", whEP, whID(r)), tok, map[string]any{"url": "http://192.168.1.1/"}), 400, "ERR_VALIDATION", "url_address_not_allowed")
}

func TestWebhookEventCatalog(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	r := k.Do("GET", "acme", "/api/v1/admin/webhooks/event-catalog", k.Owner("acme"), nil)
	if r.Status != 200 || len(r.List()) != len(k.App.Events()) || r.Meta()["has_next"] != false || r.Meta()["page_size"] != float64(len(k.App.Events())) {
		t.Fatalf("catalog: %s", r.Body)
	}
	cats := map[string]string{}
	for _, row := range r.List() {
		m := row.(map[string]any)
		cats[m["key"].(string)] = m["category"].(string)
	}
	for key, cat := range map[string]string{"user.created": "lifecycle", "user.disconnected": "lifecycle", "usage.threshold": "usage",
		"payment.deposit": "billing", "ticket.created": "support", "manager.created": "lifecycle"} {
		if cats[key] != cat {
			t.Errorf("%s: category %q", key, cats[key])
		}
	}
}

func TestWebhookDeliveriesFlow(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	webhooks.SetRetryBase(k.App, 0)
	k.App.Cfg.AllowPrivateEgress = true
	tok := k.Owner("acme")
	failing := true
	var mu sync.Mutex
	rc := webtest.NewWebhookReceiver(t, func(n int) int {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			return 500
		}
		return 204
	})
	ok := webtest.NewWebhookReceiver(t, nil)
	r := k.Do("POST", "acme", whEP, tok, map[string]any{"name": "flaky", "url": rc.URL, "all_events": true})
	flaky := whID(r)
	secret := r.Data()["secret"].(string)
	r = k.Do("POST", "acme", whEP, tok, map[string]any{"name": "ok", "url": ok.URL, "events": []string{"manager.created"}})
	okID := whID(r)
	webtest.DeliverWebhooks(t, k)

	// manager.created flows from the managers area through the outbox.
	r = k.Do("POST", "acme", "/api/v1/managers", tok, map[string]any{"username": "rita", "email": "rita@acme.test", "password": webtest.Password})
	if r.Status != 200 && r.Status != 201 {
		t.Fatalf("create manager: %d %s", r.Status, r.Body)
	}
	xrtest.Eventually(t, "manager.created", func() bool { return ok.Count() == 1 })
	var body webhooks.Body
	json.Unmarshal(ok.Body(0), &body)
	h := ok.Header(0)
	if body.Type != "manager.created" || body.Tenant != "acme" || h.Get("X-Xr-Event-Id") != body.ID {
		t.Fatalf("delivery %s", ok.Body(0))
	}

	// The flaky endpoint runs out of attempts.
	xrtest.Eventually(t, "dead", func() bool {
		r := k.Do("GET", "acme", "/api/v1/admin/webhooks/deliveries?filter[state]=dead", tok, nil)
		return len(r.List()) == 1
	})
	if rc.Count() != webhooks.DefaultMaxAttempts {
		t.Fatalf("%d attempts", rc.Count())
	}
	ts := rc.Header(0).Get("X-Xr-Timestamp")
	if rc.Header(0).Get("X-Xr-Signature") != webhooks.Sign(secret, ts, rc.Body(0)) {
		t.Fatal("signature does not verify")
	}

	// List: newest first, filters, sorts, no payload.
	r = k.Do("GET", "acme", "/api/v1/admin/webhooks/deliveries", tok, nil)
	if r.Status != 200 || len(r.List()) != 2 || r.Meta()["total"] != 2.0 {
		t.Fatalf("list: %s", r.Body)
	}
	first := r.List()[0].(map[string]any)
	if _, has := first["data"]; has {
		t.Fatal("payload listed")
	}
	for _, f := range []string{"id", "endpoint_id", "event_type", "state", "attempts", "max_attempts", "response_code", "response_ms", "last_error", "url", "queued_at", "sent_at", "next_attempt_at"} {
		if _, has := first[f]; !has {
			t.Errorf("delivery row lacks %s", f)
		}
	}
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/webhooks/deliveries?endpoint_id=%d", okID), tok, nil)
	if len(r.List()) != 1 || r.List()[0].(map[string]any)["state"] != "sent" {
		t.Fatalf("bare endpoint_id: %s", r.Body)
	}
	r = k.Do("GET", "acme", fmt.Sprintf("/api/v1/admin/webhooks/deliveries?filter[endpoint_id]=%d&sort=attempts&order=desc", flaky), tok, nil)
	if len(r.List()) != 1 || r.List()[0].(map[string]any)["attempts"] != float64(webhooks.DefaultMaxAttempts) {
		t.Fatalf("filter[endpoint_id]: %s", r.Body)
	}
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/webhooks/deliveries?filter[state]=exploded", tok, nil), 400, "ERR_VALIDATION", "invalid_filter")
	webtest.ExpectErr(t, k.Do("GET", "acme", "/api/v1/admin/webhooks/deliveries?filter[endpoint_id]=x", tok, nil), 400, "ERR_VALIDATION", "invalid_filter")

	// Replay after dead delivers the same event id.
	dead := k.Do("GET", "acme", "/api/v1/admin/webhooks/deliveries?filter[state]=dead", tok, nil).List()[0].(map[string]any)
	mu.Lock()
	failing = false
	mu.Unlock()
	r = k.Do("POST", "acme", fmt.Sprintf("/api/v1/admin/webhooks/deliveries/%.0f/replay", dead["id"]), tok, nil)
	if r.Status != 200 || r.Data()["state"] != "queued" {
		t.Fatalf("replay: %s", r.Body)
	}
	xrtest.Eventually(t, "replayed delivery", func() bool { return rc.Count() == webhooks.DefaultMaxAttempts+1 })
	if rc.Header(webhooks.DefaultMaxAttempts).Get("X-Xr-Event-Id") != rc.Header(0).Get("X-Xr-Event-Id") {
		t.Fatal("replay changed the event id")
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", "/api/v1/admin/webhooks/deliveries/999/replay", tok, nil), 404, "ERR_NOT_FOUND", "not_found")

	// Test queues a synthetic delivery and answers its id.
	r = k.Do("POST", "acme", fmt.Sprintf("%s/%d/test", whEP, okID), tok, nil)
	if r.Status != 200 || r.Data()["delivery_id"] == nil {
		t.Fatalf("test: %s", r.Body)
	}
	xrtest.Eventually(t, "test delivery", func() bool { return ok.Count() == 2 })
	if ok.Header(1).Get("X-Xr-Event-Type") != webhooks.TestEventType {
		t.Fatalf("test delivery type %q", ok.Header(1).Get("X-Xr-Event-Type"))
	}
	webtest.ExpectErr(t, k.Do("POST", "acme", whEP+"/999/test", tok, nil), 404, "ERR_NOT_FOUND", "not_found")
}

func TestWebhookEmitIsTransactional(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	k.App.Cfg.AllowPrivateEgress = true
	tok := k.Owner("acme")
	rc := webtest.NewWebhookReceiver(t, nil)
	k.Do("POST", "acme", whEP, tok, map[string]any{"name": "all", "url": rc.URL, "all_events": true})
	webtest.DeliverWebhooks(t, k)
	// An effect that rolls back takes its event with it.
	tn := k.Acquire("acme")
	tn.Write(context.Background(), func(tx *sql.Tx) error {
		app.Emit(context.Background(), tx, "user.created", map[string]any{"id": 1})
		return fmt.Errorf("effect failed")
	})
	whEmit(t, k, "user.updated", map[string]any{"id": 2})
	xrtest.Eventually(t, "committed event", func() bool { return rc.Count() == 1 })
	// Nothing is left to deliver: the rolled-back event was never stored.
	if n := webtest.Scalar(k, "acme", `SELECT COUNT(*) FROM events WHERE type = 'user.created'`); n != 0 {
		t.Fatalf("%d rolled-back events stored", n)
	}
	if rc.Count() != 1 || rc.Header(0).Get("X-Xr-Event-Type") != "user.updated" {
		t.Fatalf("%d deliveries", rc.Count())
	}
}
