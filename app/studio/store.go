package studio

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"xr/app"
	"xr/app/files"
	"xr/app/studio/render"
)

// The design store is instance-wide (the instance file, migration
// instance/0008): any tenant publishes a snapshot of one of its designs,
// every tenant browses, stars, reviews, comments and imports. What any
// answer shows of a publisher is the display name it gave; the
// publishing tenant is recorded internally only (unpublish, "mine").

// Store text limits, runes.
const (
	MaxCommentLen = 1000
	MaxReviewLen  = 2000
)

// StoreCacheTTL is how old the cached store list may get before a read
// (or the module's timer) rebuilds it.
const StoreCacheTTL = 5 * time.Minute

// StoreItem is one published design as every tenant sees it.
type StoreItem struct {
	ID          int64          `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Kind        string         `json:"kind"`
	Publisher   string         `json:"publisher"` // the display name the publisher gave
	Stars       int64          `json:"stars"`
	Reviews     int64          `json:"reviews"`
	Rating      float64        `json:"rating"`  // average review stars, 0 without reviews
	Starred     bool           `json:"starred"` // the caller's tenant starred it
	Hidden      bool           `json:"hidden"`  // the caller's tenant hid it from its list
	Mine        bool           `json:"mine"`    // the caller's tenant published it (may unpublish)
	PublishedAt app.Time       `json:"published_at"`
	Doc         *render.Design `json:"doc,omitempty"` // GET /studio/store/{id} only
	tenantID    int64
}

// PublishInput is the body of POST /studio/store.
type PublishInput struct {
	DesignID    int64  `json:"design_id"`
	Publisher   string `json:"publisher_name"` // shown to every tenant instead of the tenant
	Name        string `json:"name,omitempty"` // default: the design's name
	Description string `json:"description,omitempty"`
}

// Comment is one comment of a store item.
type Comment struct {
	ID        int64    `json:"id"`
	Author    string   `json:"author"`
	Text      string   `json:"text"`
	Mine      bool     `json:"mine"`
	CreatedAt app.Time `json:"created_at"`
}

// CommentInput is the body of POST /studio/store/{id}/comments: plain
// text (no HTML is interpreted anywhere), at most MaxCommentLen runes.
type CommentInput struct {
	Text   string `json:"text"`
	Author string `json:"author,omitempty"` // display name; empty shows none
}

// Review is a tenant's review of a store item (one per tenant).
type Review struct {
	ID        int64    `json:"id"`
	Author    string   `json:"author"`
	Stars     int      `json:"stars"`
	Text      string   `json:"text"`
	Mine      bool     `json:"mine"`
	CreatedAt app.Time `json:"created_at"`
	UpdatedAt app.Time `json:"updated_at"`
}

// ReviewInput is the body of POST /studio/store/{id}/reviews; posting
// again edits the tenant's review.
type ReviewInput struct {
	Stars  int    `json:"stars"`
	Text   string `json:"text"`
	Author string `json:"author,omitempty"`
}

// StarResult answers star and unstar.
type StarResult struct {
	ID      int64 `json:"id"`
	Starred bool  `json:"starred"`
	Stars   int64 `json:"stars"`
}

// HideResult answers hide and unhide.
type HideResult struct {
	ID     int64 `json:"id"`
	Hidden bool  `json:"hidden"`
}

// ImportInput is the body of POST /studio/store/{id}/import.
type ImportInput struct {
	Name string `json:"name,omitempty"` // default: the item's name
}

// ---- the cached list ----

type storeCache struct {
	mu    sync.Mutex
	items []StoreItem // without Doc and per-tenant flags
	at    time.Time
	ok    bool
}

type storeCacheKey struct{}

func cacheOf(a *app.App) *storeCache {
	return a.ValueOrStore(storeCacheKey{}, &storeCache{}).(*storeCache)
}

// RefreshStore rebuilds the cached store list (on publish and unpublish,
// and from the module's timer).
func RefreshStore(ctx context.Context, a *app.App) error {
	c := cacheOf(a)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.load(ctx, a)
}

func (c *storeCache) load(ctx context.Context, a *app.App) error {
	items, err := app.QueryAll(ctx, a.Inst.R, func(r interface{ Scan(...any) error }) (*StoreItem, error) {
		it := &StoreItem{}
		err := r.Scan(&it.ID, &it.Name, &it.Description, &it.Kind, &it.Publisher, &it.PublishedAt, &it.tenantID, &it.Stars, &it.Reviews, &it.Rating)
		return it, err
	}, `SELECT i.id, i.name, i.description, i.kind, i.publisher, i.created_at, i.tenant_id,
		(SELECT COUNT(*) FROM store_stars s WHERE s.item_id = i.id),
		(SELECT COUNT(*) FROM store_reviews r WHERE r.item_id = i.id),
		(SELECT COALESCE(AVG(r.stars), 0) FROM store_reviews r WHERE r.item_id = i.id)
		FROM store_items i ORDER BY i.id`)
	if err != nil {
		return err
	}
	c.items, c.at, c.ok = items, a.Now(), true
	return nil
}

// snapshot answers the cached list, rebuilding it first when it is older
// than StoreCacheTTL (cached false then).
func (c *storeCache) snapshot(ctx context.Context, a *app.App) ([]StoreItem, time.Time, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cached := true
	if !c.ok || a.Now().Sub(c.at) >= StoreCacheTTL || a.Now().Before(c.at) {
		if err := c.load(ctx, a); err != nil {
			return nil, time.Time{}, false, err
		}
		cached = false
	}
	return c.items, c.at, cached, nil
}

// storeService refreshes the cached list every StoreCacheTTL while xr serve runs.
func storeService(ctx context.Context, a *app.App) {
	tk := time.NewTicker(StoreCacheTTL)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			if err := RefreshStore(ctx, a); err != nil && ctx.Err() == nil {
				a.Log.Warn("studio: refresh the store list", "err", err)
			}
		}
	}
}

// StoreListSpec: filter[kind], filter[hidden] (true: only the items the
// caller hid), filter[mine], q over name, description and publisher; sort
// newest (default), stars, rating, name.
var StoreListSpec = app.ListSpec{
	Sorts:       map[string]string{"newest": "newest", "stars": "stars", "rating": "rating", "name": "name"},
	DefaultSort: "newest",
	Filters:     map[string]app.FilterKind{"kind": app.FilterString, "hidden": app.FilterBool, "mine": app.FilterBool},
	Aliases:     []string{"kind"},
}

// tenantSet reads the item ids a tenant has in table (stars, hidden).
func tenantSet(ctx context.Context, a *app.App, table string, tenantID int64) (map[int64]bool, error) {
	ids, err := app.QueryIDs(ctx, a.Inst.R, `SELECT item_id FROM `+table+` WHERE tenant_id = ?`, tenantID)
	if err != nil {
		return nil, err
	}
	m := make(map[int64]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m, nil
}

// ListStore lists the store from the cached list: items the caller's
// tenant hid are left out unless filter[hidden]=true asks for them only.
func ListStore(ctx context.Context, act *app.Actor, q app.ListQuery) (app.Page[StoreItem], error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return app.Page[StoreItem]{}, err
	}
	a := act.Tenant.App
	all, at, cached, err := cacheOf(a).snapshot(ctx, a)
	if err != nil {
		return app.Page[StoreItem]{}, err
	}
	starred, err := tenantSet(ctx, a, "store_stars", act.Tenant.ID)
	if err != nil {
		return app.Page[StoreItem]{}, err
	}
	hidden, err := tenantSet(ctx, a, "store_hidden", act.Tenant.ID)
	if err != nil {
		return app.Page[StoreItem]{}, err
	}
	wantHidden, _ := q.Bool("hidden")
	kind, byKind := q.Str("kind")
	mine, byMine := q.Bool("mine")
	needle := strings.ToLower(q.Q)
	var rows []StoreItem
	for _, it := range all {
		it.Starred, it.Hidden, it.Mine = starred[it.ID], hidden[it.ID], it.tenantID == act.Tenant.ID
		if it.Hidden != wantHidden || byKind && it.Kind != kind || byMine && it.Mine != mine {
			continue
		}
		if needle != "" && !strings.Contains(strings.ToLower(it.Name+"\n"+it.Description+"\n"+it.Publisher), needle) {
			continue
		}
		rows = append(rows, it)
	}
	less := func(i, j int) bool { return rows[i].ID < rows[j].ID }
	switch q.Sort {
	case "stars":
		less = func(i, j int) bool {
			if rows[i].Stars != rows[j].Stars {
				return rows[i].Stars < rows[j].Stars
			}
			return rows[i].ID < rows[j].ID
		}
	case "rating":
		less = func(i, j int) bool {
			if rows[i].Rating != rows[j].Rating {
				return rows[i].Rating < rows[j].Rating
			}
			return rows[i].ID < rows[j].ID
		}
	case "name":
		less = func(i, j int) bool {
			if rows[i].Name != rows[j].Name {
				return rows[i].Name < rows[j].Name
			}
			return rows[i].ID < rows[j].ID
		}
	}
	if q.Desc {
		sort.SliceStable(rows, func(i, j int) bool { return less(j, i) })
	} else {
		sort.SliceStable(rows, less)
	}
	out := app.Page[StoreItem]{Meta: q.MetaFor(len(rows))}
	cachedAt := app.T(at)
	out.Meta.Cached, out.Meta.CachedAt = &cached, &cachedAt
	if off := q.Offset(); off < len(rows) {
		out.Rows = rows[off:min(off+q.PageSize, len(rows))]
	}
	return out, nil
}

// getItem reads one item live (404 when missing).
func getItem(ctx context.Context, q app.Querier, act *app.Actor, id int64, withDoc bool) (*StoreItem, error) {
	it := &StoreItem{}
	var doc string
	err := q.QueryRowContext(ctx, `SELECT i.id, i.name, i.description, i.kind, i.publisher, i.created_at, i.tenant_id, i.doc,
		(SELECT COUNT(*) FROM store_stars s WHERE s.item_id = i.id),
		(SELECT COUNT(*) FROM store_reviews r WHERE r.item_id = i.id),
		(SELECT COALESCE(AVG(r.stars), 0) FROM store_reviews r WHERE r.item_id = i.id),
		EXISTS (SELECT 1 FROM store_stars s WHERE s.item_id = i.id AND s.tenant_id = ?),
		EXISTS (SELECT 1 FROM store_hidden h WHERE h.item_id = i.id AND h.tenant_id = ?)
		FROM store_items i WHERE i.id = ?`, act.Tenant.ID, act.Tenant.ID, id).
		Scan(&it.ID, &it.Name, &it.Description, &it.Kind, &it.Publisher, &it.PublishedAt, &it.tenantID, &doc,
			&it.Stars, &it.Reviews, &it.Rating, &it.Starred, &it.Hidden)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	if err != nil {
		return nil, err
	}
	it.Mine = it.tenantID == act.Tenant.ID
	if withDoc {
		it.Doc = &render.Design{}
		if err := json.Unmarshal([]byte(doc), it.Doc); err != nil {
			return nil, fmt.Errorf("store item %d: stored doc: %w", id, err)
		}
	}
	return it, nil
}

// GetStoreItem reads one item with its document (hidden ones too).
func GetStoreItem(ctx context.Context, act *app.Actor, id int64) (*StoreItem, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	return getItem(ctx, act.Tenant.App.Inst.R, act, id, true)
}

// Publish puts a snapshot of one of the tenant's designs in the store:
// its document, with its images copied and re-encoded (no metadata of
// the originals) under ids local to the snapshot ("1", "2", ...).
func Publish(ctx context.Context, act *app.Actor, in PublishInput) (*StoreItem, error) {
	if err := act.Require(PermStudioPublish); err != nil {
		return nil, err
	}
	publisher, err := cleanName(in.Publisher, "publisher_name", MaxDisplayLen, true)
	if err != nil {
		return nil, err
	}
	name, err := cleanName(in.Name, "name", MaxNameLen, false)
	if err != nil {
		return nil, err
	}
	desc := strings.TrimSpace(in.Description)
	if err := checkText(desc, "description", MaxDescLen, true); err != nil {
		return nil, err
	}
	if in.DesignID <= 0 {
		return nil, app.ErrValidation("required", "design_id")
	}
	t := act.Tenant
	d, err := getDesign(ctx, t.DB.R, in.DesignID)
	if err != nil {
		if e := app.AsError(err); e != nil && e.Status == 404 {
			return nil, app.ErrValidation("design_not_found", "design_id")
		}
		return nil, err
	}
	if name == "" {
		name = d.Name
	}
	imgs, err := loadImages(ctx, t.DB.R, t, d.Doc)
	if err != nil {
		return nil, err
	}
	type blob struct {
		id, ct string
		data   []byte
	}
	ids := map[string]string{}
	var blobs []blob
	for _, ref := range imageRefs(d.Doc) {
		b, ok := imgs[ref]
		if !ok {
			continue
		}
		clean, ct, err := reencode(b)
		if err != nil {
			return nil, fmt.Errorf("re-encode design image %s: %w", ref, err)
		}
		ids[ref] = strconv.Itoa(len(blobs) + 1)
		blobs = append(blobs, blob{id: ids[ref], ct: ct, data: clean})
	}
	snap := *d.Doc
	snap.Elements = append([]render.Element(nil), d.Doc.Elements...)
	for i := range snap.Elements {
		if snap.Elements[i].Type == "image" {
			snap.Elements[i].ImageID = ids[snap.Elements[i].ImageID]
		}
	}
	doc, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	a := t.App
	var id int64
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `INSERT INTO store_items(tenant_id, publisher, name, description, kind, doc, created_at) VALUES (?,?,?,?,?,?,?)`,
			t.ID, publisher, name, desc, d.Kind, string(doc), a.NowText())
		if err != nil {
			return err
		}
		if id, err = r.LastInsertId(); err != nil {
			return err
		}
		for _, b := range blobs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO store_images(item_id, image_id, content_type, data) VALUES (?,?,?,?)`, id, b.id, b.ct, b.data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := RefreshStore(ctx, a); err != nil {
		a.Log.Warn("studio: refresh the store list", "err", err)
	}
	return getItem(ctx, a.Inst.R, act, id, true)
}

// Unpublish removes an item from the store: only its publisher may (403
// store_not_publisher for everyone else).
func Unpublish(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermStudioPublish); err != nil {
		return err
	}
	a := act.Tenant.App
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		var owner int64
		if err := tx.QueryRowContext(ctx, `SELECT tenant_id FROM store_items WHERE id = ?`, id).Scan(&owner); err != nil {
			return notFoundOr(err)
		}
		if owner != act.Tenant.ID {
			return app.ErrForbidden("store_not_publisher")
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM store_items WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return err
	}
	if err := RefreshStore(ctx, a); err != nil {
		a.Log.Warn("studio: refresh the store list", "err", err)
	}
	return nil
}

// itemExists answers 404 for an item that is not in the store.
func itemExists(ctx context.Context, q app.Querier, id int64) error {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM store_items WHERE id = ?`, id).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return app.ErrNotFound()
	}
	return nil
}

// setMark adds (on) or removes the caller's tenant's mark of an item in
// table (stars, hidden); either is idempotent.
func setMark(ctx context.Context, act *app.Actor, id int64, table string, on bool) error {
	if err := act.Require(PermStudioIndex); err != nil {
		return err
	}
	a := act.Tenant.App
	return a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if err := itemExists(ctx, tx, id); err != nil {
			return err
		}
		var err error
		if on {
			_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO `+table+`(item_id, tenant_id, created_at) VALUES (?,?,?)`, id, act.Tenant.ID, a.NowText())
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE item_id = ? AND tenant_id = ?`, id, act.Tenant.ID)
		}
		return err
	})
}

func starResult(ctx context.Context, act *app.Actor, id int64) (StarResult, error) {
	it, err := getItem(ctx, act.Tenant.App.Inst.R, act, id, false)
	if err != nil {
		return StarResult{}, err
	}
	return StarResult{ID: id, Starred: it.Starred, Stars: it.Stars}, nil
}

// Star stars an item for the caller's tenant (again: no change).
func Star(ctx context.Context, act *app.Actor, id int64) (StarResult, error) {
	if err := setMark(ctx, act, id, "store_stars", true); err != nil {
		return StarResult{}, err
	}
	return starResult(ctx, act, id)
}

// Unstar removes the caller's tenant's star (none: no change).
func Unstar(ctx context.Context, act *app.Actor, id int64) (StarResult, error) {
	if err := setMark(ctx, act, id, "store_stars", false); err != nil {
		return StarResult{}, err
	}
	return starResult(ctx, act, id)
}

// Hide leaves an item out of the caller's tenant's store list.
func Hide(ctx context.Context, act *app.Actor, id int64) (HideResult, error) {
	err := setMark(ctx, act, id, "store_hidden", true)
	return HideResult{ID: id, Hidden: err == nil}, err
}

// Unhide shows a hidden item again.
func Unhide(ctx context.Context, act *app.Actor, id int64) (HideResult, error) {
	err := setMark(ctx, act, id, "store_hidden", false)
	return HideResult{ID: id}, err
}

// instPage runs a paged list on the instance file: count, then the page.
// colArgs are the arguments of placeholders in cols.
func instPage[T any](ctx context.Context, a *app.App, q app.ListQuery, cols string, colArgs []any, from string, args []any,
	scan func(r interface{ Scan(...any) error }) (*T, error)) (app.Page[T], error) {
	var p app.Page[T]
	var total int
	if err := a.Inst.R.QueryRowContext(ctx, `SELECT COUNT(*) `+from, args...).Scan(&total); err != nil {
		return p, err
	}
	p.Meta = q.MetaFor(total)
	rows, err := app.QueryAll(ctx, a.Inst.R, scan, `SELECT `+cols+` `+from+q.OrderLimit("id"), append(colArgs, args...)...)
	p.Rows = rows
	return p, err
}

// CommentListSpec lists comments oldest first.
var CommentListSpec = app.ListSpec{Sorts: map[string]string{"id": "id"}, DefaultSort: "id", DefaultAsc: true}

// Comments lists an item's comments.
func Comments(ctx context.Context, act *app.Actor, id int64, q app.ListQuery) (app.Page[Comment], error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return app.Page[Comment]{}, err
	}
	a := act.Tenant.App
	if err := itemExists(ctx, a.Inst.R, id); err != nil {
		return app.Page[Comment]{}, err
	}
	return instPage(ctx, a, q, `id, author, text, tenant_id = ?, created_at`, []any{act.Tenant.ID}, `FROM store_comments WHERE item_id = ?`, []any{id},
		func(r interface{ Scan(...any) error }) (*Comment, error) {
			c := &Comment{}
			return c, r.Scan(&c.ID, &c.Author, &c.Text, &c.Mine, &c.CreatedAt)
		})
}

// AddComment adds a comment: plain text, 1..MaxCommentLen runes, no
// control characters but line breaks and tabs.
func AddComment(ctx context.Context, act *app.Actor, id int64, in CommentInput) (*Comment, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return nil, app.ErrValidation("required", "text")
	}
	if err := checkText(text, "text", MaxCommentLen, true); err != nil {
		return nil, err
	}
	author, err := cleanName(in.Author, "author", MaxDisplayLen, false)
	if err != nil {
		return nil, err
	}
	a := act.Tenant.App
	var out *Comment
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if err := itemExists(ctx, tx, id); err != nil {
			return err
		}
		now := a.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO store_comments(item_id, tenant_id, author, text, created_at) VALUES (?,?,?,?,?)`, id, act.Tenant.ID, author, text, now)
		if err != nil {
			return err
		}
		cid, err := r.LastInsertId()
		if err != nil {
			return err
		}
		out = &Comment{ID: cid, Author: author, Text: text, Mine: true}
		return out.CreatedAt.Scan(now)
	})
	return out, err
}

// ReviewListSpec lists reviews newest first.
var ReviewListSpec = app.ListSpec{Sorts: map[string]string{"updated_at": "updated_at", "stars": "stars"}, DefaultSort: "updated_at"}

// Reviews lists an item's reviews; meta.aggregates holds their count and
// average stars.
func Reviews(ctx context.Context, act *app.Actor, id int64, q app.ListQuery) (app.Page[Review], error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return app.Page[Review]{}, err
	}
	a := act.Tenant.App
	if err := itemExists(ctx, a.Inst.R, id); err != nil {
		return app.Page[Review]{}, err
	}
	p, err := instPage(ctx, a, q, `id, author, stars, text, tenant_id = ?, created_at, updated_at`, []any{act.Tenant.ID}, `FROM store_reviews WHERE item_id = ?`, []any{id},
		func(r interface{ Scan(...any) error }) (*Review, error) {
			v := &Review{}
			return v, r.Scan(&v.ID, &v.Author, &v.Stars, &v.Text, &v.Mine, &v.CreatedAt, &v.UpdatedAt)
		})
	if err != nil {
		return p, err
	}
	var avg float64
	var n int64
	if err := a.Inst.R.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(AVG(stars), 0) FROM store_reviews WHERE item_id = ?`, id).Scan(&n, &avg); err != nil {
		return p, err
	}
	p.Meta.Aggregates = map[string]any{"count": n, "average": avg}
	return p, nil
}

// PostReview writes the caller's tenant's review of an item (1..5 stars,
// text up to MaxReviewLen runes); posting again edits it.
func PostReview(ctx context.Context, act *app.Actor, id int64, in ReviewInput) (*Review, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	if in.Stars < 1 || in.Stars > 5 {
		return nil, app.ErrValidation("review_stars_out_of_range", "stars")
	}
	text := strings.TrimSpace(in.Text)
	if err := checkText(text, "text", MaxReviewLen, true); err != nil {
		return nil, err
	}
	author, err := cleanName(in.Author, "author", MaxDisplayLen, false)
	if err != nil {
		return nil, err
	}
	a := act.Tenant.App
	var out *Review
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if err := itemExists(ctx, tx, id); err != nil {
			return err
		}
		now := a.NowText()
		if _, err := tx.ExecContext(ctx, `INSERT INTO store_reviews(item_id, tenant_id, author, stars, text, created_at, updated_at) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT(item_id, tenant_id) DO UPDATE SET author = excluded.author, stars = excluded.stars, text = excluded.text, updated_at = excluded.updated_at`,
			id, act.Tenant.ID, author, in.Stars, text, now, now); err != nil {
			return err
		}
		v := &Review{Mine: true}
		if err := tx.QueryRowContext(ctx, `SELECT id, author, stars, text, created_at, updated_at FROM store_reviews WHERE item_id = ? AND tenant_id = ?`, id, act.Tenant.ID).
			Scan(&v.ID, &v.Author, &v.Stars, &v.Text, &v.CreatedAt, &v.UpdatedAt); err != nil {
			return err
		}
		out = v
		return nil
	})
	return out, err
}

// Import copies a store item into the caller's designs: a new design at
// version 1 with copies of its images in the tenant's file store. The
// copy and the item are independent from then on.
func Import(ctx context.Context, act *app.Actor, id int64, in ImportInput) (*Design, error) {
	if err := act.Require(PermStudioEdit); err != nil {
		return nil, err
	}
	name, err := cleanName(in.Name, "name", MaxNameLen, false)
	if err != nil {
		return nil, err
	}
	t := act.Tenant
	a := t.App
	it, err := getItem(ctx, a.Inst.R, act, id, true)
	if err != nil {
		return nil, err
	}
	if name == "" {
		name = it.Name
	}
	type img struct {
		id, ct string
		data   []byte
	}
	blobs, err := app.QueryAll(ctx, a.Inst.R, func(r interface{ Scan(...any) error }) (*img, error) {
		v := &img{}
		return v, r.Scan(&v.id, &v.ct, &v.data)
	}, `SELECT image_id, content_type, data FROM store_images WHERE item_id = ? ORDER BY image_id`, id)
	if err != nil {
		return nil, err
	}
	var staged []*files.Staged
	defer func() {
		for _, st := range staged {
			st.Discard()
		}
	}()
	type stagedImg struct {
		st   *files.Staged
		w, h int
	}
	byRef := map[string]stagedImg{}
	for _, b := range blobs {
		ext := ".png"
		if b.ct == "image/jpeg" {
			ext = ".jpg"
		}
		st, err := files.Stage(t, fmt.Sprintf("store-%d-%s%s", id, b.id, ext), bytes.NewReader(b.data), files.Policy{MaxBytes: MaxImageBytes * 4, Allow: imageAllow})
		if err != nil {
			return nil, err
		}
		staged = append(staged, st)
		w, h, err := checkImageFile(st.Path())
		if err != nil {
			return nil, err
		}
		byRef[b.id] = stagedImg{st, w, h}
	}
	doc := *it.Doc
	doc.Elements = append([]render.Element(nil), it.Doc.Elements...)
	var out *Design
	err = t.Write(ctx, func(tx *sql.Tx) error {
		newIDs := map[string]string{}
		for ref, si := range byRef {
			f, err := si.st.Insert(ctx, tx, "studio")
			if err != nil {
				return err
			}
			r, err := tx.ExecContext(ctx, `INSERT INTO design_images(file_id, name, content_type, width, height, size, created_by, created_at) VALUES (?,?,?,?,?,?,?,?)`,
				f.ID, f.Name, f.ContentType, si.w, si.h, f.Size, nullManager(act), t.NowText())
			if err != nil {
				return err
			}
			nid, err := r.LastInsertId()
			if err != nil {
				return err
			}
			newIDs[ref] = strconv.FormatInt(nid, 10)
		}
		for i := range doc.Elements {
			if doc.Elements[i].Type == "image" {
				doc.Elements[i].ImageID = newIDs[doc.Elements[i].ImageID]
			}
		}
		b, err := checkDoc(ctx, tx, it.Kind, &doc)
		if err != nil {
			return err
		}
		now := t.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO designs(name, kind, doc, version, is_default, created_by, created_at, updated_at) VALUES (?,?,?,1,0,?,?,?)`,
			name, it.Kind, string(b), nullManager(act), now, now)
		if err != nil {
			return err
		}
		did, err := r.LastInsertId()
		if err != nil {
			return err
		}
		out, err = getDesign(ctx, tx, did)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, st := range staged {
		st.Keep()
	}
	return out, nil
}

// StoreThumbnail renders a store item's snapshot with the sample
// variables of its kind (snapshots never change: cached by item id).
func StoreThumbnail(ctx context.Context, act *app.Actor, id int64) (*Thumb, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	a := act.Tenant.App
	var created string
	if err := a.Inst.R.QueryRowContext(ctx, `SELECT created_at FROM store_items WHERE id = ?`, id).Scan(&created); err != nil {
		return nil, notFoundOr(err)
	}
	b, err := thumbs(a).render(fmt.Sprintf("s:%d:%s", id, created), func() ([]byte, error) {
		it, err := getItem(ctx, a.Inst.R, act, id, true)
		if err != nil {
			return nil, err
		}
		imgs := render.Images{}
		rows, err := a.Inst.R.QueryContext(ctx, `SELECT image_id, data FROM store_images WHERE item_id = ?`, id)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var ref string
			var data []byte
			if err := rows.Scan(&ref, &data); err != nil {
				return nil, err
			}
			imgs[ref] = data
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return renderPNG(it.Doc, imgs)
	})
	if err != nil {
		return nil, err
	}
	return &Thumb{PNG: b, ETag: fmt.Sprintf(`"s%d"`, id)}, nil
}
