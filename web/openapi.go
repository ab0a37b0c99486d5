package web

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"xr/app"
)

var pathParam = regexp.MustCompile(`\{([A-Za-z_]+)\}`)

var (
	openapiOnce sync.Once
	openapiDoc  []byte
	openapiErr  error
)

func (s *Server) openapi(c *Ctx) error {
	openapiOnce.Do(func() { openapiDoc, openapiErr = json.Marshal(s.OpenAPI()) })
	if openapiErr != nil {
		return app.ErrInternal(openapiErr)
	}
	c.W.Header().Set("Content-Type", "application/json")
	_, err := c.W.Write(openapiDoc)
	return err
}

// OperationID is the operationId of a row in /openapi.json (also the name
// of its Markdown page under /docs/ops/).
func (r *Route) OperationID() string {
	return strings.ToLower(r.M) + strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_").Replace(r.FullPath())
}

// status is the HTTP status of the row's success answer.
func (r *Route) status() int {
	if r.Status != 0 {
		return r.Status
	}
	return 200
}

// intParams are the path variables a handler parses with Ctx.ID (integers
// > 0; anything else answers 404 not_found).
var intParams = map[string]bool{"id": true, "uid": true, "mid": true, "rid": true, "aid": true, "bid": true, "tid": true, "did": true}

// APIDocument is the OpenAPI document of the route table as built, on a
// server of its own: what a test stubs or mounts on its server never
// enters it (the contract check of internal/webtest validates against it).
func APIDocument() map[string]any {
	s := &Server{}
	s.routes = s.table()
	return s.OpenAPI()
}

// OpenAPI builds the OpenAPI 3.1 document from the route table, so it can
// never drift from what the server routes. Every response the web test
// suite receives is validated against it (internal/webtest/contract.go).
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{components: map[string]any{}, names: map[reflect.Type]string{}}
	paths := map[string]any{}
	tags := map[string]bool{}
	for _, r := range s.routes {
		p := r.FullPath()
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		op := map[string]any{
			"operationId":    r.OperationID(),
			"summary":        r.summary(),
			"x-access":       r.Access.String(),
			"x-implemented":  r.H != nil,
			"x-session-only": r.SessionOnly,
			"x-permissions":  nonNil(r.Perms),
			"x-any-staff":    r.AnyStaff,
			"x-rate-buckets": routeBuckets(r),
			"responses":      g.responses(r),
		}
		if d := r.description(); d != "" {
			op["description"] = d
		}
		if rs := r.reasons(); len(rs) > 0 {
			op["x-reasons"] = rs
		}
		tag := r.tag()
		op["tags"] = []string{tag}
		tags[tag] = true
		if r.Access == Public {
			op["security"] = []any{}
		} else {
			op["security"] = []any{map[string]any{"bearer": []string{}}}
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(p, -1) {
			sch := map[string]any{"type": "string"}
			if intParams[m[1]] {
				sch = map[string]any{"type": "integer", "format": "int64", "minimum": 1}
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": sch})
		}
		if r.List {
			for _, q := range []struct{ n, t, d string }{
				{"page", "integer", "page number, from 1"},
				{"page_size", "integer", "rows per page"},
				{"sort", "string", "sort column (see the summary for the allowed ones)"},
				{"order", "string", "asc or desc"},
				{"q", "string", "free-text search"},
			} {
				params = append(params, map[string]any{"name": q.n, "in": "query", "description": q.d, "schema": map[string]any{"type": q.t}})
			}
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.Req != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(r.Req), false)}}}
		}
		method := strings.ToLower(r.M)
		if method == "query" || method == "connect" {
			op["x-method"] = r.M
			method = "x-" + method
		}
		item[method] = op
	}
	var tagList []any
	for _, t := range sortedKeys(tags) {
		tagList = append(tagList, map[string]any{"name": t, "description": "operations under /" + t})
	}
	g.components["Error"] = errorSchema()
	g.components["Meta"] = g.schema(reflect.TypeOf(app.Meta{}), true)
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title": "xr API", "version": app.Version,
			"description": "Subscriber management: staff API and subscriber portal. Generated from the running route table. " +
				"Every path is served on the tenant's host (`https://{tenant}.{domain}`). Errors are " +
				"`{\"error\":{code, message, request_id, details:{reason, field?}}}`; the reasons an operation is known to " +
				"answer are listed per status and in `x-reasons`.",
			"license": map[string]any{"name": "Proprietary", "identifier": "LicenseRef-xr"},
		},
		"servers": []any{map[string]any{"url": "/", "description": "the tenant host this document was served from"}},
		"tags":    tagList,
		"paths":   paths,
		"components": map[string]any{
			"schemas":         g.components,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "manager session token or xrt_ API token"}},
		},
	}
}

func (r *Route) tag() string {
	p := strings.TrimPrefix(r.P, "/")
	if r.Root {
		return "root"
	}
	first, rest, _ := strings.Cut(p, "/")
	if first == "admin" || first == "portal" || first == "user" {
		if second, _, _ := strings.Cut(rest, "/"); second != "" && !strings.HasPrefix(second, "{") {
			return first + "/" + second
		}
	}
	return first
}

// summary is the row's Summary cut to its first clause (the rest is the
// description), or a sentence derived from method and path.
func (r *Route) summary() string {
	if r.Summary != "" {
		return upperFirst(firstClause(r.Summary))
	}
	if r.H == nil {
		return "Not implemented yet: " + r.M + " " + r.P
	}
	return r.M + " " + r.P
}

// firstClause is s up to its first "; " or ": " outside parentheses.
func firstClause(s string) string {
	depth := 0
	for i := 0; i < len(s)-1; i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ';', ':':
			if depth == 0 && s[i+1] == ' ' {
				return s[:i]
			}
		}
	}
	return s
}

func (r *Route) description() string {
	var b strings.Builder
	if r.Summary != "" {
		b.WriteString(upperFirst(r.Summary) + ".")
	}
	if r.H == nil {
		b.WriteString(" Listed by the specification; answers 501 not_implemented until it is built.")
	}
	if len(r.Perms) > 0 {
		var ps []string
		for _, p := range r.Perms {
			ps = append(ps, "`"+string(p)+"`")
		}
		b.WriteString("\n\nPermission (any of): " + strings.Join(ps, ", ") + ".")
	}
	if r.SessionOnly {
		b.WriteString(" Refuses API tokens (403 api_token_forbidden).")
	}
	return strings.TrimSpace(b.String())
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func routeBuckets(r *Route) []string {
	b := append([]string{}, r.Buckets...)
	if r.Access == Staff && r.isMutation() {
		b = append([]string{app.BucketMutate}, b...)
	}
	return b
}

var errorCodes = []string{app.CodeValidation, app.CodeUnauthorized, app.CodeForbidden, app.CodeNotFound, app.CodeConflict, app.CodeRateLimited, app.CodeInternal, app.CodeTimeout, app.CodeLicenseBlocked, app.CodeMaintenance, app.CodeUnavailable}

// errorSchema is the error body.
func errorSchema() map[string]any {
	reason := map[string]any{"type": "string", "description": "stable machine-readable reason"}
	return map[string]any{"type": "object", "required": []string{"error"}, "properties": map[string]any{"error": map[string]any{
		"type": "object", "required": []string{"code", "message", "request_id", "details"},
		"properties": map[string]any{
			"code":       map[string]any{"type": "string", "enum": errorCodes},
			"message":    map[string]any{"type": "string", "description": "in the caller's language (Accept-Language)"},
			"request_id": map[string]any{"type": "string"},
			"details": map[string]any{"type": "object", "required": []string{"reason"}, "properties": map[string]any{
				"reason": reason,
				"field":  map[string]any{"type": "string", "description": "the request field (JSON path) or parameter at fault"},
			}},
		}}}}
}

var errRef = map[string]any{"$ref": "#/components/schemas/Error"}

func (g *schemaGen) responses(r *Route) map[string]any {
	jsonOf := func(s any) map[string]any { return map[string]any{"application/json": map[string]any{"schema": s}} }
	if r.H == nil {
		return map[string]any{"501": map[string]any{"description": "not implemented yet (reason not_implemented)", "content": jsonOf(errRef)}}
	}
	out := map[string]any{}
	var data map[string]any
	if r.Resp != nil {
		data = g.schema(reflect.TypeOf(r.Resp), true)
		props := map[string]any{"data": data}
		req := []string{"data"}
		if r.List {
			props["data"] = map[string]any{"type": "array", "items": data}
			props["meta"] = map[string]any{"$ref": "#/components/schemas/Meta"}
			req = append(req, "meta")
		}
		data = map[string]any{"type": "object", "required": req, "properties": props}
	}
	switch {
	case r.Content != "":
		// A file: the 200 body is of that media type; Resp, when set, is
		// the 202 answer while it is still being made.
		out["200"] = map[string]any{"description": "the file", "content": map[string]any{r.Content: map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": r.Content}}}}
		if data != nil {
			out["202"] = map[string]any{"description": "not ready yet: the job making it", "content": jsonOf(data)}
		}
	case data != nil:
		out[fmt.Sprint(r.status())] = map[string]any{"description": "success", "content": jsonOf(data)}
		if r.status() != 200 && hasJSONField(reflect.TypeOf(r.Resp), "replay") {
			out["200"] = map[string]any{"description": "a replay of request_id: the first outcome, replay true", "content": jsonOf(data)}
		}
	default:
		out[fmt.Sprint(r.status())] = map[string]any{"description": "success"}
	}
	for st, reasons := range r.reasonsByStatus() {
		// The Error body, its details.reason narrowed to these.
		narrow := map[string]any{"type": "object", "properties": map[string]any{"error": map[string]any{"type": "object", "properties": map[string]any{
			"details": map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"enum": reasons}}}}}}}
		out[st] = map[string]any{"description": "reason " + strings.Join(reasons, ", "), "content": jsonOf(map[string]any{"allOf": []any{errRef, narrow}})}
	}
	out["default"] = map[string]any{"description": "any other error (see the Error schema)", "content": jsonOf(errRef)}
	return out
}

// hasJSONField tells whether struct t has a field encoded as name.
func hasJSONField(t reflect.Type, name string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n == name {
			return true
		}
	}
	return false
}

var (
	timeType       = reflect.TypeOf(app.Time{})
	dateOrTimeType = reflect.TypeOf(app.DateOrTime{})
	moneyType      = reflect.TypeOf(app.Money(0))
	rawType        = reflect.TypeOf(json.RawMessage(nil))
)

// anySchema is any JSON value, null included.
func anySchema() map[string]any {
	return map[string]any{"type": []string{"string", "number", "integer", "boolean", "object", "array", "null"}}
}

// schemaGen renders JSON schemas of Go types by their json tags. Named
// struct types of responses become components (with their required list:
// every field without omitempty/omitzero that is not a pointer or Opt);
// request bodies are inline and list nothing as required (the app
// validates, answering 400 with the field).
type schemaGen struct {
	components map[string]any
	names      map[reflect.Type]string
}

var nonName = regexp.MustCompile(`[^A-Za-z0-9]+`)

func (g *schemaGen) componentName(t reflect.Type) string {
	if n, ok := g.names[t]; ok {
		return n
	}
	pkg := t.PkgPath()
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		pkg = pkg[i+1:]
	}
	name := upperFirst(pkg) + nonName.ReplaceAllString(t.Name(), "")
	for taken := true; taken; {
		taken = false
		for _, n := range g.names {
			if n == name {
				name += "X"
				taken = true
				break
			}
		}
	}
	g.names[t] = name
	return name
}

func nullable(s map[string]any) map[string]any {
	if ref, ok := s["$ref"]; ok {
		return map[string]any{"oneOf": []any{map[string]any{"$ref": ref}, map[string]any{"type": "null"}}}
	}
	switch ty := s["type"].(type) {
	case string:
		s["type"] = []string{ty, "null"}
	case []string:
		for _, x := range ty {
			if x == "null" {
				return s
			}
		}
		s["type"] = append(ty, "null")
	}
	return s
}

// schema is the schema of t; resp tells whether it is answered (named
// structs become components with required lists) or sent.
func (g *schemaGen) schema(t reflect.Type, resp bool) map[string]any {
	if t.Kind() == reflect.Pointer {
		return nullable(g.schema(t.Elem(), resp))
	}
	switch {
	case t == timeType || t == dateOrTimeType:
		return map[string]any{"type": []string{"string", "null"}, "description": "UTC yyyy-MM-dd HH:mm:ss; null when unset"}
	case t == moneyType:
		return map[string]any{"type": "number", "description": "major units, at most 3 decimals"}
	case t == rawType:
		return anySchema()
	case t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "Opt["):
		return nullable(g.schema(t.Field(2).Type, resp))
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": []string{"string", "null"}, "contentEncoding": "base64"}
		}
		// A nil slice is encoded as null.
		return map[string]any{"type": []string{"array", "null"}, "items": g.schema(t.Elem(), resp)}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem(), resp)}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": g.schema(t.Elem(), resp)}
	case reflect.Interface:
		return anySchema()
	case reflect.Struct:
		if resp && t.Name() != "" {
			name := g.componentName(t)
			if _, done := g.components[name]; !done {
				g.components[name] = map[string]any{} // recursion guard
				g.components[name] = g.structSchema(t, resp)
			}
			return map[string]any{"$ref": "#/components/schemas/" + name}
		}
		return g.structSchema(t, resp)
	}
	return map[string]any{}
}

func (g *schemaGen) structSchema(t reflect.Type, resp bool) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, resp, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if resp && len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

func (g *schemaGen) fields(t reflect.Type, resp bool, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				g.fields(ft, resp, props, required)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sch := g.schema(f.Type, resp)
		if strings.Contains(","+opts+",", ",string,") {
			sch = map[string]any{"type": "string"}
		}
		props[name] = sch
		optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,") ||
			f.Type.Kind() == reflect.Pointer || strings.HasPrefix(f.Type.Name(), "Opt[")
		if !optional {
			*required = append(*required, name)
		}
	}
}
