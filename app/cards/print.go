package cards

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	iso "golang.org/x/text/currency"

	"xr/app"
	"xr/app/studio"
	"xr/app/studio/render"
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
	if err := act.Require(PermCardsDownload); err != nil {
		return nil, err
	}
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
	BatchID int64  `json:"batch_id"`
	Version int64  `json:"version"`
	Design  string `json:"design"` // designKey when queued
}

// designKey names the design and version a series prints with, as
// studio.DesignForPrint picks it: its card_sheet design, else the tenant's
// default one ("id:version"); "" for the built-in design. A stored sheet
// is served only while the key is unchanged, so editing the design (or
// choosing another default) renders the sheet again.
func designKey(ctx context.Context, q app.Querier, designID *int64) (string, error) {
	return studio.PrintKey(ctx, q, designID, render.KindCardSheet)
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
	if err := act.Require(PermCardsDownload); err != nil {
		return nil, nil, err
	}
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
		var name, pdfDesign string
		var version, pdfVersion int64
		var jobID sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT pdf_file, content_version, pdf_version, pdf_design, pdf_job_id FROM card_batches WHERE id = ?`, id).
			Scan(&name, &version, &pdfVersion, &pdfDesign, &jobID); err != nil {
			return err
		}
		design, err := designKey(ctx, tx, b.DesignID)
		if err != nil {
			return err
		}
		if name != "" && pdfVersion == version && pdfDesign == design {
			if st, err := os.Stat(pdfPath(t, name)); err == nil {
				file = &PDFFile{Path: pdfPath(t, name), Name: fmt.Sprintf("cards-%d.pdf", id), ModTime: st.ModTime()}
				return nil
			}
		}
		if jobID.Valid {
			if j, err := app.GetJob(ctx, tx, jobID.Int64); err == nil && (j.State == "queued" || j.State == "running") {
				var p pdfPayload
				if json.Unmarshal(j.Payload, &p) == nil && p.Version == version && p.Design == design {
					state = &PDFState{BatchID: id, JobID: j.ID, State: j.State}
					return nil
				}
			}
		}
		job, err := app.EnqueueJob(ctx, tx, PDFKind, pdfPayload{BatchID: id, Version: version, Design: design}, now, act.ManagerID, 3)
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
	if err := act.Require(PermCardsDownload); err != nil {
		return app.BulkResult{}, err
	}
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
	cards, pages, err := RenderPDF(ctx, t, t.Name, b, tmp, func(done, total int) {
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
		_, err := tx.ExecContext(ctx, `UPDATE card_batches SET pdf_file = ?, pdf_version = ?, pdf_design = ?, updated_at = ? WHERE id = ?`, name, p.Version, p.Design,
			t.NowText(), b.ID)
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

// RenderPDF writes the card sheet of b's printable cards (unused, in serial
// order) to w through the render engine, with the series' design (the
// tenant's default card_sheet design when it has none, else the built-in
// one): one card per printable card, with the variables of cardVars. It
// returns the card and page counts.
func RenderPDF(ctx context.Context, t *app.Tenant, tenantName string, b *Batch, w io.Writer, progress func(done, total int)) (int, int, error) {
	q := t.DB.R
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cards WHERE batch_id = ? AND state = 'unused'`, b.ID).Scan(&total); err != nil {
		return 0, 0, err
	}
	cur, err := currency(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	d, imgs, err := studio.DesignForPrint(ctx, t, q, b.DesignID, render.KindCardSheet)
	if err != nil {
		return 0, 0, err
	}
	sheet, err := render.NewSheet(d, imgs)
	if err != nil {
		return 0, 0, err
	}
	n := 0
	err = eachPrintable(ctx, q, b, ` WHERE c.batch_id = ? AND c.state = 'unused'`, []any{b.ID}, "", func(pc PrintCard) error {
		if n%renderBlock == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := sheet.Add(cardVars(pc, tenantName, cur)); err != nil {
			return err
		}
		n++
		if progress != nil {
			progress(n, total)
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if _, err := sheet.WriteTo(w); err != nil {
		return 0, 0, err
	}
	per := cardsPerPage(d)
	return n, max((n+per-1)/per, 1), nil
}

const renderBlock = 480

// cardVars are the variables of one printed card (the card_sheet kind's
// catalogue): code, serial, username and password (empty on a refill
// card), plan, face_value with the tenant currency, currency, expiration
// (yyyy-MM-dd, UTC), tenant_name and qr_payload ("xr:c:" + code).
func cardVars(pc PrintCard, tenantName, cur string) render.Vars {
	v := render.Vars{
		"code":        pc.Code,
		"serial":      pc.Serial,
		"username":    "",
		"password":    "",
		"plan":        pc.PlanName,
		"face_value":  faceValue(pc.FaceValue, cur),
		"currency":    cur,
		"expiration":  "",
		"tenant_name": tenantName,
		"qr_payload":  pc.QRPayload,
	}
	if pc.Username != nil {
		v["username"], v["password"] = *pc.Username, *pc.Password
	}
	if !pc.ExpiresAt.IsZero() {
		v["expiration"] = pc.ExpiresAt.Format("2006-01-02")
	}
	return v
}

// faceValue formats an amount with the ISO 4217 decimals of cur (the
// amount as stored, up to three decimals, for an unknown code).
func faceValue(m app.Money, cur string) string {
	scale := 3
	if u, err := iso.ParseISO(cur); err == nil {
		scale, _ = iso.Standard.Rounding(u)
	}
	scale = min(max(scale, 0), 3)
	v := int64(m)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	div := int64(1)
	for i := 0; i < 3-scale; i++ {
		div *= 10
	}
	v = (v + div/2) / div // half up to the currency's unit
	unit := int64(1)
	for i := 0; i < scale; i++ {
		unit *= 10
	}
	if scale == 0 {
		return sign + strconv.FormatInt(v, 10)
	}
	return fmt.Sprintf("%s%d.%0*d", sign, v/unit, scale, v%unit)
}

// cardsPerPage is how many cards of a card_sheet design fit on one page:
// the grid of Card (with its gap) inside the page less its margin.
func cardsPerPage(d *render.Design) int {
	if d == nil || d.Card == nil || d.Card.Width <= 0 || d.Card.Height <= 0 {
		return 1
	}
	fit := func(page, card float64) int {
		return max(int((page-2*d.Page.Margin+d.Card.Gap)/(card+d.Card.Gap)+1e-9), 1)
	}
	return fit(d.Page.Width, d.Card.Width) * fit(d.Page.Height, d.Card.Height)
}
