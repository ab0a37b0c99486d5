package web_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"

	"xr/db"
	"xr/internal/webtest"
	"xr/internal/xrtest"
)

// capFile makes a tenant file full: max_page_count pinned at its size on
// the single writer connection, then every free page used up, so any write
// that needs a page (a row that spills to an overflow page, a leaf split)
// answers SQLITE_FULL. It returns the function that lifts the cap.
func capFile(t testing.TB, d *db.DB) (lift func()) {
	t.Helper()
	if _, err := d.W.Exec(`CREATE TABLE IF NOT EXISTS zz_fill(b BLOB)`); err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := d.W.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := d.W.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		_, err := d.W.Exec(`INSERT INTO zz_fill(b) VALUES (zeroblob(3000))`)
		if db.IsFull(err) {
			break
		}
		if err != nil || i > 100000 {
			t.Fatalf("filling the file: %v", err)
		}
	}
	return func() {
		t.Helper()
		if _, err := d.W.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStorageFullAnswers503AndRecovers: a write on a full tenant file
// answers 503 ERR_MAINTENANCE storage_full with nothing stored, reads keep
// working, /readyz and /metrics report it, and once space is back the same
// request succeeds and everything committed before is there.
func TestStorageFullAnswers503AndRecovers(t *testing.T) {
	t.Parallel()
	k := webtest.New(t)
	tok := k.Owner("acme")
	notes := strings.Repeat("n", 4000) // spills to an overflow page: needs a new page
	create := func(name string) webtest.Resp {
		return k.Do("POST", "acme", "/api/v1/users", tok, map[string]any{"username": name, "password": "pw-" + name + "-long", "notes": notes})
	}
	if r := create("before"); r.Status != 201 {
		t.Fatalf("create before: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "", "/readyz", "", nil); r.Status != 200 {
		t.Fatalf("readyz before: %d %s", r.Status, r.Body)
	}
	lift := capFile(t, k.Acquire("acme").DB)

	for range 2 {
		r := create("during")
		webtest.ExpectErr(t, r, 503, "ERR_MAINTENANCE", "storage_full")
		if !strings.Contains(r.JSON["error"].(map[string]any)["message"].(string), "storage") {
			t.Fatalf("message: %s", r.Body)
		}
	}
	var n int
	if err := k.Acquire("acme").DB.R.QueryRow(`SELECT COUNT(*) FROM users WHERE username = 'during'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused create stored %d rows (%v)", n, err)
	}
	if r := k.Do("GET", "acme", "/api/v1/users", tok, nil); r.Status != 200 || len(r.List()) != 1 {
		t.Fatalf("reads while full: %d %s", r.Status, r.Body)
	}
	r := k.Do("GET", "", "/readyz", "", nil)
	webtest.ExpectErr(t, r, 503, "ERR_MAINTENANCE", "storage_full")
	if f := r.JSON["error"].(map[string]any)["details"].(map[string]any)["files"]; f != float64(1) {
		t.Fatalf("readyz details: %s", r.Body)
	}
	m := string(k.Do("GET", "", "/metrics", "", nil).Body)
	for _, want := range []string{"xr_storage_full 1\n", `xr_storage_full_files{file="acme"} 1`, "xr_storage_full_errors_total 2\n"} {
		if !strings.Contains(m, want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, m)
		}
	}

	lift()
	if r := create("during"); r.Status != 201 {
		t.Fatalf("the same create once there is room: %d %s", r.Status, r.Body)
	}
	if r := k.Do("GET", "", "/readyz", "", nil); r.Status != 200 {
		t.Fatalf("readyz after: %d %s", r.Status, r.Body)
	}
	m = string(k.Do("GET", "", "/metrics", "", nil).Body)
	if !strings.Contains(m, "xr_storage_full 0\n") || strings.Contains(m, `xr_storage_full_files{`) {
		t.Fatalf("/metrics after recovery:\n%s", m)
	}
	if r := k.Do("GET", "acme", "/api/v1/users", tok, nil); len(r.List()) != 2 {
		t.Fatalf("users after: %s", r.Body)
	}
}

// TestAccountingOnFullFileIsNotAcknowledged: a real Accounting-Request
// whose commit fails for lack of space gets no Accounting-Response (the
// NAS retransmits); once space is back the retransmission is acknowledged
// and charged once, and a further retransmission is not charged again.
func TestAccountingOnFullFileIsNotAcknowledged(t *testing.T) {
	t.Parallel()
	k := webtest.NewRadiusKit(t)
	uid := k.CreateUser("fulluser")
	ta := k.Acquire("acme")
	var nasID int64
	if err := ta.DB.R.QueryRow(`SELECT id FROM nas LIMIT 1`).Scan(&nasID); err != nil {
		t.Fatal(err)
	}
	lift := capFile(t, ta.DB)
	// Fill the last leaves the Stop's row and index entries go to (the
	// table, and the indexes keyed by user, by NAS and session id) with
	// rows no larger than it: a row that did not fit there cannot fit the
	// real one either.
	for i := 0; ; i++ {
		_, err := ta.DB.W.Exec(`INSERT INTO radius_sessions(acct_session_id, user_id, nas_id, stop_time) VALUES (?, ?, ?, '2020-01-01 00:00:00')`,
			fmt.Sprintf("f%05d", i), uid, nasID)
		if db.IsFull(err) {
			break
		}
		if err != nil || i > 100000 {
			t.Fatalf("filling radius_sessions: %v", err)
		}
	}

	p := radius.New(radius.CodeAccountingRequest, []byte(webtest.RadiusSecret))
	p.Identifier = 77
	rfc2866.AcctStatusType_Set(p, rfc2866.AcctStatusType_Value_Stop)
	rfc2865.UserName_SetString(p, "fulluser")
	rfc2866.AcctSessionID_SetString(p, "s-full-session")
	rfc2866.AcctInputOctets_Set(p, 3000)
	rfc2866.AcctOutputOctets_Set(p, 4000)
	rfc2866.AcctSessionTime_Set(p, 60)
	wire, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("udp", k.AcctAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func() {
		t.Helper()
		if _, err := conn.Write(wire); err != nil {
			t.Fatal(err)
		}
	}
	// answered waits up to d for an Accounting-Response to our packet.
	answered := func(d time.Duration) bool {
		t.Helper()
		buf := make([]byte, 4096)
		conn.SetReadDeadline(time.Now().Add(d))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return false
			}
			if n >= 20 && buf[0] == byte(radius.CodeAccountingResponse) && buf[1] == p.Identifier {
				return true
			}
		}
	}
	used := func() int64 {
		t.Helper()
		return k.Scalar(`SELECT used_bytes FROM users WHERE id = ?`, uid).Int64
	}

	send()
	// The commit failed once the storage flag is up; the reply, had it been
	// sent, would have left before the batcher returned.
	xrtest.Eventually(t, "the accounting commit to hit the full file", func() bool { return len(k.App.StorageStatus().Full) > 0 })
	if answered(300 * time.Millisecond) {
		t.Fatal("an accounting record that was not committed was acknowledged")
	}
	if u := used(); u != 0 {
		t.Fatalf("charged %d bytes by a failed commit", u)
	}
	if got := k.Scalar(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's-full-session'`); got.Int64 != 0 {
		t.Fatal("a failed commit left a session row")
	}

	lift()
	// The NAS retransmits the same bytes.
	ok := false
	for i := 0; i < 20 && !ok; i++ {
		send()
		ok = answered(time.Second)
	}
	if !ok {
		t.Fatal("the retransmission was never acknowledged after space was freed")
	}
	if u := used(); u != 7000 {
		t.Fatalf("charged %d bytes, want 7000 once", u)
	}
	send()
	if !answered(5 * time.Second) {
		t.Fatal("a further retransmission was not answered")
	}
	if u := used(); u != 7000 {
		t.Fatalf("a retransmission charged again: %d", u)
	}
	if got := k.Scalar(`SELECT COUNT(*) FROM radius_sessions WHERE acct_session_id = 's-full-session'`); got.Int64 != 1 {
		t.Fatalf("%d session rows, want 1", got.Int64)
	}
	xrtest.Eventually(t, "the storage flag cleared", func() bool { return len(k.App.StorageStatus().Full) == 0 })
}
