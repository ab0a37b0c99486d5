package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"xr/web"
)

// The contract test: every response the web test suite receives through
// the kit (Kit.Do) is validated against the generated /openapi.json with
// kin-openapi's openapi3filter (status, headers) and its body with the
// schema compiled once (contract_body.go): its status must be documented for the
// operation (or fall to "default", which is the Error body), its body must
// match the schema, and an error of a documented status must carry one of
// the reasons listed for it. A mismatch fails the test that made the
// request.
//
// Not validated (documented exceptions): requests that reach no row
// (route_not_found, method_not_allowed, console pages, static files),
// rows a test stubbed or mounted (SkipContract),
// HEAD answers (no body), rows of the QUERY and CONNECT methods (OpenAPI
// has no such operation keys: they are x-query/x-connect), and benchmarks.
//
// XR_CONTRACT_RECORD=file appends each mismatch to file instead of failing
// (a tool for documenting many reasons at once; see openapi_reasons_table.go).

var contract struct {
	once sync.Once
	doc  *openapi3.T
	err  error
	mu   sync.Mutex
	// skip holds rows a test replaced or added (SkipContract): their
	// answers are the test's, not the API's.
	skip sync.Map
}

// ContractDoc is the document of the real route table (a server of its
// own, so rows a test adds or stubs never enter it).
func ContractDoc() (*openapi3.T, error) {
	contract.once.Do(func() {
		// Files and text pages: validated as strings of their media type.
		for _, ct := range []string{"text/html", "text/markdown", "text/javascript", "text/csv", "application/pdf",
			"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "image/png"} {
			openapi3filter.RegisterBodyDecoder(ct, openapi3filter.FileBodyDecoder)
		}
		b, err := json.Marshal(web.APIDocument())
		if err != nil {
			contract.err = err
			return
		}
		if err := loadBodySchemas(b); err != nil {
			contract.err = fmt.Errorf("/openapi.json as JSON Schema: %w", err)
			return
		}
		l := openapi3.NewLoader()
		doc, err := l.LoadFromData(b)
		if err != nil {
			contract.err = fmt.Errorf("load /openapi.json: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contract.err = fmt.Errorf("/openapi.json is not valid: %w", err)
			return
		}
		contract.doc = doc
	})
	return contract.doc, contract.err
}

// SkipContract leaves the answers of a row out of the contract check: a
// row a test stubbed or mounted answers for the test, not for the API.
func SkipContract(rt *web.Route) { contract.skip.Store(rt, true) }

// CheckContract validates one response received by the kit.
func (k *Kit) CheckContract(req *http.Request, status int, header http.Header, body []byte) {
	if _, bench := k.T.(*testing.B); bench || req.Method == "HEAD" || req.Method == "QUERY" || req.Method == "CONNECT" {
		return
	}
	rt := k.Srv.RouteOf(req)
	if _, skip := contract.skip.Load(rt); rt == nil || skip {
		return
	}
	doc, err := ContractDoc()
	if err != nil {
		k.T.Errorf("contract: %v", err)
		return
	}
	item := doc.Paths.Value(rt.FullPath())
	if item == nil {
		k.T.Errorf("contract: %s is not in /openapi.json", rt.Pattern())
		return
	}
	op := item.GetOperation(rt.M)
	if op == nil {
		k.T.Errorf("contract: %s has no operation in /openapi.json", rt.Pattern())
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req,
			Route:   &routers.Route{Spec: doc, Path: rt.FullPath(), PathItem: item, Method: rt.M, Operation: op},
		},
		Status:  status,
		Header:  header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true},
	}
	in.SetBodyBytes(body)
	if f := os.Getenv("XR_CONTRACT_RECORD"); f != "" && status >= 400 {
		var e struct {
			Error struct {
				Details struct {
					Reason string `json:"reason"`
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		contractRecord(f, fmt.Sprintf("%s\t%d %s\tseen", rt.M+" "+rt.FullPath(), status, e.Error.Details.Reason))
	}
	err = openapi3filter.ValidateResponse(context.Background(), in)
	if err == nil {
		err = validateBody(rt.FullPath(), rt.M, op, status, header, body)
	}
	if err != nil {
		msg := err.Error()
		var e struct {
			Error struct {
				Details struct {
					Reason string `json:"reason"`
				} `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		line := fmt.Sprintf("%s\t%d %s\t%s", rt.M+" "+rt.FullPath(), status, e.Error.Details.Reason, strings.ReplaceAll(msg, "\n", " | "))
		if f := os.Getenv("XR_CONTRACT_RECORD"); f != "" {
			contractRecord(f, line)
			return
		}
		hint := "document it in the route row (Resp, Status, Content)"
		if status >= 400 && e.Error.Details.Reason != "" {
			hint = fmt.Sprintf("add %q to the Reasons of the row %q (its web/<area>_routes.go; older rows: web/openapi_reasons_table.go)", fmt.Sprint(status, " ", e.Error.Details.Reason), rt.M+" "+rt.FullPath())
		}
		k.T.Errorf("contract: the response does not match /openapi.json: %s\n%s %s → %d %.400s\n%.1500s",
			hint, req.Method, req.URL.RequestURI(), status, body, msg)
	}
}

func contractRecord(file, line string) {
	contract.mu.Lock()
	defer contract.mu.Unlock()
	if w, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		fmt.Fprintln(w, line)
		w.Close()
	}
}
