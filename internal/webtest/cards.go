package webtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"xr/app"
	"xr/app/subs"
	"xr/internal/xrtest"
)

// StartJobs starts the job runner of the kit's instance, as xr serve does.
func StartJobs(t *testing.T, k *Kit) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := k.App.Jobs.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); k.App.Jobs.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// CreatePlan creates a 30-day plan at 3 on acme, as the system actor.
func CreatePlan(t *testing.T, k *Kit, name string) int64 {
	t.Helper()
	p, err := subs.CreateProfile(Background, k.System("acme"), subs.ProfileInput{Name: app.Opt[string]{Set: true, V: name},
		Price: app.Opt[app.Money]{Set: true, V: 3000}, DurationDays: app.Opt[int64]{Set: true, V: 30}})
	if err != nil {
		t.Fatal(err)
	}
	return p.ID
}

// CreateUser creates subscriber name under manager parent on acme.
func CreateUser(t *testing.T, k *Kit, name string, parent int64) int64 {
	t.Helper()
	ten := k.Acquire("acme")
	var id int64
	err := ten.Write(Background, func(tx *sql.Tx) error {
		c, err := subs.CreateUser(Background, tx, ten, subs.NewUser{Username: name, Password: "pw-" + name + "-1", ParentID: parent})
		if c != nil {
			id = c.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// CreateSeries creates a series over HTTP and waits for the job to make it ready.
func CreateSeries(t *testing.T, k *Kit, token string, body map[string]any) int64 {
	t.Helper()
	r := k.Do("POST", "acme", "/api/v1/card-batches", token, body)
	if r.Status != 202 {
		t.Fatalf("create series: %d %s", r.Status, r.Body)
	}
	id := Num(r.Data()["batch_id"])
	xrtest.Eventually(t, "series ready", func() bool {
		g := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d", id), token, nil)
		return g.Data()["status"] == "ready"
	})
	return id
}

// SeriesCodes are the codes of a card series (its first 200 cards).
func SeriesCodes(t *testing.T, k *Kit, token string, id int64) []string {
	t.Helper()
	r := k.Do("GET", "acme", fmt.Sprintf("/api/v1/card-batches/%d/cards?page_size=200", id), token, nil)
	if r.Status != 200 {
		t.Fatalf("cards: %d %s", r.Status, r.Body)
	}
	var out []string
	for _, row := range r.List() {
		out = append(out, row.(map[string]any)["code"].(string))
	}
	return out
}

// NextYear is a date a year from now (yyyy-MM-dd).
var NextYear = time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")

// CreateCardDesign stores a card_sheet design (as the studio keeps them) whose
// cards print the plan, the login and the serial, and returns its id.
func CreateCardDesign(t *testing.T, k *Kit, name string) int64 {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"kind": "card_sheet", "page": map[string]any{"width": 210, "height": 297, "margin": 10},
		"card": map[string]any{"width": 90, "height": 50, "gap": 5},
		"elements": []map[string]any{
			{"type": "text", "x": 4, "y": 4, "w": 80, "h": 8, "text": "{plan}", "font_size": 11},
			{"type": "text", "x": 4, "y": 16, "w": 80, "h": 8, "text": "{username}", "font_size": 10},
			{"type": "text", "x": 4, "y": 28, "w": 80, "h": 8, "text": "{serial} {face_value}", "font_size": 9},
			{"type": "qr", "x": 70, "y": 30, "w": 16, "h": 16, "value": "{qr_payload}"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return xrtest.Exec(t, k.Acquire("acme"), `INSERT INTO designs(name, kind, doc, created_at, updated_at) VALUES (?, 'card_sheet', ?, ?, ?)`,
		name, string(doc), app.StampNow(), app.StampNow())
}
