package studio

import (
	"container/list"
	"context"
	"fmt"
	"strings"
	"sync"

	"xr/app"
	"xr/app/studio/render"
)

// ThumbPx is the longer side of a thumbnail in pixels.
const ThumbPx = 480

// Thumb is a rendered thumbnail and its entity tag (it changes when the
// design changes: id and version).
type Thumb struct {
	PNG  []byte
	ETag string
}

// thumbCache is an LRU of rendered thumbnails keyed by tenant, design id
// and version (store items: item id), attached to the App by Init.
type thumbCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front = most recent; values are *thumbEntry
	byKey map[string]*list.Element
}

type thumbEntry struct {
	key string
	png []byte
}

type thumbKey struct{}

func newThumbCache(max int) *thumbCache {
	return &thumbCache{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func thumbs(a *app.App) *thumbCache {
	return a.ValueOrStore(thumbKey{}, newThumbCache(512)).(*thumbCache)
}

func (c *thumbCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*thumbEntry).png, true
	}
	return nil, false
}

func (c *thumbCache) put(key string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*thumbEntry).png = b
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&thumbEntry{key: key, png: b})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*thumbEntry).key)
	}
}

// render renders through the cache: a hit answers the stored bytes.
func (c *thumbCache) render(key string, fn func() ([]byte, error)) ([]byte, error) {
	if b, ok := c.get(key); ok {
		return b, nil
	}
	b, err := fn()
	if err != nil {
		return nil, err
	}
	c.put(key, b)
	return b, nil
}

// renderPNG renders a thumbnail with the kind's sample variables; a
// renderer failure is a server fault.
func renderPNG(d *render.Design, imgs render.Images) ([]byte, error) {
	b, err := render.PNG(d, render.SampleVars(d.Kind), imgs, ThumbPx)
	if err != nil {
		return nil, app.ErrInternal(fmt.Errorf("render thumbnail: %w", err))
	}
	return b, nil
}

// Thumbnail is the PNG of a design rendered with the sample variables of
// its kind, cached until the design changes (its version).
func Thumbnail(ctx context.Context, act *app.Actor, id int64) (*Thumb, error) {
	if err := act.Require(PermStudioIndex); err != nil {
		return nil, err
	}
	t := act.Tenant
	var version int64
	var updated string
	if err := t.DB.R.QueryRowContext(ctx, `SELECT version, updated_at FROM designs WHERE id = ?`, id).Scan(&version, &updated); err != nil {
		return nil, notFoundOr(err)
	}
	// The stamp guards against a restored file whose design has the same
	// id and version but another history.
	stamp := strings.NewReplacer(" ", "", "-", "", ":", "").Replace(updated)
	key := fmt.Sprintf("d:%s:%d:%d:%s", t.Slug, id, version, stamp)
	etag := fmt.Sprintf(`"d%d-v%d-%s"`, id, version, stamp)
	b, err := thumbs(t.App).render(key, func() ([]byte, error) {
		d, err := getDesign(ctx, t.DB.R, id)
		if err != nil {
			return nil, err
		}
		imgs, err := loadImages(ctx, t.DB.R, t, d.Doc)
		if err != nil {
			return nil, err
		}
		return renderPNG(d.Doc, imgs)
	})
	if err != nil {
		return nil, err
	}
	return &Thumb{PNG: b, ETag: etag}, nil
}
