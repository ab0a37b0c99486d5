package cards

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"xr/app/studio/render"
	"xr/internal/xrtest"
)

// 64 concurrent redemptions of distinct cards, each request retried
// (including concurrently with itself): every effect applies exactly once.
func TestConcurrentRedemptionsExactlyOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 64, FaceValue: xrtest.MoneyPtr("1.5")})
	codes := e.codes(b.ID)
	users := make([]int64, 64)
	for i := range users {
		users[i] = e.user(fmt.Sprintf("u%02d", i), e.owner.ManagerID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64*3)
	for i := 0; i < 64; i++ {
		for try := 0; try < 3; try++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				res, err := Redeem(e.ctx, e.owner, RedeemInput{Code: codes[i], UserID: users[i], RequestID: "req-" + strconv.Itoa(i)})
				if err == nil && (res.CardID != e.cardID(codes[i]) || res.EffectApplied.Amount != xrtest.Money("1.5")) {
					err = fmt.Errorf("card %d: %+v", i, res)
				}
				if err != nil {
					errs <- err
				}
			}(i)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, u := range users {
		if e.balance(u) != xrtest.Money("1.5") || e.scalar(`SELECT COUNT(*) FROM user_ledger WHERE user_id = ?`, u) != 1 {
			t.Fatalf("user %d: balance %s", i, e.balance(u))
		}
	}
	if n := e.scalar(`SELECT COUNT(*) FROM card_redemptions`); n != 64 {
		t.Fatalf("%d redemptions", n)
	}
	bb := e.batch(b.ID)
	if bb.Used != 64 || bb.Unused != 0 || bb.Redeemed != 64 {
		t.Fatalf("counters: %+v", bb)
	}
	e.stockOK(b.ID)
}

// Two intents race for one card: exactly one wins, the other is refused as
// consumed; the same intent twice is one effect and a replay.
func TestConcurrentDoubleRedemptionOfOneCard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 2, FaceValue: xrtest.MoneyPtr("5")})
	codes := e.codes(b.ID)
	u1, u2 := e.user("one", e.owner.ManagerID), e.user("two", e.owner.ManagerID)
	for round := 0; round < 2; round++ {
		var wg sync.WaitGroup
		results := make([]error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				in := RedeemInput{Code: codes[round], UserID: []int64{u1, u2}[g%2], RequestID: fmt.Sprintf("r%d-%d", round, g)}
				if round == 1 {
					in.UserID, in.RequestID = u1, "same" // the same intent from 8 goroutines
				}
				_, results[g] = Redeem(e.ctx, e.owner, in)
			}(g)
		}
		wg.Wait()
		wins := 0
		for _, err := range results {
			switch {
			case err == nil:
				wins++
			case round == 0:
				xrtest.WantReason(t, err, 409, "card_consumed")
			default:
				t.Fatalf("same request_id: %v", err)
			}
		}
		if round == 0 && wins != 1 {
			t.Fatalf("%d winners", wins)
		}
	}
	total := e.balance(u1) + e.balance(u2)
	if total != xrtest.Money("10") || e.scalar(`SELECT COUNT(*) FROM card_redemptions`) != 2 {
		t.Fatalf("two cards of 5 applied as %s", total)
	}
	e.stockOK(b.ID)
}

var (
	rePage  = regexp.MustCompile(`/Type\s*/Page[^s]`)
	reCount = regexp.MustCompile(`/Type\s*/Pages[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages`)
	reStart = regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`)
	reImage = regexp.MustCompile(`/Subtype\s*/Image`)
)

// parsePDF checks a PDF's structure the simple way: the header, the
// trailer and its startxref pointing at the xref table, and the page
// objects agreeing with the page tree's count. It returns the page and
// image counts.
func parsePDF(t testing.TB, b []byte) (pages, images int) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-1.")) {
		t.Fatalf("no PDF header: %q", b[:min(len(b), 16)])
	}
	m := reStart.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no startxref/%%EOF trailer")
	}
	off, _ := strconv.Atoi(string(m[1]))
	if off <= 0 || off >= len(b) || !bytes.HasPrefix(b[off:], []byte("xref")) {
		t.Fatalf("startxref %d does not point at the xref table", off)
	}
	if !bytes.Contains(b, []byte("trailer")) || !bytes.Contains(b, []byte("/Root")) {
		t.Fatal("no trailer dictionary")
	}
	pages = len(rePage.FindAll(b, -1))
	c := reCount.FindSubmatch(b)
	if c == nil {
		t.Fatal("no page tree count")
	}
	n, _ := strconv.Atoi(string(c[1]) + string(c[2]))
	if n != pages {
		t.Fatalf("page tree counts %d, %d page objects", n, pages)
	}
	return pages, len(reImage.FindAll(b, -1))
}

func TestPDFSheetParses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plan := e.plan("Day", xrtest.Money("1"), 1, 0, 0)
	b := e.series(e.owner, CreateInput{Type: "prepaid", Quantity: 30, PlanProfileID: plan, CodeCharset: "alnum_no_ambig"})
	// One card revoked: 29 printable cards on the default design's grid.
	codes := e.codes(b.ID)
	RevokeCard(e.ctx, e.owner, e.cardID(codes[0]))
	var buf bytes.Buffer
	n, pages, err := RenderPDF(e.ctx, e.ten, "ACME", e.batch(b.ID), &buf, nil)
	per := cardsPerPage(render.DefaultDesign(render.KindCardSheet))
	if err != nil || n != 29 || pages != (29+per-1)/per {
		t.Fatalf("render: %d cards, %d pages (%d a page), %v", n, pages, per, err)
	}
	if p, _ := parsePDF(t, buf.Bytes()); p != pages {
		t.Fatalf("parsed %d pages, want %d", p, pages)
	}
	// Every printable card's serial is in the text; the revoked one is not.
	text := xrtest.PDFText(t, buf.Bytes())
	var serial0, serial1 string
	if err := e.ten.DB.R.QueryRow(`SELECT (SELECT serial FROM cards WHERE code = ?), (SELECT serial FROM cards WHERE code = ?)`, codes[0], codes[1]).
		Scan(&serial0, &serial1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, serial1) || strings.Contains(text, serial0) {
		t.Fatalf("serials %s (printed) / %s (revoked) in %q", serial1, serial0, text[:min(len(text), 400)])
	}
	// The print-job data for client-side rendering.
	pj, err := GetPrintJob(e.ctx, e.owner, b.ID, 1, 10)
	if err != nil || pj.Total != 29 || len(pj.Cards) != 10 || !pj.HasNext || pj.Cards[0].Username == nil ||
		pj.Cards[0].QRPayload != QRPrefix+pj.Cards[0].Code || pj.Cards[0].PlanName != "Day" {
		t.Fatalf("print-job: %+v %v", pj, err)
	}
}

func TestQRPayloadOnSearch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.series(e.owner, CreateInput{Quantity: 1})
	code := e.codes(b.ID)[0]
	l, err := Search(e.ctx, e.owner, "code", "xr:c:"+code)
	if err != nil || l.Serial == "" || l.Mode != ModeRefill || l.EffectiveState != StateUnused || l.RedemptionsLeft != 1 || l.OwnerUsername != "owner" {
		t.Fatalf("search by scanned payload: %+v %v", l, err)
	}
	_, err = Search(e.ctx, e.owner, "pin", code)
	xrtest.WantReason(t, err, 400, "invalid_enum")
}
