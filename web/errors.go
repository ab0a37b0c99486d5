package web

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"xr/app"
	"xr/assets"
)

type errorBody struct {
	Error errorObject `json:"error"`
}

type errorObject struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	RequestID string         `json:"request_id"`
	Details   map[string]any `json:"details"`
}

// catalogues maps language → message key → text. Keys are reasons, with
// "code:ERR_X" as the fallback of a whole class.
var catalogues = loadCatalogues()

func loadCatalogues() map[string]map[string]string {
	out := map[string]map[string]string{}
	entries, _ := fs.ReadDir(assets.Messages, "messages")
	for _, e := range entries {
		b, err := fs.ReadFile(assets.Messages, "messages/"+e.Name())
		if err != nil {
			continue
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			panic("message catalogue " + e.Name() + ": " + err.Error())
		}
		out[strings.TrimSuffix(e.Name(), ".json")] = m
	}
	return out
}

// Message picks the text of a reason in lang, falling back to the class
// text, then to English.
func Message(lang, reason, code string) string {
	for _, l := range []string{lang, "en"} {
		m := catalogues[l]
		if s, ok := m[reason]; ok {
			return s
		}
		if s, ok := m["code:"+code]; ok {
			return s
		}
	}
	return strings.ReplaceAll(reason, "_", " ")
}

// pickLanguage reads Accept-Language for a language we ship; "" if none.
func pickLanguage(header string) string {
	for _, part := range strings.Split(header, ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(tag), "-")
		if _, ok := catalogues[base]; ok {
			return base
		}
	}
	return ""
}

// writeError is the one function that writes an error response.
func (s *Server) writeError(c *Ctx, err error) {
	e := app.Classify(err) // SQLITE_FULL → 503 ERR_MAINTENANCE storage_full
	if e == nil && errors.Is(err, context.DeadlineExceeded) {
		e = app.ErrTimeout()
	}
	if e == nil {
		e = app.ErrInternal(err)
	}
	if e.Status >= 500 && e.Reason != "not_implemented" {
		s.log.Error("request failed", "request_id", c.ReqID, "method", c.R.Method, "path", c.R.URL.Path, "err", err)
	}
	lang := pickLanguage(c.R.Header.Get("Accept-Language"))
	if lang == "" && c.Tenant != nil {
		// Detached: the handler's time budget may already be spent.
		lang = app.SettingDefaultLanguage.GetOr(context.WithoutCancel(c.R.Context()), c.Tenant.DB.R)
	}
	details := map[string]any{"reason": e.Reason}
	if e.Field != "" {
		details["field"] = e.Field
	}
	for k, v := range e.Details {
		details[k] = v
	}
	if ra, ok := e.Details["retry_after"].(int); ok && e.Status == http.StatusServiceUnavailable {
		c.W.Header().Set("Retry-After", strconv.Itoa(ra))
	}
	writeJSON(c.W, e.Status, errorBody{Error: errorObject{Code: e.Code, Message: Message(lang, e.Reason, e.Code), RequestID: c.ReqID, Details: details}})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		slog.Error("encode response", "err", err)
		status = 500
		b = []byte(`{"error":{"code":"ERR_INTERNAL","message":"internal error","request_id":"","details":{"reason":"internal_error"}}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte("\n"))
}
