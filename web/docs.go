package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"xr/app"
	"xr/assets"
)

// The human and machine readable API reference, generated from the route
// table through the OpenAPI document: /docs (Redoc, vendored and embedded
// under assets/vendor/redoc), /llms.txt (an index in the llmstxt.org
// form), /llms-full.txt (every operation's page in one file), /skill.md
// (how an agent uses the API) and /docs/ops/{operationId}.md (one page per
// operation).

// docsCSP: Redoc injects its styles at run time (style-src 'unsafe-inline')
// and runs its search index in a worker built from a blob; scripts stay
// 'self' only.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
	"connect-src 'self'; worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const docsHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>xr API reference</title>
</head>
<body>
<noscript>This reference needs JavaScript. The same content as Markdown: <a href="/llms.txt">/llms.txt</a>.</noscript>
<redoc spec-url="/openapi.json" hide-download-button="false" disable-search="false"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`

type docsSet struct {
	once  sync.Once
	doc   map[string]any
	err   error
	ops   map[string]string // operationId → Markdown page
	index string            // llms.txt
	full  string            // llms-full.txt
	skill string
}

// docsCache is built once per process, like the OpenAPI document: every
// Server has the same route table.
var docsCache docsSet

func (s *Server) docsSet() (*docsSet, error) {
	docsCache.once.Do(func() { docsCache.err = docsCache.build(s) })
	return &docsCache, docsCache.err
}

func docHeaders(w http.ResponseWriter, ctype string) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
}

func (s *Server) docsPage(c *Ctx) error {
	docHeaders(c.W, "text/html; charset=utf-8")
	h := c.W.Header()
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	_, err := c.W.Write([]byte(docsHTML))
	return err
}

func (s *Server) docsScript(c *Ctx) error {
	b, err := assets.Static.ReadFile("vendor/redoc/redoc.standalone.js")
	if err != nil {
		return app.ErrInternal(err)
	}
	docHeaders(c.W, "text/javascript; charset=utf-8")
	c.W.Header().Set("Cache-Control", "public, max-age=86400")
	_, err = c.W.Write(b)
	return err
}

func (s *Server) docsText(pick func(*docsSet) string) HandlerFunc {
	return func(c *Ctx) error {
		d, err := s.docsSet()
		if err != nil {
			return app.ErrInternal(err)
		}
		docHeaders(c.W, "text/markdown; charset=utf-8")
		_, err = c.W.Write([]byte(pick(d)))
		return err
	}
}

func (s *Server) docsOp(c *Ctx) error {
	d, err := s.docsSet()
	if err != nil {
		return app.ErrInternal(err)
	}
	id, ok := strings.CutSuffix(c.R.PathValue("op"), ".md")
	page, found := d.ops[id]
	if !ok || !found {
		return app.ErrNotFound()
	}
	docHeaders(c.W, "text/markdown; charset=utf-8")
	_, err = c.W.Write([]byte(page))
	return err
}

var docsMethods = []string{"get", "post", "put", "patch", "delete", "head", "options", "x-query", "x-connect"}

func (d *docsSet) build(s *Server) error {
	// A round trip through JSON gives plain maps and slices to walk.
	b, err := json.Marshal(s.OpenAPI())
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &d.doc); err != nil {
		return err
	}
	d.ops = map[string]string{}
	paths, _ := d.doc["paths"].(map[string]any)
	type entry struct{ tag, path, method, id, summary string }
	var entries []entry
	for p, item := range paths {
		for m, o := range item.(map[string]any) {
			op := o.(map[string]any)
			id, _ := op["operationId"].(string)
			tags, _ := op["tags"].([]any)
			tag := ""
			if len(tags) > 0 {
				tag, _ = tags[0].(string)
			}
			sum, _ := op["summary"].(string)
			entries = append(entries, entry{tag, p, m, id, sum})
			d.ops[id] = d.opPage(p, m, op)
		}
	}
	rank := map[string]int{}
	for i, m := range docsMethods {
		rank[m] = i
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.tag != b.tag {
			return a.tag < b.tag
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return rank[a.method] < rank[b.method]
	})
	var idx, full strings.Builder
	intro := "xr is a subscriber-management appliance for small ISPs: an HTTP API, a RADIUS server and a job runner over one SQLite file per tenant. " +
		"This index is generated from the running server's route table, like /openapi.json."
	fmt.Fprintf(&idx, "# xr API\n\n> %s\n\n", intro)
	idx.WriteString("Conventions: every path below is under the tenant's host (`https://<tenant>.<domain>`); authenticate with `Authorization: Bearer <token>` " +
		"(a manager session from POST /api/v1/auth/login, or an `xrt_` API token). Success is `{\"data\": ...}` (lists add `meta`); errors are " +
		"`{\"error\": {code, message, request_id, details: {reason, field?}}}`. Money is a JSON number in major units; times are UTC `yyyy-MM-dd HH:mm:ss`.\n\n")
	idx.WriteString("- [OpenAPI document](/openapi.json): the machine-readable contract\n- [API reference](/docs): the same, for people\n- [Skill](/skill.md): how an agent should use this API\n- [Everything in one file](/llms-full.txt)\n")
	fmt.Fprintf(&full, "# xr API: every operation\n\n> %s\n\n", intro)
	tag := ""
	for _, e := range entries {
		if e.tag != tag {
			tag = e.tag
			fmt.Fprintf(&idx, "\n## %s\n\n", tag)
		}
		fmt.Fprintf(&idx, "- [%s %s](/docs/ops/%s.md): %s\n", strings.ToUpper(strings.TrimPrefix(e.method, "x-")), e.path, e.id, e.summary)
		full.WriteString(d.ops[e.id])
		full.WriteString("\n---\n\n")
	}
	d.index = idx.String()
	d.full = full.String()
	d.skill = skillText(len(entries))
	return nil
}

func (d *docsSet) opPage(path, method string, op map[string]any) string {
	var b strings.Builder
	m := strings.ToUpper(strings.TrimPrefix(method, "x-"))
	fmt.Fprintf(&b, "# %s %s\n\n", m, path)
	if s, _ := op["summary"].(string); s != "" {
		fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(s, "."))
	}
	if s, _ := op["description"].(string); s != "" {
		fmt.Fprintf(&b, "%s\n\n", s)
	}
	fmt.Fprintf(&b, "- operationId: `%v`\n- access: %v\n", op["operationId"], op["x-access"])
	if impl, _ := op["x-implemented"].(bool); !impl {
		b.WriteString("- not implemented yet: answers 501 not_implemented\n")
	}
	if bk, _ := op["x-rate-buckets"].([]any); len(bk) > 0 {
		fmt.Fprintf(&b, "- rate buckets: %s\n", joinAny(bk))
	}
	if params, _ := op["parameters"].([]any); len(params) > 0 {
		b.WriteString("\n## Parameters\n\n| name | in | type | |\n|---|---|---|---|\n")
		for _, p := range params {
			pm := p.(map[string]any)
			req := ""
			if r, _ := pm["required"].(bool); r {
				req = "required"
			}
			fmt.Fprintf(&b, "| %v | %v | %s | %s |\n", pm["name"], pm["in"], d.typeName(pm["schema"]), req)
		}
	}
	if rb, _ := op["requestBody"].(map[string]any); rb != nil {
		b.WriteString("\n## Request body (application/json)\n\n")
		d.fieldsTable(&b, contentSchema(rb))
	}
	if resps, _ := op["responses"].(map[string]any); resps != nil {
		b.WriteString("\n## Responses\n\n")
		for _, st := range sortedKeys(resps) {
			r := resps[st].(map[string]any)
			fmt.Fprintf(&b, "### %s\n\n%v\n\n", st, r["description"])
			if st[0] == '2' {
				if sch := contentSchema(r); sch != nil {
					if props, _ := sch["properties"].(map[string]any); props != nil {
						if data, _ := props["data"].(map[string]any); data != nil {
							if items, _ := data["items"].(map[string]any); items != nil && data["type"] == "array" {
								b.WriteString("`data` is an array of:\n\n")
								data = items
							} else {
								b.WriteString("`data`:\n\n")
							}
							d.fieldsTable(&b, data)
						}
					}
				}
			}
		}
	}
	return b.String()
}

func contentSchema(r map[string]any) map[string]any {
	content, _ := r["content"].(map[string]any)
	for _, v := range content {
		s, _ := v.(map[string]any)["schema"].(map[string]any)
		return s
	}
	return nil
}

func (d *docsSet) resolve(s map[string]any) (map[string]any, string) {
	if ref, _ := s["$ref"].(string); ref != "" {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		comps, _ := d.doc["components"].(map[string]any)
		schemas, _ := comps["schemas"].(map[string]any)
		out, _ := schemas[name].(map[string]any)
		return out, name
	}
	if one, _ := s["oneOf"].([]any); len(one) > 0 {
		if first, _ := one[0].(map[string]any); first != nil {
			r, name := d.resolve(first)
			return r, name
		}
	}
	return s, ""
}

func (d *docsSet) typeName(v any) string {
	s, _ := v.(map[string]any)
	if s == nil {
		return "any"
	}
	if ref, _ := s["$ref"].(string); ref != "" {
		return strings.TrimPrefix(ref, "#/components/schemas/")
	}
	if one, _ := s["oneOf"].([]any); len(one) > 0 {
		return d.typeName(one[0]) + " or null"
	}
	var t string
	switch ty := s["type"].(type) {
	case string:
		t = ty
	case []any:
		if len(ty) > 3 {
			return "any"
		}
		t = joinAny(ty)
		t = strings.ReplaceAll(t, ", ", " or ")
	}
	if items, _ := s["items"].(map[string]any); items != nil {
		t = strings.Replace(t, "array", "array of "+d.typeName(items), 1)
	}
	return t
}

func (d *docsSet) fieldsTable(b *strings.Builder, s map[string]any) {
	s, name := d.resolve(s)
	if s == nil {
		return
	}
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		fmt.Fprintf(b, "%s\n\n", d.typeName(s))
		return
	}
	if name != "" {
		fmt.Fprintf(b, "Schema %s.\n\n", name)
	}
	required := map[string]bool{}
	if rq, _ := s["required"].([]any); rq != nil {
		for _, r := range rq {
			required[r.(string)] = true
		}
	}
	b.WriteString("| field | type | always present |\n|---|---|---|\n")
	for _, f := range sortedKeys(props) {
		yes := ""
		if required[f] {
			yes = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", f, d.typeName(props[f]), yes)
	}
	b.WriteString("\n")
}

func joinAny(xs []any) string {
	var ss []string
	for _, x := range xs {
		ss = append(ss, fmt.Sprint(x))
	}
	return strings.Join(ss, ", ")
}

func skillText(ops int) string {
	return `---
name: xr-api
description: Manage an ISP's subscribers, plans, managers, prepaid cards, RADIUS sessions and money through the xr HTTP API. Use when asked to create or change subscribers or plans, activate or renew, credit a balance, look at sessions and usage, or read reports on an xr instance.
---

# Using the xr API

xr serves one API per tenant at ` + "`https://<tenant>.<domain>/api/v1`" + `. Its contract is ` + "`/openapi.json`" + ` (` + fmt.Sprint(ops) + ` operations, generated
from the running route table); ` + "`/llms.txt`" + ` lists them with one line each and links to a Markdown page per operation.

## Authenticate

- ` + "`POST /api/v1/auth/login`" + ` with ` + "`{\"email\": \"<username or email>\", \"password\": \"...\"}`" + ` answers ` + "`data.token`" + ` (and a
  refresh token). Send it as ` + "`Authorization: Bearer <token>`" + `.
- For automation prefer an API token (` + "`POST /api/v1/developer/api-tokens`" + `, prefix ` + "`xrt_`" + `): same header. Some account
  routes refuse API tokens (403 ` + "`api_token_forbidden`" + `).

## Read answers

- Success: ` + "`{\"data\": ...}`" + `; lists add ` + "`meta`" + ` (` + "`page`, `page_size`, `total`, `has_next`" + `). Page with ` + "`?page=&page_size=`" + `,
  sort with ` + "`sort=&order=asc|desc`" + `, search with ` + "`q=`" + `, filter with ` + "`filter[name]=value`" + `.
- Errors: ` + "`{\"error\": {\"code\", \"message\", \"request_id\", \"details\": {\"reason\", \"field\"}}}`" + `. Decide on ` + "`details.reason`" + `
  (stable), show ` + "`message`" + ` to people. Each operation's page lists the reasons it answers per status.
- Money is a JSON number in major units (at most 3 decimals); times are UTC strings ` + "`yyyy-MM-dd HH:mm:ss`" + `, null when unset.
- Unknown request fields are refused (400 ` + "`unknown_field`" + `): send only documented fields.

## Change money safely

Operations that move money or stock take a ` + "`request_id`" + ` (a fresh UUID per intended operation). Retrying with the same
` + "`request_id`" + ` and body returns the first outcome with ` + "`replay: true`" + ` and does nothing twice; never reuse it for a different operation.

## Typical flow

1. A plan: ` + "`POST /api/v1/admin/profiles`" + ` (price, duration, speed, quota).
2. A subscriber: ` + "`POST /api/v1/users`" + ` with ` + "`username`, `password`, `profile_id`" + ` (201). It reads expired until activated.
3. Money: ` + "`POST /api/v1/users/{id}/deposit`" + ` with ` + "`amount`, `request_id`" + `.
4. Activation: ` + "`POST /api/v1/users/{id}/activation`" + ` with ` + "`request_id`" + `: charges the plan price, sets expiry and quota.
5. Sessions and usage: ` + "`GET /api/v1/admin/sessions`" + ` (live), ` + "`GET /api/v1/users/{id}/sessions`" + `, ` + "`GET /api/v1/users/{id}/usage`" + `.

Rows marked not implemented answer 501 ` + "`not_implemented`" + `; do not retry them.
`
}
