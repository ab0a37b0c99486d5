package webtest

import (
	"bytes"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A response body is validated against its schema compiled once per
// schema. kin-openapi's ValidateResponse still checks the status and the
// headers, but it compiles the schema anew for every response it
// validates, which was an eighth of the web tests' CPU. The compiler
// (santhosh-tekuri/jsonschema, kin-openapi's own for OpenAPI 3.1) gets one
// JSON Schema 2020-12 document: every response schema of /openapi.json
// under $defs/rN and the component schemas under $defs/c, so it walks them
// all once; compiling a location it has not walked copies its index of the
// document, which per response schema was slower than kin-openapi.
var bodySchemas struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	ids      map[string]string // "METHOD path code media" → rN
	compiled map[string]*jsonschema.Schema
}

// bodySchemaDocURL names the document of response schemas.
const bodySchemaDocURL = "urn:xr:openapi-responses.json"

// componentRef is how /openapi.json refers to a component schema, and
// componentDef where it sits in the compiler's document.
const (
	componentRef = "#/components/schemas/"
	componentDef = "#/$defs/c/$defs/"
)

// loadBodySchemas builds the compiler's document from /openapi.json (its
// JSON text), asserting the formats it uses as kin-openapi does.
func loadBodySchemas(docJSON []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(docJSON))
	if err != nil {
		return err
	}
	doc, _ := v.(map[string]any)
	comps, _ := doc["components"].(map[string]any)
	defs := map[string]any{"c": map[string]any{"$defs": comps["schemas"]}}
	ids := map[string]string{}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		methods, _ := item.(map[string]any)
		for method, op := range methods {
			responses, _ := op.(map[string]any)["responses"].(map[string]any)
			for code, resp := range responses {
				content, _ := resolveResponse(resp, comps)["content"].(map[string]any)
				for media, m := range content {
					if schema, ok := m.(map[string]any)["schema"]; ok {
						id := fmt.Sprintf("r%d", len(ids))
						ids[strings.ToUpper(method)+" "+path+" "+code+" "+media] = id
						defs[id] = schema
					}
				}
			}
		}
	}
	root := map[string]any{"$defs": defs}
	rewriteRefs(root)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	formats := map[string]bool{}
	collectFormats(root, formats)
	for f := range formats {
		c.RegisterFormat(&jsonschema.Format{Name: f, Validate: formatCheck(f)})
	}
	c.AssertFormat()
	if err := c.AddResource(bodySchemaDocURL, root); err != nil {
		return err
	}
	if _, err := c.Compile(bodySchemaDocURL); err != nil {
		return err
	}
	bodySchemas.compiler, bodySchemas.ids, bodySchemas.compiled = c, ids, map[string]*jsonschema.Schema{}
	return nil
}

// resolveResponse follows a response's $ref into the components.
func resolveResponse(resp any, comps map[string]any) map[string]any {
	r, _ := resp.(map[string]any)
	if ref, ok := r["$ref"].(string); ok {
		named, _ := comps["responses"].(map[string]any)
		r, _ = named[strings.TrimPrefix(ref, "#/components/responses/")].(map[string]any)
	}
	return r
}

// rewriteRefs points references to component schemas at $defs/c.
func rewriteRefs(node any) {
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok && strings.HasPrefix(ref, componentRef) {
			n["$ref"] = componentDef + strings.TrimPrefix(ref, componentRef)
		}
		for _, v := range n {
			rewriteRefs(v)
		}
	case []any:
		for _, v := range n {
			rewriteRefs(v)
		}
	}
}

func collectFormats(node any, into map[string]bool) {
	switch n := node.(type) {
	case map[string]any:
		if f, ok := n["format"].(string); ok && f != "" {
			into[f] = true
		}
		for _, v := range n {
			collectFormats(v, into)
		}
	case []any:
		for _, v := range n {
			collectFormats(v, into)
		}
	}
}

// formatCheck validates a format with kin-openapi's validators of string
// and integer formats; a format it does not know passes.
func formatCheck(format string) func(any) error {
	return func(v any) error {
		switch v := v.(type) {
		case string:
			if f, ok := openapi3.SchemaStringFormats[format]; ok {
				return f.Validate(v)
			}
		case jsonNumber:
			if n, err := v.Float64(); err == nil && n == math.Trunc(n) && !math.IsInf(n, 0) {
				if f, ok := openapi3.SchemaIntegerFormats[format]; ok {
					return f.Validate(int64(n))
				}
			}
		}
		return nil
	}
}

type jsonNumber interface{ Float64() (float64, error) }

// bodySchema is the compiled schema of a response (key: "METHOD path code
// media").
func bodySchema(key string) (*jsonschema.Schema, error) {
	bodySchemas.mu.Lock()
	defer bodySchemas.mu.Unlock()
	if s, ok := bodySchemas.compiled[key]; ok {
		return s, nil
	}
	id, ok := bodySchemas.ids[key]
	if !ok {
		return nil, fmt.Errorf("no schema for %s in /openapi.json", key)
	}
	s, err := bodySchemas.compiler.Compile(bodySchemaDocURL + "#/$defs/" + id)
	if err != nil {
		return nil, err
	}
	bodySchemas.compiled[key] = s
	return s, nil
}

// validateBody checks a response's body against the schema documented for
// its status and media type, as ValidateResponse does: a status with no
// documented content, or content with no schema, passes; an undocumented
// media type does not.
func validateBody(path, method string, op *openapi3.Operation, status int, header http.Header, body []byte) error {
	switch status {
	case http.StatusNotModified, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusMovedPermanently:
		return nil
	}
	ref := op.Responses.Status(status)
	if ref == nil {
		ref = op.Responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) == 0 {
		return nil // ValidateResponse reports an undocumented status
	}
	ct := header.Get("Content-Type")
	media := ref.Value.Content.Get(ct)
	if media == nil {
		return fmt.Errorf("response Content-Type %q is not documented", ct)
	}
	if media.Schema == nil {
		return nil
	}
	code, mediaKey := "", ""
	for k, r := range op.Responses.Map() {
		if r == ref {
			code = k
		}
	}
	for k, m := range ref.Value.Content {
		if m == media {
			mediaKey = k
		}
	}
	schema, err := bodySchema(strings.ToUpper(method) + " " + path + " " + code + " " + mediaKey)
	if err != nil {
		return err
	}
	var value any = string(body)
	if mt, _, _ := mime.ParseMediaType(ct); mt == "application/json" || strings.HasSuffix(mt, "+json") {
		if value, err = jsonschema.UnmarshalJSON(bytes.NewReader(body)); err != nil {
			return fmt.Errorf("response body is not JSON: %w", err)
		}
	}
	if err := schema.Validate(value); err != nil {
		return fmt.Errorf("response body doesn't match the schema of %s %s %s (%s): %w", method, path, code, mediaKey, err)
	}
	return nil
}
