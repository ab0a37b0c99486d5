package devgw

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"xr/app"
	"xr/app/files"
)

// MaxRecording bounds one recording; output past it is not recorded (the
// recording ends with a marker line) while the console goes on.
var MaxRecording int64 = 32 << 20

// recorder writes a console's output (never its input: keystrokes carry
// passwords) as asciicast v2 — a header line, then [t, "o", data] and
// [t, "r", "COLSxROWS"] lines — streamed into the tenant file store
// (files.Stage reads the other end of a pipe).
type recorder struct {
	mu      sync.Mutex
	start   time.Time
	now     func() time.Time
	pw      *io.PipeWriter
	written int64
	full    bool
	carry   []byte // an incomplete UTF-8 sequence held for the next chunk
	result  chan stageResult
}

type stageResult struct {
	st  *files.Staged
	err error
}

// newRecorder starts the staging of a recording with its header.
func newRecorder(t *app.Tenant, sid int64, cols, rows int) (*recorder, error) {
	pr, pw := io.Pipe()
	r := &recorder{start: t.Now(), now: t.Now, pw: pw, result: make(chan stageResult, 1)}
	go func() {
		st, err := files.Stage(t, "console-"+strconv.FormatInt(sid, 10)+".cast.txt", pr, files.Policy{MaxBytes: MaxRecording + 64<<10, Allow: []string{"text/plain"}})
		// Unblock the writer if staging stopped early.
		pr.CloseWithError(io.ErrClosedPipe)
		r.result <- stageResult{st, err}
	}()
	hdr, err := json.Marshal(map[string]any{"version": 2, "width": cols, "height": rows, "timestamp": r.start.Unix(),
		"env": map[string]string{"TERM": "xterm-256color"}})
	if err != nil {
		return nil, err
	}
	r.line(hdr)
	return r, nil
}

func (r *recorder) line(b []byte) {
	if r.full {
		return
	}
	if r.written+int64(len(b))+1 > MaxRecording {
		r.full = true
		b = []byte(fmt.Sprintf(`[%.6f, "o", "\r\n[recording truncated]\r\n"]`, r.elapsed()))
	}
	n, err := r.pw.Write(append(b, '\n'))
	r.written += int64(n)
	if err != nil {
		r.full = true
	}
}

func (r *recorder) elapsed() float64 {
	d := r.now().Sub(r.start).Seconds()
	if d < 0 {
		d = 0
	}
	return d
}

// output records bytes the device printed.
func (r *recorder) output(p []byte) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.full {
		return
	}
	b := append(r.carry, p...)
	// Hold back a UTF-8 sequence cut by the chunk boundary.
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	r.carry = append([]byte(nil), b[cut:]...)
	if cut == 0 {
		return
	}
	data, err := json.Marshal(string(b[:cut]))
	if err != nil {
		return
	}
	r.line(fmt.Appendf(nil, `[%.6f, "o", %s]`, r.elapsed(), data))
}

// resize records a terminal size change.
func (r *recorder) resize(cols, rows int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.line(fmt.Appendf(nil, `[%.6f, "r", "%dx%d"]`, r.elapsed(), cols, rows))
}

// finish ends the recording and returns the staged file (nil on failure).
func (r *recorder) finish() (*files.Staged, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.carry) > 0 {
		c := r.carry
		r.carry = nil
		if data, err := json.Marshal(string(c)); err == nil {
			r.line(fmt.Appendf(nil, `[%.6f, "o", %s]`, r.elapsed(), data))
		}
	}
	if err := r.pw.Close(); err != nil {
		return nil, err
	}
	res := <-r.result
	return res.st, res.err
}
