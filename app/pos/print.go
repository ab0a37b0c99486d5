package pos

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"xr/app"
)

// Layout is a thermal receipt layout: the paper, its printable width and
// how many characters of a monospaced font fit on one line. Lines holds
// the receipt rendered for it, one printed line each, ready for a client
// (ESC/POS or the browser) to print.
type Layout struct {
	Name         string   `json:"name"` // 58mm, 80mm
	PaperMM      int      `json:"paper_mm"`
	PrintableMM  int      `json:"printable_mm"`
	CharsPerLine int      `json:"chars_per_line"`
	Lines        []string `json:"lines"`
}

// PrintJob is GET /pos/sales/{id}/print-job: the receipt's data (header,
// lines with the card codes of card lines, totals) and the two thermal
// layouts rendered as text.
type PrintJob struct {
	Sale       Sale     `json:"sale"`
	TenantName string   `json:"tenant_name"`
	Currency   string   `json:"currency"`
	Layouts    []Layout `json:"layouts"`
}

// thermal layouts: 58 mm paper prints 48 mm (32 columns of Font A), 80 mm
// paper prints 72 mm (48 columns).
var thermal = []Layout{{Name: "58mm", PaperMM: 58, PrintableMM: 48, CharsPerLine: 32}, {Name: "80mm", PaperMM: 80, PrintableMM: 72, CharsPerLine: 48}}

// GetPrintJob is GET /pos/sales/{id}/print-job.
func GetPrintJob(ctx context.Context, act *app.Actor, id int64) (*PrintJob, error) {
	if err := act.Require(PermPosSell); err != nil {
		return nil, err
	}
	s, err := GetSale(ctx, act, id)
	if err != nil {
		return nil, err
	}
	pj := &PrintJob{Sale: *s}
	t := act.Tenant
	pj.TenantName = t.Name
	if pj.Currency, err = app.SettingCurrency.Get(ctx, t.DB.R); err != nil {
		return nil, err
	}
	for _, l := range thermal {
		l.Lines = render(pj, l.CharsPerLine)
		pj.Layouts = append(pj.Layouts, l)
	}
	return pj, nil
}

// render lays a receipt out in width columns.
func render(pj *PrintJob, width int) []string {
	var out []string
	center := func(s string) {
		s = clip(s, width)
		pad := (width - utf8.RuneCountInString(s)) / 2
		out = append(out, strings.Repeat(" ", pad)+s)
	}
	pair := func(l, r string) {
		r = clip(r, width)
		l = clip(l, width-utf8.RuneCountInString(r)-1)
		out = append(out, l+strings.Repeat(" ", width-utf8.RuneCountInString(l)-utf8.RuneCountInString(r))+r)
	}
	rule := func() { out = append(out, strings.Repeat("-", width)) }
	s := pj.Sale
	center(pj.TenantName)
	center(fmt.Sprintf("Sale #%d", s.ID))
	pair(s.CreatedAt.Format("2006-01-02 15:04"), s.Cashier)
	if s.Status == "voided" {
		center("*** VOIDED ***")
	}
	rule()
	for _, l := range s.Lines {
		pair(fmt.Sprintf("%d x %s", l.Quantity, l.Name), l.Amount.String())
		for _, c := range l.Cards {
			pair("  code", c.Code)
			if c.Username != "" {
				pair("  login", c.Username+" / "+c.Password)
			}
			pair("  serial", c.Serial)
		}
	}
	rule()
	pair("TOTAL "+pj.Currency, s.Total.String())
	pair("Paid", s.PaymentMethod)
	return out
}

func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// Printed is POST /pos/sales/{id}/printed: stamps printed_at and counts
// the print.
func Printed(ctx context.Context, act *app.Actor, id int64) (*Sale, error) {
	if err := act.Require(PermPosSell); err != nil {
		return nil, err
	}
	t := act.Tenant
	err := t.Write(ctx, func(tx *sql.Tx) error {
		if _, err := loadSale(ctx, tx, act, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE pos_sales SET print_count = print_count + 1, printed_at = ? WHERE id = ?`, t.NowText(), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return GetSale(ctx, act, id)
}
