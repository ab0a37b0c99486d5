package webtest

import (
	"fmt"
)

// Small values the tests read from answers and send in requests.

// Itoa is v in decimal.
func Itoa(v int64) string { return fmt.Sprintf("%d", v) }

// DataID is the "id" of an answer's data.
func DataID(r Resp) int64 { return int64(r.Data()["id"].(float64)) }

// TinyPNG is a 1×1 PNG header, enough for a sniffed image type.
var TinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// Num is a JSON number as an integer (0 when it is not one).
func Num(v any) int64 { f, _ := v.(float64); return int64(f) }

// Strings turns a JSON array into []string.
func Strings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
