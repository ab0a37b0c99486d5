package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"xr/app"
)

// HandlerFunc handles one request: parse, call one app function, write.
type HandlerFunc func(c *Ctx) error

// Ctx is one request as the handler sees it.
type Ctx struct {
	W      http.ResponseWriter
	R      *http.Request
	Route  *Route
	ReqID  string
	IP     string
	Host   HostInfo
	Tenant *app.Tenant // nil for a public route on a host without tenant
	Actor  *app.Actor  // set on staff and portal routes (app.SubscriberActor)
	App    *app.App
	query  url.Values
}

// Query is the parsed query string.
func (c *Ctx) Query() url.Values {
	if c.query == nil {
		c.query = c.R.URL.Query()
	}
	return c.query
}

// checkText refuses a path or query string that is not valid UTF-8 once
// unescaped ("%ff"): 400 invalid_utf8 naming the query parameter (or
// "path").
func (c *Ctx) checkText() error {
	if !utf8.ValidString(c.R.URL.Path) {
		return app.ErrValidation("invalid_utf8", "path")
	}
	for k, vs := range c.Query() {
		if !utf8.ValidString(k) {
			return app.ErrValidation("invalid_utf8", strings.ToValidUTF8(k, "\uFFFD"))
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return app.ErrValidation("invalid_utf8", k)
			}
		}
	}
	return nil
}

// ID parses an integer path variable; anything else is the record 404.
func (c *Ctx) ID(name string) (int64, error) {
	v, err := strconv.ParseInt(c.R.PathValue(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, app.ErrNotFound()
	}
	return v, nil
}

// Decode reads the JSON body into dst (see decodeBody).
func (c *Ctx) Decode(dst any) error { return decodeBody(c.W, c.R, dst) }

// OK writes 200 {"data": v}.
func (c *Ctx) OK(v any) error { return c.JSON(http.StatusOK, envelope{Data: v}) }

// Created writes 201 {"data": v}.
func (c *Ctx) Created(v any) error { return c.JSON(http.StatusCreated, envelope{Data: v}) }

// Accepted writes 202 {"data": v}.
func (c *Ctx) Accepted(v any) error { return c.JSON(http.StatusAccepted, envelope{Data: v}) }

// List writes 200 {"data": rows, "meta": meta}.
func (c *Ctx) List(rows any, meta app.Meta) error {
	return c.JSON(http.StatusOK, envelope{Data: rows, Meta: &meta})
}

// JSON writes any status and body.
func (c *Ctx) JSON(status int, body any) error {
	writeJSON(c.W, status, body)
	return nil
}

// Encoded writes a body the app encoded itself (a large document built
// without encoding/json, which would validate and copy it again).
func (c *Ctx) Encoded(status int, body []byte) error {
	c.W.Header().Set("Content-Type", "application/json; charset=utf-8")
	c.W.WriteHeader(status)
	c.W.Write(body)
	c.W.Write([]byte("\n"))
	return nil
}

type envelope struct {
	Data any       `json:"data"`
	Meta *app.Meta `json:"meta,omitempty"`
}

// Page writes an app.Page.
func Page[T any](c *Ctx, p app.Page[T]) error {
	if p.Rows == nil {
		p.Rows = []T{}
	}
	return c.List(p.Rows, p.Meta)
}
