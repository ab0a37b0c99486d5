package hotspot

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"xr/app"
	"xr/app/files"
	"xr/db"
)

// Limits of a page set.
const (
	MaxNameLen  = 100
	MaxTitleLen = 120
	MaxBlockLen = 20_000 // characters of one HTML block, before sanitizing
	MaxCSSLen   = 20_000 // characters of custom CSS
	MaxURLLen   = 300
	// MaxLogoBytes bounds an uploaded logo.
	MaxLogoBytes = 512 << 10
)

// LogoAllow are the logo types (what RouterOS serves as img/logo.<ext>).
var LogoAllow = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// PageSet is a tenant's hotspot page set as the API shows it. Blocks hold
// the sanitized HTML (what was stored, not what was sent).
type PageSet struct {
	ID              int64             `json:"id"`
	Name            string            `json:"name"`
	Template        string            `json:"template"`
	Lang            string            `json:"lang"`
	Title           string            `json:"title"`
	ColorPrimary    string            `json:"color_primary"`
	ColorBackground string            `json:"color_background"`
	ColorText       string            `json:"color_text"`
	LogoFileID      *int64            `json:"logo_file_id"`
	Blocks          map[string]string `json:"blocks"`
	CustomCSS       string            `json:"custom_css"`
	PublicURL       string            `json:"public_url"`
	ShowSignup      bool              `json:"show_signup"`
	ShowShop        bool              `json:"show_shop"`
	ManagerID       int64             `json:"manager_id"`
	CreatedAt       app.Time          `json:"created_at"`
	UpdatedAt       app.Time          `json:"updated_at"`
}

// PageInput creates a page set (POST /hotspot/pages) or is previewed
// unsaved (POST /hotspot/preview). Colours are #rrggbb, "" for the
// tenant's branding or the template's; blocks are keyed by page
// (login, alogin, status, logout, error, redirect, rlogin).
type PageInput struct {
	Name            string            `json:"name"`
	Template        string            `json:"template"`
	Lang            string            `json:"lang,omitempty"`
	Title           string            `json:"title,omitempty"`
	ColorPrimary    string            `json:"color_primary,omitempty"`
	ColorBackground string            `json:"color_background,omitempty"`
	ColorText       string            `json:"color_text,omitempty"`
	LogoFileID      *int64            `json:"logo_file_id,omitempty"`
	Blocks          map[string]string `json:"blocks,omitempty"`
	CustomCSS       string            `json:"custom_css,omitempty"`
	PublicURL       string            `json:"public_url,omitempty"`
	ShowSignup      *bool             `json:"show_signup,omitempty"`
	ShowShop        *bool             `json:"show_shop,omitempty"`
}

// PagePatch changes a page set (PATCH /hotspot/pages/{id}); blocks, when
// sent, replace every block. logo_file_id null removes the logo.
type PagePatch struct {
	Name            app.Opt[string]            `json:"name"`
	Template        app.Opt[string]            `json:"template"`
	Lang            app.Opt[string]            `json:"lang"`
	Title           app.Opt[string]            `json:"title"`
	ColorPrimary    app.Opt[string]            `json:"color_primary"`
	ColorBackground app.Opt[string]            `json:"color_background"`
	ColorText       app.Opt[string]            `json:"color_text"`
	LogoFileID      app.Opt[int64]             `json:"logo_file_id"`
	Blocks          app.Opt[map[string]string] `json:"blocks"`
	CustomCSS       app.Opt[string]            `json:"custom_css"`
	PublicURL       app.Opt[string]            `json:"public_url"`
	ShowSignup      app.Opt[bool]              `json:"show_signup"`
	ShowShop        app.Opt[bool]              `json:"show_shop"`
}

// DuplicateInput names the copy (POST /hotspot/pages/{id}/duplicate);
// empty: "<name> (copy)", numbered until free.
type DuplicateInput struct {
	Name string `json:"name,omitempty"`
}

const pageCols = `p.id, p.name, p.template, p.lang, p.title, p.color_primary, p.color_background, p.color_text, p.logo_file_id,
	p.blocks, p.custom_css, p.public_url, p.show_signup, p.show_shop, p.manager_id, p.created_at, p.updated_at`

func scanPage(row interface{ Scan(...any) error }) (PageSet, error) {
	var p PageSet
	var logo sql.NullInt64
	var blocks string
	if err := row.Scan(&p.ID, &p.Name, &p.Template, &p.Lang, &p.Title, &p.ColorPrimary, &p.ColorBackground, &p.ColorText, &logo,
		&blocks, &p.CustomCSS, &p.PublicURL, &p.ShowSignup, &p.ShowShop, &p.ManagerID, &p.CreatedAt, &p.UpdatedAt); err != nil {
		return p, err
	}
	if logo.Valid {
		p.LogoFileID = &logo.Int64
	}
	p.Blocks = map[string]string{}
	if err := json.Unmarshal([]byte(blocks), &p.Blocks); err != nil {
		return p, fmt.Errorf("hotspot page %d blocks: %w", p.ID, err)
	}
	return p, nil
}

// get finds page set id among the caller's (404 otherwise).
func get(ctx context.Context, q app.Querier, act *app.Actor, id int64) (PageSet, error) {
	scope, args := act.ScopeSQL("p.manager_id")
	p, err := scanPage(q.QueryRowContext(ctx, `SELECT `+pageCols+` FROM hotspot_pages p WHERE p.id = ? AND `+scope, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return p, app.ErrNotFound()
	}
	return p, err
}

// GetPage answers GET /hotspot/pages/{id}.
func GetPage(ctx context.Context, act *app.Actor, id int64) (*PageSet, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	var p PageSet
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) (err error) {
		p, err = get(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// ListSpec is the page-set list's sorts and filters.
var ListSpec = app.ListSpec{
	Sorts:       map[string]string{"id": "p.id", "name": "p.name", "template": "p.template", "created_at": "p.created_at", "updated_at": "p.updated_at"},
	DefaultSort: "name",
	DefaultAsc:  true,
	Filters:     map[string]app.FilterKind{"template": app.FilterString, "lang": app.FilterString},
	Aliases:     []string{"template", "lang"},
}

// ListPages answers GET /hotspot/pages (q matches the name).
func ListPages(ctx context.Context, act *app.Actor, lq app.ListQuery) (app.Page[PageSet], error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return app.Page[PageSet]{}, err
	}
	cond, args := act.ScopeSQL("p.manager_id")
	where := []string{cond}
	if lq.Q != "" {
		where = append(where, `p.name LIKE ? ESCAPE '\'`)
		args = append(args, "%"+escapeLike(lq.Q)+"%")
	}
	for _, f := range []struct{ key, col string }{{"template", "p.template"}, {"lang", "p.lang"}} {
		if v, ok := lq.Str(f.key); ok {
			where = append(where, f.col+" = ?")
			args = append(args, v)
		}
	}
	return app.QueryPage(ctx, act.Tenant, lq, pageCols, ` FROM hotspot_pages p WHERE `+strings.Join(where, " AND "), args, "p.id",
		func(rows *sql.Rows) (PageSet, error) { return scanPage(rows) })
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// checkColor accepts "" or #rrggbb (stored lower case).
func checkColor(v, field string) (string, error) {
	v = strings.TrimSpace(v)
	if v != "" && !colorRe.MatchString(v) {
		return "", app.ErrValidation("invalid_color", field)
	}
	return strings.ToLower(v), nil
}

// checkPublicURL accepts "" or an absolute http(s) URL without
// credentials, query or fragment (kept without its trailing slash).
func checkPublicURL(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if len(v) > MaxURLLen {
		return "", app.ErrValidation("too_long", "public_url")
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", app.ErrValidation("invalid_url", "public_url")
	}
	return strings.TrimSuffix(v, "/"), nil
}

func checkText(v, field string, max int, required bool) (string, error) {
	v = strings.TrimSpace(v)
	if required && v == "" {
		return "", app.ErrValidation("required", field)
	}
	if utf8.RuneCountInString(v) > max {
		return "", app.ErrValidation("too_long", field)
	}
	return v, nil
}

// normalize validates a whole page set (after a patch too) and sanitizes
// its blocks and checks its CSS; it returns the stored form.
func normalize(p *PageSet) error {
	var err error
	if p.Name, err = checkText(p.Name, "name", MaxNameLen, true); err != nil {
		return err
	}
	if _, ok := templateByKey(p.Template); !ok {
		return app.ErrValidation("invalid_enum", "template").With("allowed", TemplateKeys())
	}
	if p.Lang == "" {
		p.Lang = "en"
	}
	if p.Lang != "en" && p.Lang != "ar" {
		return app.ErrValidation("invalid_enum", "lang").With("allowed", []string{"en", "ar"})
	}
	if p.Title, err = checkText(p.Title, "title", MaxTitleLen, false); err != nil {
		return err
	}
	for _, c := range []struct {
		v     *string
		field string
	}{{&p.ColorPrimary, "color_primary"}, {&p.ColorBackground, "color_background"}, {&p.ColorText, "color_text"}} {
		if *c.v, err = checkColor(*c.v, c.field); err != nil {
			return err
		}
	}
	if p.ColorText != "" && p.ColorBackground != "" && contrast(p.ColorText, p.ColorBackground) < 4.5 {
		return app.ErrValidation("hotspot_low_contrast", "color_text")
	}
	if p.PublicURL, err = checkPublicURL(p.PublicURL); err != nil {
		return err
	}
	if utf8.RuneCountInString(p.CustomCSS) > MaxCSSLen {
		return app.ErrValidation("too_long", "custom_css")
	}
	if err := CheckCSS(p.CustomCSS); err != nil {
		return err
	}
	blocks := map[string]string{}
	for k, v := range p.Blocks {
		if !isPage(k) {
			return app.ErrValidation("invalid_enum", "blocks."+k).With("allowed", PageKeys)
		}
		if utf8.RuneCountInString(v) > MaxBlockLen {
			return app.ErrValidation("too_long", "blocks."+k)
		}
		if s := strings.TrimSpace(Sanitize(v)); s != "" {
			blocks[k] = s
		}
	}
	p.Blocks = blocks
	return nil
}

// checkLogo accepts a stored image of the hotspot area as a logo.
func checkLogo(ctx context.Context, q app.Querier, id *int64) error {
	if id == nil {
		return nil
	}
	f, err := files.Get(ctx, q, *id)
	var ae *app.Error
	if errors.As(err, &ae) && ae.Status == 404 {
		return app.ErrValidation("hotspot_logo_invalid", "logo_file_id")
	}
	if err != nil {
		return err
	}
	if f.Area != fileArea || !allowedLogo(f.ContentType) {
		return app.ErrValidation("hotspot_logo_invalid", "logo_file_id")
	}
	return nil
}

func allowedLogo(ct string) bool {
	for _, a := range LogoAllow {
		if a == ct {
			return true
		}
	}
	return false
}

// fileArea names the files of this area in the tenant file store.
const fileArea = "hotspot"

func blocksJSON(b map[string]string) string {
	out, _ := json.Marshal(b) // a map of strings always marshals
	return string(out)
}

// fromInput is a page set built from an input (defaults applied).
func fromInput(in PageInput) PageSet {
	p := PageSet{Name: in.Name, Template: in.Template, Lang: in.Lang, Title: in.Title, ColorPrimary: in.ColorPrimary,
		ColorBackground: in.ColorBackground, ColorText: in.ColorText, LogoFileID: in.LogoFileID, Blocks: in.Blocks,
		CustomCSS: in.CustomCSS, PublicURL: in.PublicURL, ShowSignup: true, ShowShop: true}
	if in.ShowSignup != nil {
		p.ShowSignup = *in.ShowSignup
	}
	if in.ShowShop != nil {
		p.ShowShop = *in.ShowShop
	}
	return p
}

func insert(ctx context.Context, tx *sql.Tx, act *app.Actor, p PageSet) (int64, error) {
	now := act.Tenant.NowText()
	res, err := tx.ExecContext(ctx, `INSERT INTO hotspot_pages(name, template, lang, title, color_primary, color_background, color_text,
		logo_file_id, blocks, custom_css, public_url, show_signup, show_shop, manager_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.Name, p.Template, p.Lang, p.Title, p.ColorPrimary, p.ColorBackground, p.ColorText, p.LogoFileID, blocksJSON(p.Blocks),
		p.CustomCSS, p.PublicURL, p.ShowSignup, p.ShowShop, act.ManagerID, now, now)
	if err != nil {
		if db.IsUnique(err) {
			return 0, app.ErrConflict("name_taken").With("field", "name")
		}
		return 0, err
	}
	return res.LastInsertId()
}

// CreatePage answers POST /hotspot/pages: blocks are sanitized and the
// sanitized HTML is what is stored and answered.
func CreatePage(ctx context.Context, act *app.Actor, in PageInput) (*PageSet, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	p := fromInput(in)
	if err := normalize(&p); err != nil {
		return nil, err
	}
	var out PageSet
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		if err := checkLogo(ctx, tx, p.LogoFileID); err != nil {
			return err
		}
		id, err := insert(ctx, tx, act, p)
		if err != nil {
			return err
		}
		out, err = get(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// PatchPage answers PATCH /hotspot/pages/{id}.
func PatchPage(ctx context.Context, act *app.Actor, id int64, in PagePatch) (*PageSet, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	var out PageSet
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		cur, err := get(ctx, tx, act, id)
		if err != nil {
			return err
		}
		next := cur
		for _, s := range []struct {
			o   app.Opt[string]
			dst *string
		}{{in.Name, &next.Name}, {in.Template, &next.Template}, {in.Lang, &next.Lang}, {in.Title, &next.Title},
			{in.ColorPrimary, &next.ColorPrimary}, {in.ColorBackground, &next.ColorBackground}, {in.ColorText, &next.ColorText},
			{in.CustomCSS, &next.CustomCSS}, {in.PublicURL, &next.PublicURL}} {
			if s.o.Set {
				*s.dst = s.o.V // null clears to ""
			}
		}
		if in.Blocks.Set {
			next.Blocks = in.Blocks.V
		}
		if in.LogoFileID.Set {
			next.LogoFileID = nil
			if !in.LogoFileID.Null {
				v := in.LogoFileID.V
				next.LogoFileID = &v
			}
		}
		if in.ShowSignup.Set {
			next.ShowSignup = in.ShowSignup.V
		}
		if in.ShowShop.Set {
			next.ShowShop = in.ShowShop.V
		}
		if err := normalize(&next); err != nil {
			return err
		}
		if in.LogoFileID.Set {
			if err := checkLogo(ctx, tx, next.LogoFileID); err != nil {
				return err
			}
		}
		var p app.Patch
		str := func(col string, o app.Opt[string], v string) {
			if o.Set {
				p.Set(col, v)
			}
		}
		str("name", in.Name, next.Name)
		str("template", in.Template, next.Template)
		str("lang", in.Lang, next.Lang)
		str("title", in.Title, next.Title)
		str("color_primary", in.ColorPrimary, next.ColorPrimary)
		str("color_background", in.ColorBackground, next.ColorBackground)
		str("color_text", in.ColorText, next.ColorText)
		str("custom_css", in.CustomCSS, next.CustomCSS)
		str("public_url", in.PublicURL, next.PublicURL)
		if in.Blocks.Set {
			p.Set("blocks", blocksJSON(next.Blocks))
		}
		if in.LogoFileID.Set {
			p.Set("logo_file_id", next.LogoFileID)
		}
		app.SetOptOrZero(&p, "show_signup", in.ShowSignup, func(v bool) any { return v })
		app.SetOptOrZero(&p, "show_shop", in.ShowShop, func(v bool) any { return v })
		if _, err := p.Exec(ctx, tx, "hotspot_pages", id, act.Tenant.NowText()); err != nil {
			if db.IsUnique(err) {
				return app.ErrConflict("name_taken").With("field", "name")
			}
			return err
		}
		out, err = get(ctx, tx, act, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePage answers DELETE /hotspot/pages/{id}; a logo no other set uses
// is deleted with it.
func DeletePage(ctx context.Context, act *app.Actor, id int64) error {
	if err := act.Require(PermHotspotManage); err != nil {
		return err
	}
	var gone []string
	err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		p, err := get(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM hotspot_pages WHERE id = ?`, id); err != nil {
			return err
		}
		gone, err = dropUnusedLogo(ctx, tx, p.LogoFileID)
		return err
	})
	if err != nil {
		return err
	}
	files.Remove(act.Tenant, gone...)
	return nil
}

// dropUnusedLogo deletes the row of a hotspot logo no set references any
// more; the caller removes the bytes after commit.
func dropUnusedLogo(ctx context.Context, tx *sql.Tx, id *int64) ([]string, error) {
	if id == nil {
		return nil, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM hotspot_pages WHERE logo_file_id = ?`, *id).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, nil
	}
	f, err := files.Get(ctx, tx, *id)
	var ae *app.Error
	if errors.As(err, &ae) && ae.Status == 404 {
		return nil, nil // already gone
	}
	if err != nil {
		return nil, err
	}
	if f.Area != fileArea {
		return nil, nil // not a logo of this area: left alone
	}
	rel, err := files.DeleteRow(ctx, tx, *id)
	if err != nil {
		return nil, err
	}
	return []string{rel}, nil
}

// BulkDeletePages answers POST /hotspot/pages/bulk-delete.
func BulkDeletePages(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return app.BulkResult{}, err
	}
	if err := in.Validate(); err != nil {
		return app.BulkResult{}, err
	}
	return app.RunBulk(ctx, in.IDs, func(ctx context.Context, id int64) error { return DeletePage(ctx, act, id) }), nil
}

// DuplicatePage answers POST /hotspot/pages/{id}/duplicate: a copy owned
// by the caller (the logo file is shared, not copied).
func DuplicatePage(ctx context.Context, act *app.Actor, id int64, in DuplicateInput) (*PageSet, error) {
	if err := act.Require(PermHotspotManage); err != nil {
		return nil, err
	}
	name, err := checkText(in.Name, "name", MaxNameLen, false)
	if err != nil {
		return nil, err
	}
	var out PageSet
	err = act.Tenant.Write(ctx, func(tx *sql.Tx) error {
		src, err := get(ctx, tx, act, id)
		if err != nil {
			return err
		}
		cp := src
		if name != "" {
			cp.Name = name
		} else if cp.Name, err = freeName(ctx, tx, src.Name); err != nil {
			return err
		}
		nid, err := insert(ctx, tx, act, cp)
		if err != nil {
			return err
		}
		out, err = get(ctx, tx, act, nid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// freeName is "<name> (copy)", then "(copy 2)"... the first not taken.
func freeName(ctx context.Context, tx *sql.Tx, name string) (string, error) {
	base := []rune(name)
	if len(base) > MaxNameLen-12 {
		base = base[:MaxNameLen-12]
	}
	for i := 1; i < 1000; i++ {
		cand := string(base) + " (copy)"
		if i > 1 {
			cand = fmt.Sprintf("%s (copy %d)", string(base), i)
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM hotspot_pages WHERE name = ?`, cand).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return cand, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", app.ErrConflict("name_taken").With("field", "name")
}

// isPage reports whether k names a page of a set.
func isPage(k string) bool {
	i := sort.SearchStrings(sortedPages, k)
	return i < len(sortedPages) && sortedPages[i] == k
}

// PageKeys are the pages of a set, in the order RouterOS documents them.
var PageKeys = []string{"login", "alogin", "status", "logout", "error", "redirect", "rlogin"}

var sortedPages = func() []string {
	s := append([]string{}, PageKeys...)
	sort.Strings(s)
	return s
}()
