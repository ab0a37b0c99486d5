package web

import (
	"net/http"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/studio"
)

// studioRoutes are the design studio: designs with their images and thumbnails, and the instance-wide design store.
func (s *Server) studioRoutes() []Route {
	idx, edit, del, pub := []app.Perm{studio.PermStudioIndex}, []app.Perm{studio.PermStudioEdit}, []app.Perm{studio.PermStudioDelete}, []app.Perm{studio.PermStudioPublish}
	docReasons := []string{"400 required", "400 design_kind_mismatch", "400 design_image_unknown", "400 design_too_large", "400 design_variable_unknown",
		"400 design_element_off_canvas", "400 design_kind_invalid", "400 design_size_invalid", "400 design_too_many_elements",
		"400 design_element_invalid", "400 design_color_invalid", "400 design_font_size_invalid", "400 text_too_long", "400 text_control_characters"}
	return []Route{
		{M: "GET", P: "/studio/designs", Access: Staff, Perms: idx, H: listCall(studio.ListSpec, studio.List), List: true, Resp: studio.Design{},
			Summary: "the tenant's designs (tenant-wide: every caller with the studio permissions sees all), without their documents; filter[kind], filter[is_default], q on the name; sort updated_at (default), name, kind, id"},
		{M: "POST", P: "/studio/designs", Access: Staff, Perms: edit, H: createCall(studio.Create), Req: studio.CreateInput{}, Resp: studio.Design{}, Status: 201,
			Reasons: docReasons,
			Summary: "create a design at version 1: name, kind, doc (a design document; without it the built-in design of the kind), is_default (the tenant's one default of the kind); the document is validated: an unknown variable, an element off the canvas or an image that is not the tenant's is a 400 naming the element"},
		{M: "POST", P: "/studio/designs/bulk-delete", Access: Staff, Perms: del, H: bulkCall(studio.DeleteAny), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Reasons: []string{"400 ids_required", "400 too_many_ids", "400 invalid_id"},
			Summary: "delete designs by id, whatever their version"},
		{M: "DELETE", P: "/studio/designs/{id}", Access: Staff, Perms: del, H: s.deleteDesign,
			Reasons: []string{"409 design_version_stale", "400 required", "400 invalid_version"},
			Summary: "delete a design: ?version= is the version the client read (required); a stale one is 409 design_version_stale (details.current_version) and nothing is deleted"},
		{M: "GET", P: "/studio/designs/{id}", Access: Staff, Perms: idx, H: idCall(studio.Get), Resp: studio.Design{},
			Summary: "one design with its document and version"},
		{M: "PATCH", P: "/studio/designs/{id}", Access: Staff, Perms: edit, H: idBodyCall(studio.Patch), Req: studio.PatchInput{}, Resp: studio.Design{},
			Reasons: append([]string{"409 design_version_stale"}, docReasons...),
			Summary: "change a design's name, doc or is_default: version is the version the client read (required); a stale one is 409 design_version_stale (details.current_version) and nothing is written; a change bumps the version"},
		{M: "GET", P: "/studio/designs/{id}/thumbnail", Access: Staff, Perms: idx, H: s.designThumbnail, Content: "image/png",
			Summary: "the design rendered as a PNG with the sample variables of its kind; cached until the design changes (ETag; If-None-Match answers 304)"},
		{M: "GET", P: "/studio/store", Access: Staff, Perms: idx, H: listCall(studio.StoreListSpec, studio.ListStore), List: true, Resp: studio.StoreItem{},
			Summary: "the instance-wide design store: items without their documents, publishers shown by the display name they gave; filter[kind], filter[mine], filter[hidden] (true: only the items the caller's tenant hid; they are left out otherwise), q over name, description and publisher; sort newest (default), stars, rating, name; served from a list cached for up to 5 minutes and rebuilt on publish and unpublish: meta.cached (false when this request rebuilt it) and meta.cached_at"},
		{M: "POST", P: "/studio/store", Access: Staff, Perms: pub, H: createCall(studio.Publish), Req: studio.PublishInput{}, Resp: studio.StoreItem{}, Status: 201,
			Reasons: []string{"400 required", "400 design_not_found", "400 text_too_long", "400 text_control_characters"},
			Summary: "publish a snapshot of one of the tenant's designs: design_id, publisher_name (shown instead of the tenant), name, description; its images are copied and re-encoded (no metadata); later changes to the design do not reach the snapshot"},
		{M: "GET", P: "/studio/store/{id}", Access: Staff, Perms: idx, H: idCall(studio.GetStoreItem), Resp: studio.StoreItem{},
			Summary: "one store item with its document, stars, rating, and the caller's starred, hidden and mine flags"},
		{M: "GET", P: "/studio/store/{id}/comments", Access: Staff, Perms: idx, H: idListCall(studio.CommentListSpec, studio.Comments), List: true, Resp: studio.Comment{},
			Summary: "an item's comments, oldest first (plain text: clients escape it)"},
		{M: "POST", P: "/studio/store/{id}/comments", Access: Staff, Perms: idx, H: idCreateCall(studio.AddComment), Req: studio.CommentInput{}, Resp: studio.Comment{}, Status: 201,
			Reasons: []string{"400 required", "400 text_too_long", "400 text_control_characters"},
			Summary: "comment on an item: text (plain text, at most 1000 characters, no control characters but line breaks; never interpreted as HTML), author (a display name, optional)"},
		{M: "POST", P: "/studio/store/{id}/import", Access: Staff, Perms: edit, H: idCreateCall(studio.Import), Req: studio.ImportInput{}, Resp: studio.Design{}, Status: 201,
			Reasons: docReasons,
			Summary: "copy an item into the caller's designs (version 1, not default) with copies of its images; the copy and the item are independent afterwards"},
		{M: "GET", P: "/studio/store/{id}/reviews", Access: Staff, Perms: idx, H: idListCall(studio.ReviewListSpec, studio.Reviews), List: true, Resp: studio.Review{},
			Summary: "an item's reviews, newest first; meta.aggregates has their count and average stars"},
		{M: "POST", P: "/studio/store/{id}/reviews", Access: Staff, Perms: idx, H: idBodyCall(studio.PostReview), Req: studio.ReviewInput{}, Resp: studio.Review{},
			Reasons: []string{"400 review_stars_out_of_range", "400 text_too_long", "400 text_control_characters"},
			Summary: "review an item: stars 1 to 5, text (plain, at most 2000 characters), author; one review per tenant: posting again edits it"},
		{M: "POST", P: "/studio/store/{id}/star", Access: Staff, Perms: idx, H: idCall(studio.Star), Resp: studio.StarResult{},
			Summary: "star an item for the caller's tenant (idempotent)"},
		{M: "DELETE", P: "/studio/store/{id}/star", Access: Staff, Perms: idx, H: idCall(studio.Unstar), Resp: studio.StarResult{},
			Summary: "remove the caller's tenant's star (idempotent)"},
		{M: "GET", P: "/studio/store/{id}/thumbnail", Access: Staff, Perms: idx, H: s.storeThumbnail, Content: "image/png",
			Summary: "the item's snapshot rendered as a PNG with the sample variables of its kind (ETag; If-None-Match answers 304)"},

		// Beyond the spec: moderation, design images and the variable catalogue.
		{M: "DELETE", P: "/studio/store/{id}", Access: Staff, Perms: pub, H: idAction(studio.Unpublish),
			Reasons: []string{"403 store_not_publisher"},
			Summary: "unpublish an item: only the tenant that published it (403 store_not_publisher otherwise); its stars, reviews and comments go with it, imported copies stay"},
		{M: "POST", P: "/studio/store/{id}/hide", Access: Staff, Perms: idx, H: idCall(studio.Hide), Resp: studio.HideResult{},
			Summary: "hide an item from the caller's tenant's store list (idempotent; filter[hidden]=true lists them)"},
		{M: "DELETE", P: "/studio/store/{id}/hide", Access: Staff, Perms: idx, H: idCall(studio.Unhide), Resp: studio.HideResult{},
			Summary: "show a hidden item again (idempotent)"},
		{M: "GET", P: "/studio/images", Access: Staff, Perms: idx, H: allCall(studio.Images), List: true, Resp: studio.Image{},
			Summary: "the tenant's design images, newest first; image elements refer to them by id"},
		{M: "POST", P: "/studio/images", Access: Staff, Perms: edit, File: true, H: s.uploadDesignImage, Resp: studio.Image{}, Status: 201,
			Reasons: []string{"400 file_required", "400 filename_required", "400 malformed_multipart", "400 file_too_large", "400 file_type_not_allowed",
				"400 file_extension_mismatch", "400 file_empty", "400 image_unreadable", "400 image_dimensions_too_large"},
			Summary: "upload a design image (multipart file, or the raw body with ?filename=): PNG or JPEG by content, at most 2 MiB and 4096 pixels a side; stored in the tenant's files"},
		{M: "GET", P: "/studio/images/{id}", Access: Staff, Perms: idx, File: true, H: s.designImageFile, Content: "image/*",
			Summary: "the image file (inline, nosniff)"},
		{M: "DELETE", P: "/studio/images/{id}", Access: Staff, Perms: del, H: idAction(studio.DeleteImage),
			Reasons: []string{"409 design_image_in_use"},
			Summary: "delete an image and its file; one a design still uses is 409 design_image_in_use"},
		{M: "GET", P: "/studio/variables", Access: Staff, Perms: idx, H: actorCall(studio.Variables), Resp: map[string][]studioVariable{},
			Summary: "the published variable catalogue: by kind, each variable's name (without braces), description and sample value"},
	}
}

// studioVariable documents render.Variable in OpenAPI.
type studioVariable struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Sample      string `json:"sample"`
}

func (s *Server) deleteDesign(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	if err := studio.Delete(c.R.Context(), c.Actor, id, c.Query().Get("version")); err != nil {
		return err
	}
	return c.OK(map[string]any{"ok": true, "id": id})
}

// writeThumb answers a thumbnail, or 304 when the client has it.
func writeThumb(c *Ctx, th *studio.Thumb) error {
	h := c.W.Header()
	h.Set("ETag", th.ETag)
	h.Set("Cache-Control", "private, no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	for _, tag := range strings.Split(c.R.Header.Get("If-None-Match"), ",") {
		if strings.TrimSpace(tag) == th.ETag {
			c.W.WriteHeader(http.StatusNotModified)
			return nil
		}
	}
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(th.PNG)))
	c.W.WriteHeader(http.StatusOK)
	_, err := c.W.Write(th.PNG)
	return err
}

func (s *Server) designThumbnail(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	th, err := studio.Thumbnail(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return writeThumb(c, th)
}

func (s *Server) storeThumbnail(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	th, err := studio.StoreThumbnail(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return writeThumb(c, th)
}

func (s *Server) uploadDesignImage(c *Ctx) error {
	name, src, _, err := UploadPart(c, studio.MaxImageBytes)
	if err != nil {
		return err
	}
	out, err := studio.UploadImage(c.R.Context(), c.Actor, name, src)
	if err != nil {
		return err
	}
	return c.Created(out)
}

func (s *Server) designImageFile(c *Ctx) error {
	id, err := c.ID("id")
	if err != nil {
		return err
	}
	f, err := studio.ImageFile(c.R.Context(), c.Actor, id)
	if err != nil {
		return err
	}
	return serveFile(c, f)
}
