package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/studio"
	"xr/app/studio/render"
	"xr/web"
)

// Design studio pages: the designs list, the design editor (JSON document
// beside the variable catalogue, thumbnail, images, default, publish), the
// store gallery and a store item (comments, review, star, import,
// unpublish), over the functions and permissions of the /studio rows.
func (s *site) studioPages() []web.Route {
	idx := []app.Perm{studio.PermStudioIndex}
	return []web.Route{
		{M: "GET", P: "/studio", Access: web.Staff, API: "GET /studio/designs", H: s.pageStudio, Menu: "studio"},
		{M: "POST", P: "/studio", Access: web.Staff, API: "POST /studio/designs", H: s.pageStudioCreate},
		{M: "GET", P: "/studio/designs/{id}", Access: web.Staff, API: "GET /studio/designs/{id}", H: s.pageStudioDesign},
		{M: "POST", P: "/studio/designs/{id}", Access: web.Staff, API: "PATCH /studio/designs/{id}", H: s.pageStudioSave},
		{M: "POST", P: "/studio/designs/{id}/delete", Access: web.Staff, API: "DELETE /studio/designs/{id}", H: s.pageStudioDelete},
		{M: "POST", P: "/studio/designs/{id}/images", Access: web.Staff, API: "POST /studio/images", File: true, H: s.pageStudioUpload},
		{M: "POST", P: "/studio/designs/{id}/publish", Access: web.Staff, API: "POST /studio/store", H: s.pageStudioPublish},
		{M: "GET", P: "/studio/designs/{id}/thumbnail", Access: web.Staff, API: "GET /studio/designs/{id}/thumbnail"},
		{M: "GET", P: "/studio/images/{id}", Access: web.Staff, File: true, API: "GET /studio/images/{id}"},
		{M: "GET", P: "/studio/store", Access: web.Staff, API: "GET /studio/store", H: s.pageStudioStore, Menu: "studio_store"},
		{M: "GET", P: "/studio/store/{id}", Access: web.Staff, API: "GET /studio/store/{id}", H: s.pageStudioStoreItem},
		{M: "GET", P: "/studio/store/{id}/thumbnail", Access: web.Staff, API: "GET /studio/store/{id}/thumbnail"},
		{M: "POST", P: "/studio/store/{id}/{action}", Access: web.Staff, Perms: idx, H: s.pageStudioStoreAction},
	}
}

type studioListView struct {
	Rows       []studio.Design
	Kinds      []string
	Kind, Q    string
	Prev, Next string
	CanEdit    bool
	CanDelete  bool
}

func (s *site) pageStudio(c *web.Ctx) error {
	q, err := app.ParseList(c.Query(), studio.ListSpec)
	if err != nil {
		return err
	}
	p, err := studio.List(c.R.Context(), c.Actor, q)
	if err != nil {
		return err
	}
	v := s.NewView(c, "studio", "menu.studio")
	kind, _ := q.Str("kind")
	d := &studioListView{Rows: p.Rows, Kinds: studio.Kinds, Kind: kind, Q: q.Q,
		CanEdit: c.Actor.Can(studio.PermStudioEdit), CanDelete: c.Actor.Can(studio.PermStudioDelete)}
	keep := web.NonEmpty("kind", kind)
	if q.Q != "" {
		keep.Set("q", q.Q)
	}
	d.Prev, d.Next = web.Pager("", keep, p.Meta)
	v.Data = d
	return s.Render(c, http.StatusOK, "studio_designs", v)
}

func (s *site) pageStudioCreate(c *web.Ctx) error {
	if err := web.ParseForm(c); err != nil {
		return err
	}
	in := studio.CreateInput{Name: c.R.PostForm.Get("name"), Kind: studio.Kind(c.R.PostForm.Get("kind")),
		IsDefault: c.R.PostForm.Get("is_default") != ""}
	d, err := studio.Create(c.R.Context(), c.Actor, in)
	if err != nil {
		v := s.NewView(c, "studio", "menu.studio")
		v.Form = c.R.PostForm
		v.Data = &studioListView{Kinds: studio.Kinds, CanEdit: true, CanDelete: c.Actor.Can(studio.PermStudioDelete)}
		if e := app.AsError(err); e != nil && e.Field == "" && e.Status == http.StatusBadRequest {
			e.Field = "name"
		}
		return s.FormError(c, "studio_designs", v, err)
	}
	v := s.NewView(c, "studio", "menu.studio")
	s.SetFlash(c, v.T("studio.created"), false)
	return web.Redirect(c, fmt.Sprintf("/studio/designs/%d", d.ID))
}

type studioDesignView struct {
	D          *studio.Design
	DocJSON    string
	Vars       []render.Variable
	Images     []studio.Image
	CanEdit    bool
	CanDelete  bool
	CanPublish bool
}

// designView loads the editor's data; the form defaults to the stored design.
func (s *site) designView(c *web.Ctx, id int64) (*web.View, *studioDesignView, error) {
	d, err := studio.Get(c.R.Context(), c.Actor, id)
	if err != nil {
		return nil, nil, err
	}
	imgs, err := studio.Images(c.R.Context(), c.Actor)
	if err != nil {
		return nil, nil, err
	}
	vars, err := studio.Variables(c.R.Context(), c.Actor)
	if err != nil {
		return nil, nil, err
	}
	doc, err := json.MarshalIndent(d.Doc, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	v := s.NewView(c, "studio", "menu.studio")
	v.Title = d.Name
	dv := &studioDesignView{D: d, DocJSON: string(doc), Vars: vars[d.Kind], Images: imgs,
		CanEdit: c.Actor.Can(studio.PermStudioEdit), CanDelete: c.Actor.Can(studio.PermStudioDelete), CanPublish: c.Actor.Can(studio.PermStudioPublish)}
	v.Form = url.Values{"name": {d.Name}, "doc": {dv.DocJSON}, "version": {strconv.FormatInt(d.Version, 10)}}
	if d.IsDefault {
		v.Form.Set("is_default", "on")
	}
	v.Data = dv
	return v, dv, nil
}

func (s *site) pageStudioDesign(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v, _, err := s.designView(c, id)
	if err != nil {
		return err
	}
	return s.Render(c, http.StatusOK, "studio_design", v)
}

func (s *site) pageStudioSave(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v, _, err := s.designView(c, id)
	if err != nil {
		return err
	}
	v.Form = c.R.PostForm
	f := c.R.PostForm
	ver, _ := strconv.ParseInt(f.Get("version"), 10, 64)
	in := studio.PatchInput{Version: ver, Name: app.Opt[string]{Set: true, V: f.Get("name")},
		IsDefault: app.Opt[bool]{Set: true, V: f.Get("is_default") != ""}}
	var doc render.Design
	dec := json.NewDecoder(strings.NewReader(f.Get("doc")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return s.FormError(c, "studio_design", v, app.ErrValidation("malformed_json", "doc").With("detail", err.Error()))
	}
	in.Doc = app.Opt[render.Design]{Set: true, V: doc}
	if _, err := studio.Patch(c.R.Context(), c.Actor, id, in); err != nil {
		// The document's own refusals (elements[1].text, page, kind...)
		// are shown beside the document, naming the element.
		if e := app.AsError(err); e != nil && e.Status == http.StatusBadRequest && e.Field != "" && e.Field != "name" && e.Field != "version" {
			msg := web.Message(v.Lang, e.Reason, e.Code) + " (" + e.Field + ")"
			if vr, ok := e.Details["variable"].(string); ok {
				msg += " {" + vr + "}"
			}
			v.Errors["doc"] = msg
			return s.Render(c, e.Status, "studio_design", v)
		}
		return s.FormError(c, "studio_design", v, err)
	}
	s.SetFlash(c, v.T("studio.saved"), false)
	return web.Redirect(c, fmt.Sprintf("/studio/designs/%d", id))
}

func (s *site) pageStudioDelete(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	v := s.NewView(c, "studio", "menu.studio")
	if err := studio.Delete(c.R.Context(), c.Actor, id, c.R.PostForm.Get("version")); err != nil {
		e := app.AsError(err)
		if e == nil || e.Status >= 500 || e.Status == http.StatusNotFound || e.Status == http.StatusForbidden {
			return err
		}
		s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
		return web.Redirect(c, "/studio")
	}
	s.SetFlash(c, v.T("studio.deleted"), false)
	return web.Redirect(c, "/studio")
}

func (s *site) pageStudioUpload(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	back := fmt.Sprintf("/studio/designs/%d", id)
	v := s.NewView(c, "studio", "menu.studio")
	name, src, _, err := web.UploadPart(c, studio.MaxImageBytes)
	if err == nil {
		var im *studio.Image
		im, err = studio.UploadImage(c.R.Context(), c.Actor, name, src)
		if err == nil {
			s.SetFlash(c, fmt.Sprintf("%s %d", v.T("studio.image_uploaded"), im.ID), false)
			return web.Redirect(c, back)
		}
	}
	e := app.AsError(err)
	if e == nil || e.Status >= 500 || e.Status == http.StatusForbidden {
		return err
	}
	s.SetFlash(c, web.Message(v.Lang, e.Reason, e.Code), true)
	return web.Redirect(c, back)
}

func (s *site) pageStudioPublish(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	in := studio.PublishInput{DesignID: id, Publisher: c.R.PostForm.Get("publisher_name"), Description: c.R.PostForm.Get("description")}
	it, err := studio.Publish(c.R.Context(), c.Actor, in)
	if err != nil {
		v, _, verr := s.designView(c, id)
		if verr != nil {
			return verr
		}
		for k, vals := range c.R.PostForm {
			v.Form[k] = vals
		}
		return s.FormError(c, "studio_design", v, err)
	}
	v := s.NewView(c, "studio_store", "menu.studio_store")
	s.SetFlash(c, v.T("studio.published"), false)
	return web.Redirect(c, fmt.Sprintf("/studio/store/%d", it.ID))
}

type studioStoreView struct {
	Rows       []studio.StoreItem
	Kinds      []string
	Kind, Q    string
	Sort       string
	Hidden     bool
	CachedAt   app.Time
	Prev, Next string
}

func (s *site) pageStudioStore(c *web.Ctx) error {
	q, err := app.ParseList(c.Query(), studio.StoreListSpec)
	if err != nil {
		return err
	}
	p, err := studio.ListStore(c.R.Context(), c.Actor, q)
	if err != nil {
		return err
	}
	v := s.NewView(c, "studio_store", "menu.studio_store")
	kind, _ := q.Str("kind")
	hidden, _ := q.Bool("hidden")
	d := &studioStoreView{Rows: p.Rows, Kinds: studio.Kinds, Kind: kind, Q: q.Q, Sort: q.Sort, Hidden: hidden, CachedAt: *p.Meta.CachedAt}
	keep := web.NonEmpty("kind", kind)
	for k, val := range map[string]string{"q": q.Q, "sort": c.Query().Get("sort")} {
		if val != "" {
			keep.Set(k, val)
		}
	}
	if hidden {
		keep.Set("filter[hidden]", "true")
	}
	d.Prev, d.Next = web.Pager("", keep, p.Meta)
	v.Data = d
	return s.Render(c, http.StatusOK, "studio_store", v)
}

type studioItemView struct {
	It         *studio.StoreItem
	Reviews    []studio.Review
	Comments   []studio.Comment
	MyReview   *studio.Review
	Average    float64
	CanEdit    bool
	CanPublish bool
}

func (s *site) studioItemView(c *web.Ctx, id int64) (*web.View, error) {
	ctx := c.R.Context()
	it, err := studio.GetStoreItem(ctx, c.Actor, id)
	if err != nil {
		return nil, err
	}
	rq, err := app.ParseList(url.Values{"page_size": {"200"}}, studio.ReviewListSpec)
	if err != nil {
		return nil, err
	}
	rv, err := studio.Reviews(ctx, c.Actor, id, rq)
	if err != nil {
		return nil, err
	}
	cq, err := app.ParseList(url.Values{"page_size": {"200"}}, studio.CommentListSpec)
	if err != nil {
		return nil, err
	}
	cs, err := studio.Comments(ctx, c.Actor, id, cq)
	if err != nil {
		return nil, err
	}
	v := s.NewView(c, "studio_store", "menu.studio_store")
	v.Title = it.Name
	d := &studioItemView{It: it, Reviews: rv.Rows, Comments: cs.Rows, Average: it.Rating,
		CanEdit: c.Actor.Can(studio.PermStudioEdit), CanPublish: c.Actor.Can(studio.PermStudioPublish)}
	for i := range rv.Rows {
		if rv.Rows[i].Mine {
			d.MyReview = &rv.Rows[i]
			v.Form.Set("stars", strconv.Itoa(rv.Rows[i].Stars))
			v.Form.Set("review_text", rv.Rows[i].Text)
			v.Form.Set("review_author", rv.Rows[i].Author)
		}
	}
	v.Data = d
	return v, nil
}

func (s *site) pageStudioStoreItem(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	v, err := s.studioItemView(c, id)
	if err != nil {
		return err
	}
	return s.Render(c, http.StatusOK, "studio_store_item", v)
}

// pageStudioStoreAction runs a store item's form: star, unstar, hide, unhide,
// import, unpublish, review, comment (each checks its own permission).
func (s *site) pageStudioStoreAction(c *web.Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := web.ParseForm(c); err != nil {
		return err
	}
	ctx, f := c.R.Context(), c.R.PostForm
	back := fmt.Sprintf("/studio/store/%d", id)
	flash := ""
	switch c.R.PathValue("action") {
	case "star":
		_, err = studio.Star(ctx, c.Actor, id)
	case "unstar":
		_, err = studio.Unstar(ctx, c.Actor, id)
	case "hide":
		_, err = studio.Hide(ctx, c.Actor, id)
		flash, back = "studio.hidden_done", "/studio/store"
	case "unhide":
		_, err = studio.Unhide(ctx, c.Actor, id)
	case "import":
		var d *studio.Design
		if d, err = studio.Import(ctx, c.Actor, id, studio.ImportInput{Name: f.Get("name")}); err == nil {
			flash, back = "studio.imported", fmt.Sprintf("/studio/designs/%d", d.ID)
		}
	case "unpublish":
		if err = studio.Unpublish(ctx, c.Actor, id); err == nil {
			flash, back = "studio.unpublished", "/studio/store"
		}
	case "reviews":
		stars, _ := strconv.Atoi(f.Get("stars"))
		_, err = studio.PostReview(ctx, c.Actor, id, studio.ReviewInput{Stars: stars, Text: f.Get("review_text"), Author: f.Get("review_author")})
		flash = "studio.review_saved"
		if e := app.AsError(err); e != nil && e.Field != "stars" && e.Field != "" {
			e.Field = "review_" + e.Field
		}
	case "comments":
		_, err = studio.AddComment(ctx, c.Actor, id, studio.CommentInput{Text: f.Get("comment_text"), Author: f.Get("comment_author")})
		flash = "studio.comment_added"
		if e := app.AsError(err); e != nil && e.Field != "" {
			e.Field = "comment_" + e.Field
		}
	default:
		return app.ErrNotFound()
	}
	if err != nil {
		e := app.AsError(err)
		if e == nil || e.Status != http.StatusBadRequest {
			return err
		}
		v, verr := s.studioItemView(c, id)
		if verr != nil {
			return verr
		}
		for k, vals := range f {
			v.Form[k] = vals
		}
		return s.FormError(c, "studio_store_item", v, err)
	}
	if flash != "" {
		v := s.NewView(c, "studio_store", "menu.studio_store")
		s.SetFlash(c, v.T(flash), false)
	}
	return web.Redirect(c, back)
}
