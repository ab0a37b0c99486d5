package subs

import (
	"bytes"
	"net/url"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"xr/app"
	"xr/internal/xrtest"
)

// An XLSX export opens in excelize (the library a spreadsheet integrator
// would use): the header row, text as text (a formula-looking value stays
// text, never a formula), ids and money as numbers.
func TestXLSXExportOpensWithExcelize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.owner.ManagerID
	alpha := e.user("alpha", root, nil)
	// A formula-looking value, stored as it could arrive from an import.
	e.exec(`UPDATE users SET email = ? WHERE id = ?`, "=cmd|' /C calc'!A0", alpha)
	e.user("bravo", root, nil)
	amt := xrtest.Money("12.5")
	if _, err := Deposit(e.ctx, e.owner, alpha, DepositInput{Amount: &amt, RequestID: "xlsx-dep-1"}); err != nil {
		t.Fatal(err)
	}
	lq, err := app.ParseList(url.Values{}, userListSpec)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := writeExport(e.ctx, e.owner, lq, "xlsx", &buf, nil)
	if err != nil || n != 2 {
		t.Fatalf("export: %d rows, %v", n, err)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 1 || got[0] != xlsxSheet {
		t.Fatalf("sheets %v", got)
	}
	rows, err := f.GetRows(xlsxSheet)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want header + 2: %v", len(rows), rows)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if len(rows[0]) != len(ExportColumns) || rows[0][0] != "id" || rows[0][len(rows[0])-1] != "created_at" {
		t.Fatalf("header %v", rows[0])
	}
	cell := func(name string, row int) string {
		t.Helper()
		c, err := excelize.CoordinatesToCellName(col[name]+1, row)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rowOf := map[string]int{}
	for i, r := range rows[1:] {
		rowOf[r[col["username"]]] = i + 2
	}
	a, b := rowOf["alpha"], rowOf["bravo"]
	if a == 0 || b == 0 {
		t.Fatalf("rows %v", rows)
	}
	// A number cell carries no type attribute (or n); text is inline.
	num := excelize.CellTypeUnset
	checks := []struct {
		name, want string
		row        int
		typ        excelize.CellType
	}{
		{"id", strconv.FormatInt(alpha, 10), a, num},
		{"username", "alpha", a, excelize.CellTypeInlineString},
		{"email", "=cmd|' /C calc'!A0", a, excelize.CellTypeInlineString},
		{"balance", "12.5", a, num},
		{"enabled", "true", a, excelize.CellTypeInlineString},
		{"username", "bravo", b, excelize.CellTypeInlineString},
		{"balance", "0", b, num},
	}
	for _, c := range checks {
		ref := cell(c.name, c.row)
		v, err := f.GetCellValue(xlsxSheet, ref)
		if err != nil || v != c.want {
			t.Errorf("%s (%s) = %q, %v; want %q", ref, c.name, v, err, c.want)
		}
		typ, err := f.GetCellType(xlsxSheet, ref)
		if err != nil || typ != c.typ {
			t.Errorf("%s (%s) type %v, %v; want %v", ref, c.name, typ, err, c.typ)
		}
		if formula, _ := f.GetCellFormula(xlsxSheet, ref); formula != "" {
			t.Errorf("%s holds a formula %q", ref, formula)
		}
	}
}
