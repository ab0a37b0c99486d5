package web

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// JSONErrorListener wraps the listener an http.Server serves so the few
// answers Go's HTTP server writes itself, before any handler runs, use the
// JSON error shape like every other error: 431 headers_too_large, 400
// malformed_request (a request line or header Go cannot parse, a missing
// Host), 501 unsupported_transfer_encoding, 505
// unsupported_protocol_version. Those answers carry no request_id (no
// request was read) and are in English. What Go answers without a body or
// not at all is unchanged: a header read past ReadHeaderTimeout closes the
// connection silently, an unknown Expect is an empty 417.
func JSONErrorListener(ln net.Listener) net.Listener { return jsonErrListener{ln} }

type jsonErrListener struct{ net.Listener }

func (l jsonErrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrConn{Conn: c}, nil
}

// jsonErrConn rewrites a write that is exactly one of net/http's own
// plain-text error answers. Those are written straight to the connection
// in one write, in a form no handler of ours produces (text/plain, no Date,
// no X-Request-Id, the status text repeated as the body), so nothing else
// can match.
type jsonErrConn struct{ net.Conn }

func (c *jsonErrConn) Write(b []byte) (int, error) {
	if out, ok := rewriteServerError(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// ReadFrom keeps the kernel copy (sendfile) of file downloads.
func (c *jsonErrConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// CloseWrite lets the server half-close after a 431, as it does unwrapped.
func (c *jsonErrConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// goErrorHeaders are the headers of net/http's own error answers.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// rewriteServerError turns net/http's "HTTP/1.1 431 Request Header Fields
// Too Large" + goErrorHeaders + body into the JSON error shape.
func rewriteServerError(b []byte) ([]byte, bool) {
	const proto = "HTTP/1.1 "
	if len(b) > 512 || !strings.HasPrefix(string(b), proto) {
		return nil, false
	}
	status, body, ok := strings.Cut(string(b[len(proto):]), goErrorHeaders)
	if !ok || len(status) < 5 || status[3] != ' ' {
		return nil, false
	}
	code, err := strconv.Atoi(status[:3])
	text := http.StatusText(code)
	if err != nil || code < 400 || text == "" || (status[4:] != text && !strings.HasPrefix(status[4:], text+": ")) {
		return nil, false
	}
	if body != status && body != "Unsupported transfer encoding" {
		return nil, false
	}
	details := map[string]any{}
	switch code {
	case http.StatusRequestHeaderFieldsTooLarge:
		details["reason"] = "headers_too_large"
	case http.StatusNotImplemented:
		details["reason"] = "unsupported_transfer_encoding"
	case http.StatusHTTPVersionNotSupported:
		details["reason"] = "unsupported_protocol_version"
	default:
		details["reason"] = "malformed_request"
		// Go's own words ("missing required Host header"), never input.
		if _, text, ok := strings.Cut(status, ": "); ok {
			details["detail"] = text
		}
	}
	reason := details["reason"].(string)
	j, err := json.Marshal(errorBody{Error: errorObject{Code: "ERR_VALIDATION", Message: Message("en", reason, "ERR_VALIDATION"),
		RequestID: "", Details: details}})
	if err != nil {
		return nil, false
	}
	j = append(j, '\n')
	out := proto + strconv.Itoa(code) + " " + http.StatusText(code) +
		"\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: " + strconv.Itoa(len(j)) +
		"\r\nConnection: close\r\n\r\n" + string(j)
	return []byte(out), true
}
