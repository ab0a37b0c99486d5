package web

import (
	"xr/app"
	"xr/app/hotspot"
)

// hotspotRoutes are hotspot page sets: shipped templates, the tenant's pages, preview and the RouterOS zip.
func (s *Server) hotspotRoutes() []Route {
	hs := []app.Perm{hotspot.PermHotspotManage}
	set := []string{"400 required", "400 too_long", "400 invalid_url", "400 invalid_color", "400 hotspot_low_contrast", "400 hotspot_css_not_allowed",
		"400 hotspot_logo_invalid", "409 name_taken"}
	return []Route{
		{M: "GET", P: "/hotspot/pages", Access: Staff, Perms: hs, H: listCall(hotspot.ListSpec, hotspot.ListPages), Resp: hotspot.PageSet{}, List: true,
			Summary: "the caller's hotspot page sets (q matches the name; filter[template], filter[lang])"},
		{M: "POST", P: "/hotspot/pages", Access: Staff, Perms: hs, H: createCall(hotspot.CreatePage), Req: hotspot.PageInput{}, Resp: hotspot.PageSet{}, Status: 201,
			Reasons: set, Summary: "create a page set from a shipped template: branding overrides, HTML blocks per page (sanitized against an allow-list: the answer and the stored value are the sanitized HTML) and custom CSS (no @import, no url() to elsewhere, no expression(), no </style)"},
		{M: "POST", P: "/hotspot/pages/bulk-delete", Access: Staff, Perms: hs, H: bodyCall(hotspot.BulkDeletePages), Req: app.BulkIDs{}, Resp: app.BulkResult{},
			Reasons: []string{"400 ids_required", "400 invalid_id", "400 too_many_ids"}, Summary: "delete several page sets"},
		{M: "GET", P: "/hotspot/pages/{id}", Access: Staff, Perms: hs, H: idCall(hotspot.GetPage), Resp: hotspot.PageSet{}, Summary: "one page set"},
		{M: "PATCH", P: "/hotspot/pages/{id}", Access: Staff, Perms: hs, H: idBodyCall(hotspot.PatchPage), Req: hotspot.PagePatch{}, Resp: hotspot.PageSet{},
			Reasons: set, Summary: "change a page set: blocks, when sent, replace every block (sanitized); logo_file_id null removes the logo"},
		{M: "DELETE", P: "/hotspot/pages/{id}", Access: Staff, Perms: hs, H: idAction(hotspot.DeletePage), Summary: "delete a page set (and its logo when no other set uses it)"},
		{M: "GET", P: "/hotspot/pages/{id}/download", Access: Staff, File: true, Perms: hs, H: s.hotspotDownload, Content: "application/zip",
			Summary: "the RouterOS zip: hotspot/login.html, alogin, status, logout, error, redirect, rlogin, md5.js (CHAP), css/style.css, img/logo.*; upload the hotspot folder and set the server profile's html-override-directory to it"},
		{M: "POST", P: "/hotspot/pages/{id}/duplicate", Access: Staff, Perms: hs, H: idCreateCall(hotspot.DuplicatePage), Req: hotspot.DuplicateInput{}, Resp: hotspot.PageSet{}, Status: 201,
			Reasons: []string{"400 too_long", "409 name_taken"}, Summary: "copy a page set (name: given, or \"<name> (copy)\")"},
		{M: "POST", P: "/hotspot/preview", Access: Staff, Perms: hs, H: s.hotspotPreview, Req: hotspot.PreviewInput{}, Content: "text/html",
			Reasons: set[:7], Summary: "one page of a saved (id) or unsaved (set) page set rendered with sample RouterOS variables: text/html served with a sandbox CSP (default-src 'none', inline styles, data: images, no script) and X-Content-Type-Options nosniff"},
		{M: "GET", P: "/hotspot/templates", Access: Staff, Perms: hs, H: allCall(hotspot.ListTemplates), Resp: hotspot.Template{}, List: true,
			Summary: "the shipped templates (clean, voucher-first): responsive, accessible, English or Arabic (rtl), no external request"},
		{M: "POST", P: "/hotspot/pages/{id}/logo", Access: Staff, File: true, Perms: hs, H: s.hotspotLogo, Resp: hotspot.PageSet{}, Status: 201,
			Reasons: []string{"400 file_too_large", "400 file_type_not_allowed", "400 file_extension_mismatch", "400 file_empty", "400 filename_required", "400 malformed_multipart", "400 file_required"},
			Summary: "upload the set's logo (multipart file, or the raw body with ?filename=): PNG, JPEG, GIF or WebP up to 512 KiB; the previous logo is deleted when unused"},
	}
}
