package web

import (
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
	openapiDoc  map[string]any
)

func (s *Server) openapi(c *Ctx) error {
	openapiOnce.Do(func() { openapiDoc = s.OpenAPI() })
	return c.JSON(200, openapiDoc)
}

// OpenAPI builds the OpenAPI 3.1 document from the route table, so it can
// never drift from what the server routes.
func (s *Server) OpenAPI() map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{
		"Error": map[string]any{"type": "object", "properties": map[string]any{"error": map[string]any{
			"type": "object", "required": []string{"code", "message", "request_id", "details"},
			"properties": map[string]any{
				"code":       map[string]any{"type": "string", "enum": []string{app.CodeValidation, app.CodeUnauthorized, app.CodeForbidden, app.CodeNotFound, app.CodeConflict, app.CodeRateLimited, app.CodeInternal, app.CodeTimeout, app.CodeLicenseBlocked, app.CodeMaintenance, app.CodeUnavailable}},
				"message":    map[string]any{"type": "string"},
				"request_id": map[string]any{"type": "string"},
				"details":    map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string"}}},
			}}}},
		"Meta": schemaOf(reflect.TypeOf(app.Meta{})),
	}
	for _, r := range s.routes {
		p := r.FullPath()
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		op := map[string]any{
			"operationId":    strings.ToLower(r.M) + strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_").Replace(p),
			"x-access":       r.Access.String(),
			"x-implemented":  r.H != nil,
			"x-session-only": r.SessionOnly,
			"x-permissions":  nonNil(r.Perms),
			"x-any-staff":    r.AnyStaff,
			"x-rate-buckets": routeBuckets(r),
			"responses":      responses(r),
		}
		if r.Summary != "" {
			op["summary"] = r.Summary
		}
		if !r.Root {
			op["tags"] = []string{strings.SplitN(strings.TrimPrefix(r.P, "/"), "/", 2)[0]}
		}
		if r.Access != Public {
			op["security"] = []any{map[string]any{"bearer": []string{}}}
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(p, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		if r.List {
			for _, q := range []struct{ n, t string }{{"page", "integer"}, {"page_size", "integer"}, {"sort", "string"}, {"order", "string"}, {"q", "string"}} {
				params = append(params, map[string]any{"name": q.n, "in": "query", "schema": map[string]any{"type": q.t}})
			}
		}
		if params != nil {
			op["parameters"] = params
		}
		if r.Req != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": schemaOf(reflect.TypeOf(r.Req))}}}
		}
		method := strings.ToLower(r.M)
		if method == "query" || method == "connect" {
			op["x-method"] = r.M
			method = "x-" + method
		}
		item[method] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "xr API", "version": app.Version, "description": "Subscriber management: staff API and subscriber portal. Generated from the running route table."},
		"servers": []any{map[string]any{"url": "/"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "manager session token or xrt_ API token"}},
		},
	}
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

func responses(r *Route) map[string]any {
	errRef := map[string]any{"description": "error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	ok := map[string]any{"description": "success"}
	if r.Resp != nil {
		data := schemaOf(reflect.TypeOf(r.Resp))
		props := map[string]any{"data": data}
		if r.List {
			props["data"] = map[string]any{"type": "array", "items": data}
			props["meta"] = map[string]any{"$ref": "#/components/schemas/Meta"}
		}
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object", "properties": props}}}
	}
	if r.H == nil {
		return map[string]any{"501": map[string]any{"description": "not implemented yet", "content": errRef["content"]}}
	}
	return map[string]any{"200": ok, "default": errRef}
}

var (
	timeType  = reflect.TypeOf(app.Time{})
	moneyType = reflect.TypeOf(app.Money(0))
)

// schemaOf renders a JSON schema of a Go type by its json tags.
func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType || t == reflect.TypeOf(app.DateOrTime{}):
		return map[string]any{"type": []string{"string", "null"}, "format": "yyyy-MM-dd HH:mm:ss"}
	case t == moneyType:
		return map[string]any{"type": "number", "description": "major units, at most 3 decimals"}
	case t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "Opt["):
		return schemaOf(t.Field(2).Type)
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
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"}
		}
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object"}
	case reflect.Struct:
		props := map[string]any{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous {
				if sub, ok := schemaOf(f.Type)["properties"].(map[string]any); ok {
					for k, v := range sub {
						props[k] = v
					}
				}
				continue
			}
			n := jsonName(f)
			if n == "" {
				continue
			}
			props[n] = schemaOf(f.Type)
			names = append(names, n)
		}
		sort.Strings(names)
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}
