package cards

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/boombuler/barcode/qr"
	"github.com/go-pdf/fpdf"

	"xr/app"
)

// PrintCard is one card of a printable sheet.
type PrintCard struct {
	ID        int64     `json:"id"`
	Serial    string    `json:"serial"`
	Code      string    `json:"code"`
	Username  *string   `json:"username"`
	Password  *string   `json:"password"`
	QRPayload string    `json:"qr_payload"` // "xr:c:" + code
	PlanName  string    `json:"plan_name"`
	FaceValue app.Money `json:"face_value"`
	ExpiresAt app.Time  `json:"expires_at"`
}

// PrintJob is GET /card-batches/{id}/print-job: the data a client renders
// a card sheet from — the printable cards (unused, not revoked) of the
// series owned within the caller's subtree, in serial order, a page at a
// time (page, page_size up to 5,000, default 1,000).
type PrintJob struct {
	Batch    Batch       `json:"batch"`
	Tenant   string      `json:"tenant"`
	Currency string      `json:"currency"`
	Cards    []PrintCard `json:"cards"`
	Page     int         `json:"page"`
	PageSize int         `json:"page_size"`
	Total    int         `json:"total"`
	HasNext  bool        `json:"has_next"`
}

// MaxPrintPage bounds one page of print-job data.
const MaxPrintPage = 5000

// GetPrintJob is GET /card-batches/{id}/print-job.
func GetPrintJob(ctx context.Context, act *app.Actor, id int64, page, pageSize int) (*PrintJob, error) {
	if page < 1 {
		page = 1
	}
	if pageSize < 1 {
		pageSize = 1000
	}
	pageSize = min(pageSize, MaxPrintPage)
	out := &PrintJob{Page: page, PageSize: pageSize, Tenant: act.Tenant.Name, Cards: []PrintCard{}}
	err := act.Tenant.Read(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if b.Status != "ready" {
			return app.ErrConflict("card_batch_not_ready").With("status", b.Status)
		}
		out.Batch = *b
		if out.Currency, err = currency(ctx, tx); err != nil {
			return err
		}
		cond, args := act.ScopeSQL("c.owner_manager_id")
		args = append([]any{id}, args...)
		where := ` WHERE c.batch_id = ? AND c.state = 'unused' AND ` + cond
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards c`+where, args...).Scan(&out.Total); err != nil {
			return err
		}
		out.HasNext = page*pageSize < out.Total
		return eachPrintable(ctx, tx, b, where, args, fmt.Sprintf(" LIMIT %d OFFSET %d", pageSize, (page-1)*pageSize), func(pc PrintCard) error {
			out.Cards = append(out.Cards, pc)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// currency is the tenant's currency for printed cards; USD when unset or
// empty.
func currency(ctx context.Context, q app.Querier) (string, error) {
	c, err := app.SettingCurrency.Get(ctx, q)
	if c == "" {
		c = "USD"
	}
	return c, err
}

func eachPrintable(ctx context.Context, q app.Querier, b *Batch, where string, args []any, limit string, fn func(PrintCard) error) error {
	rows, err := q.QueryContext(ctx, `SELECT c.id, c.serial, c.code, c.username, c.password, c.expires_at FROM cards c`+where+` ORDER BY c.seq`+limit, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		pc := PrintCard{PlanName: b.PlanName, FaceValue: b.FaceValue}
		var user, pass sql.NullString
		if err := rows.Scan(&pc.ID, &pc.Serial, &pc.Code, &user, &pass, &pc.ExpiresAt); err != nil {
			return err
		}
		if user.Valid {
			pc.Username, pc.Password = &user.String, &pass.String
		}
		pc.QRPayload = QRPrefix + pc.Code
		if err := fn(pc); err != nil {
			return err
		}
	}
	return rows.Err()
}

// PDFKind is the job kind that renders a series' PDF card sheet.
const PDFKind = "cards.pdf"

type pdfPayload struct {
	BatchID int64 `json:"batch_id"`
	Version int64 `json:"version"`
}

// PDFState answers GET /card-batches/{id}/pdf while the sheet is being
// rendered (202).
type PDFState struct {
	BatchID int64  `json:"batch_id"`
	JobID   int64  `json:"job_id"`
	State   string `json:"state"`  // queued, running
	Queued  bool   `json:"queued"` // this call queued the render
}

// PDFFile is a rendered sheet ready to download.
type PDFFile struct {
	Path    string
	Name    string
	ModTime time.Time
}

func pdfDir(t *app.Tenant) string { return filepath.Join(t.App.FilesDir(t.Slug), "cards") }

// removeStalePDF deletes a PDF no batch refers to any more, after the
// commit that dropped the reference. A failure is logged, not returned:
// the operation is done and the file is never served again, so it only
// costs disk until the tenant's files are removed.
func removeStalePDF(t *app.Tenant, name string) {
	if err := os.Remove(pdfPath(t, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.App.Log.Warn("remove stale card PDF", "tenant", t.Slug, "file", name, "err", err)
	}
}

func pdfPath(t *app.Tenant, name string) string { return filepath.Join(pdfDir(t), name) }

// GetPDF is GET /card-batches/{id}/pdf: the PDF card sheet of the series'
// printable cards when it is rendered for the current content, else the
// render job (queued by the first call): exactly one of the results is
// set. Codes change (regenerate, expiry, suspension, revocation) make a
// stored sheet stale and the next call renders it again. A caller without
// tenant-wide visibility gets the sheet only when every card of the series
// is owned within its subtree (403 card_batch_shared otherwise).
func GetPDF(ctx context.Context, act *app.Actor, id int64) (*PDFFile, *PDFState, error) {
	t := act.Tenant
	var file *PDFFile
	var state *PDFState
	now := t.Now()
	err := t.Write(ctx, func(tx *sql.Tx) error {
		b, err := loadBatch(ctx, tx, act, id)
		if err != nil {
			return err
		}
		if b.Status != "ready" {
			return app.ErrConflict("card_batch_not_ready").With("status", b.Status)
		}
		if !act.TenantWide {
			cond, args := act.ScopeSQL("owner_manager_id")
			var outside int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND NOT (`+cond+`)`, append([]any{id}, args...)...).Scan(&outside); err != nil {
				return err
			}
			if outside > 0 {
				return app.ErrForbidden("card_batch_shared")
			}
		}
		var name string
		var version, pdfVersion int64
		var jobID sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT pdf_file, content_version, pdf_version, pdf_job_id FROM card_batches WHERE id = ?`, id).
			Scan(&name, &version, &pdfVersion, &jobID); err != nil {
			return err
		}
		if name != "" && pdfVersion == version {
			if st, err := os.Stat(pdfPath(t, name)); err == nil {
				file = &PDFFile{Path: pdfPath(t, name), Name: fmt.Sprintf("cards-%d.pdf", id), ModTime: st.ModTime()}
				return nil
			}
		}
		if jobID.Valid {
			if j, err := app.GetJob(ctx, tx, jobID.Int64); err == nil && (j.State == "queued" || j.State == "running") {
				var p pdfPayload
				if json.Unmarshal(j.Payload, &p) == nil && p.Version == version {
					state = &PDFState{BatchID: id, JobID: j.ID, State: j.State}
					return nil
				}
			}
		}
		job, err := app.EnqueueJob(ctx, tx, PDFKind, pdfPayload{BatchID: id, Version: version}, now, act.ManagerID, 3)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE card_batches SET pdf_job_id = ? WHERE id = ?`, job, id); err != nil {
			return err
		}
		state = &PDFState{BatchID: id, JobID: job, State: "queued", Queued: true}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if state != nil && state.Queued {
		t.App.Jobs.Notify(t.Slug, now)
	}
	return file, state, nil
}

// QueuePDF queues the render of a series' sheet (bulk-print-job).
func QueuePDF(ctx context.Context, act *app.Actor, id int64) error {
	_, _, err := GetPDF(ctx, act, id)
	return err
}

// BulkPrintJob is POST /card-batches/bulk-print-job: the PDF sheet of each
// series is queued for rendering (or already rendered); fetch each with
// GET /card-batches/{id}/pdf.
func BulkPrintJob(ctx context.Context, act *app.Actor, in app.BulkIDs) (app.BulkResult, error) {
	return bulk(ctx, in, func(ctx context.Context, id int64) error { return QueuePDF(ctx, act, id) })
}

type pdfResult struct {
	BatchID int64  `json:"batch_id"`
	File    string `json:"file"`
	Cards   int    `json:"cards"`
	Pages   int    `json:"pages"`
	Version int64  `json:"version"`
}

func runPDF(ctx context.Context, jc *app.JobContext) (any, error) {
	var p pdfPayload
	if err := json.Unmarshal(jc.Job.Payload, &p); err != nil {
		return nil, err
	}
	t := jc.Tenant
	act, err := app.SystemActor(ctx, t)
	if err != nil {
		return nil, err
	}
	b, err := loadBatch(ctx, t.DB.R, act, p.BatchID)
	if err != nil {
		if app.AsError(err) != nil {
			return pdfResult{BatchID: p.BatchID}, nil // deleted meanwhile
		}
		return nil, err
	}
	if err := os.MkdirAll(pdfDir(t), 0o700); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("batch-%d-v%d.pdf", b.ID, p.Version)
	tmp, err := os.CreateTemp(pdfDir(t), name+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer func() {
		// After the rename there is nothing left to remove; a temp file
		// left by a failed run is never served and goes with the tenant's
		// files: only disk, so logged.
		if err := os.Remove(tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.App.Log.Warn("remove card PDF temp file", "tenant", t.Slug, "file", tmp.Name(), "err", err)
		}
	}()
	cards, pages, err := RenderPDF(ctx, t.DB.R, t.Name, b, tmp, func(done, total int) {
		if done%2400 == 0 {
			jc.NoteProgress(ctx, int64(done), int64(total))
		}
	})
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), pdfPath(t, name)); err != nil {
		return nil, err
	}
	var old string
	err = t.Write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT pdf_file FROM card_batches WHERE id = ?`, b.ID).Scan(&old); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE card_batches SET pdf_file = ?, pdf_version = ?, updated_at = ? WHERE id = ?`, name, p.Version, t.NowText(), b.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	if old != "" && old != name {
		removeStalePDF(t, old)
	}
	jc.NoteProgress(ctx, int64(cards), int64(cards))
	return pdfResult{BatchID: b.ID, File: name, Cards: cards, Pages: pages, Version: p.Version}, nil
}

// Sheet layout (A4 portrait, mm): 3 × 8 cards per page.
const (
	sheetCols  = 3
	sheetRows  = 8
	cardW      = 63.0
	cardH      = 34.0
	marginX    = (210.0 - sheetCols*cardW) / 2
	marginY    = (297.0 - sheetRows*cardH) / 2
	qrSize     = 22.0
	qrPixels   = 4 // pixels per module in the embedded PNG
	qrQuietMod = 2 // quiet zone in modules
)

// RenderPDF writes the card sheet of b's printable cards (unused, in serial
// order) to w: per card the tenant and plan, face value, code (in groups of
// four), serial, login and password for prepaid cards, expiry, and a QR
// code carrying "xr:c:" + code. It returns the card and page counts.
func RenderPDF(ctx context.Context, q app.Querier, tenantName string, b *Batch, w interface{ Write([]byte) (int, error) }, progress func(done, total int)) (int, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND state = 'unused'`, b.ID).Scan(&total); err != nil {
		return 0, 0, err
	}
	cur, err := currency(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(time.Now().UTC())
	pdf.SetTitle(fmt.Sprintf("Cards of series %d", b.ID), false)
	pdf.SetCreator("xr", false)
	pdf.SetAutoPageBreak(false, 0)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	title := tr(tenantName)
	planLine := tr(b.PlanName)
	value := b.FaceValue.String() + " " + cur
	// QR encoding dominates (about a millisecond per card): a block of
	// cards is encoded on every core, then drawn in order.
	n := 0
	block := make([]PrintCard, 0, renderBlock)
	flush := func() error {
		imgs := qrBlock(block)
		for i, pc := range block {
			if n%(sheetCols*sheetRows) == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				pdf.AddPage()
			}
			slot := n % (sheetCols * sheetRows)
			x := marginX + float64(slot%sheetCols)*cardW
			y := marginY + float64(slot/sheetCols)*cardH
			drawCard(pdf, x, y, title, planLine, value, pc, imgs[i])
			n++
			if progress != nil {
				progress(n, total)
			}
		}
		block = block[:0]
		return pdf.Error()
	}
	err = eachPrintable(ctx, q, b, ` WHERE c.batch_id = ? AND c.state = 'unused'`, []any{b.ID}, "", func(pc PrintCard) error {
		block = append(block, pc)
		if len(block) == renderBlock {
			return flush()
		}
		return nil
	})
	if err == nil && len(block) > 0 {
		err = flush()
	}
	if err != nil {
		return 0, 0, err
	}
	if n == 0 {
		pdf.AddPage()
		pdf.SetFont("Helvetica", "", 12)
		pdf.Text(marginX, marginY+10, tr(fmt.Sprintf("Series %d has no printable cards.", b.ID)))
	}
	if err := pdf.Output(w); err != nil {
		return 0, 0, err
	}
	return n, pdf.PageNo(), nil
}

const renderBlock = 480

// qrBlock encodes the QR codes of a block of cards on every core.
func qrBlock(block []PrintCard) [][]byte {
	out := make([][]byte, len(block))
	workers := max(runtime.GOMAXPROCS(0), 1)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(block); i += workers {
				out[i], _ = qrPNG(QRPrefix + block[i].Code)
			}
		}(w)
	}
	wg.Wait()
	return out
}

func drawCard(pdf *fpdf.Fpdf, x, y float64, title, planLine, value string, pc PrintCard, img []byte) {
	pdf.SetDrawColor(160, 160, 160)
	pdf.SetLineWidth(0.2)
	pdf.SetDashPattern([]float64{1, 1}, 0)
	pdf.Rect(x, y, cardW, cardH, "D") // cut lines
	pdf.SetDashPattern([]float64{}, 0)
	tx := x + 3
	pdf.SetTextColor(0, 0, 0)
	pdf.SetFont("Helvetica", "B", 8)
	pdf.Text(tx, y+5, clip(title, 28))
	pdf.SetFont("Helvetica", "", 7)
	pdf.Text(tx, y+9, clip(planLine, 32))
	pdf.SetFont("Helvetica", "B", 11)
	pdf.Text(tx, y+15, value)
	pdf.SetFont("Courier", "B", 9)
	pdf.Text(tx, y+21, groupCode(pc.Code))
	pdf.SetFont("Helvetica", "", 6.5)
	line := y + 25
	if pc.Username != nil {
		pdf.Text(tx, line, "Login: "+*pc.Username+"  Pass: "+*pc.Password)
		line += 3.2
	}
	pdf.Text(tx, line, "S/N "+pc.Serial)
	pdf.Text(tx, line+3.2, "Valid until "+pc.ExpiresAt.Format("2006-01-02"))
	if img != nil {
		name := "qr" + strconv.FormatInt(pc.ID, 10)
		pdf.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(img))
		pdf.ImageOptions(name, x+cardW-qrSize-2, y+(cardH-qrSize)/2, qrSize, qrSize, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	}
}

// groupCode prints a code in groups of four for reading aloud.
func groupCode(code string) string {
	var b strings.Builder
	for i, r := range code {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "."
}

// pngPool reuses the PNG encoder's compressor across cards: a fresh one
// costs about a megabyte.
type pngPool struct{ p sync.Pool }

func (p *pngPool) Get() *png.EncoderBuffer  { b, _ := p.p.Get().(*png.EncoderBuffer); return b }
func (p *pngPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &pngPool{}}

// qrPNG renders payload as an 8-bit grey PNG QR code (error correction M).
// Grey, not paletted: fpdf compresses a palette per image, which costs a
// fresh compressor each.
func qrPNG(payload string) ([]byte, error) {
	code, err := qr.Encode(payload, qr.M, qr.Auto)
	if err != nil {
		return nil, err
	}
	bounds := code.Bounds()
	mods := bounds.Dx() + 2*qrQuietMod
	img := image.NewGray(image.Rect(0, 0, mods*qrPixels, mods*qrPixels))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for my := 0; my < bounds.Dy(); my++ {
		for mx := 0; mx < bounds.Dx(); mx++ {
			r, _, _, _ := code.At(bounds.Min.X+mx, bounds.Min.Y+my).RGBA()
			if r > 0x7fff {
				continue
			}
			px, py := (mx+qrQuietMod)*qrPixels, (my+qrQuietMod)*qrPixels
			for dy := 0; dy < qrPixels; dy++ {
				row := img.Pix[(py+dy)*img.Stride:]
				for dx := 0; dx < qrPixels; dx++ {
					row[px+dx] = 0
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
