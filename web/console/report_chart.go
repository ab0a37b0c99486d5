package console

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"time"

	"xr/app"
	"xr/web"
)

// Every report page draws its rows over time: the rows of the page summed
// per day (the tenant's day) of the row's first time column that is set
// (the traffic report's day is empty when it groups by subscriber). The
// measure is the report's Chart column when it names one, else its first
// money column, else the number of rows. console.js draws the data with
// the vendored uPlot; the table below stays the accessible copy.

// reportChartData is the chart's JSON, read by console.js: t in unix
// seconds (the day's start), v the day's sum, unit bytes|money|count.
type reportChartData struct {
	T     []int64   `json:"t"`
	V     []float64 `json:"v"`
	Label string    `json:"label"`
	Unit  string    `json:"unit"`
}

// chartAxis picks a report's time columns and measure (measure "" counts
// rows); ok is false when the report has no time column.
func chartAxis(d *reportDef) (timeCols []string, measure, unit string, ok bool) {
	fields := jsonFields(d.Src.row)
	for _, name := range d.Cols {
		idx, has := fields[name]
		if !has {
			continue
		}
		ft := d.Src.row.FieldByIndex(idx).Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == rpTimeType || name == "day" {
			timeCols = append(timeCols, name)
		}
		if measure == "" && d.Chart == "" && ft == rpMoneyType {
			measure, unit = name, "money"
		}
	}
	if d.Chart != "" {
		measure, unit = d.Chart, "count"
		if strings.HasSuffix(d.Chart, "bytes") {
			unit = "bytes"
		}
	}
	if measure == "" {
		unit = "count"
	}
	return timeCols, measure, unit, len(timeCols) > 0
}

// reportChart sums the page's rows per day; "" when the report has no time
// column or no row has a time.
func reportChart(v *web.View, d *reportDef, rows []reflect.Value) string {
	timeCols, measure, unit, ok := chartAxis(d)
	if !ok || len(rows) == 0 {
		return ""
	}
	fields := jsonFields(d.Src.row)
	sums := map[int64]float64{}
	for _, r := range rows {
		var day int64
		ok := false
		for _, c := range timeCols {
			if day, ok = rowDay(r.FieldByIndex(fields[c]), v.Loc); ok {
				break
			}
		}
		if !ok {
			continue
		}
		n := 1.0
		if measure != "" {
			n = measureOf(r.FieldByIndex(fields[measure]))
		}
		sums[day] += n
	}
	if len(sums) == 0 {
		return ""
	}
	out := reportChartData{Unit: unit, Label: v.T("report.rows")}
	if measure != "" {
		out.Label = v.T("report.f." + measure)
	}
	for day := range sums {
		out.T = append(out.T, day)
	}
	sort.Slice(out.T, func(i, j int) bool { return out.T[i] < out.T[j] })
	for _, day := range out.T {
		out.V = append(out.V, sums[day])
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ""
	}
	return string(b)
}

// rowDay is the unix start of the tenant's day of a time or yyyy-MM-dd cell.
func rowDay(x reflect.Value, loc *time.Location) (int64, bool) {
	if x.Kind() == reflect.Pointer {
		if x.IsNil() {
			return 0, false
		}
		x = x.Elem()
	}
	var t time.Time
	switch {
	case x.Type() == rpTimeType:
		t = x.Interface().(app.Time).In(loc)
	case x.Kind() == reflect.String:
		p, err := time.ParseInLocation(app.DateLayout, x.String(), loc)
		if err != nil {
			return 0, false
		}
		t = p
	default:
		return 0, false
	}
	if t.IsZero() {
		return 0, false
	}
	y, m, dd := t.Date()
	return time.Date(y, m, dd, 0, 0, 0, 0, loc).Unix(), true
}

// measureOf reads a measure cell: money in units of the currency, counts
// and bytes as they are.
func measureOf(x reflect.Value) float64 {
	if x.Kind() == reflect.Pointer {
		if x.IsNil() {
			return 0
		}
		x = x.Elem()
	}
	if x.Type() == rpMoneyType {
		return float64(x.Int()) / app.Scale
	}
	switch x.Kind() {
	case reflect.Int, reflect.Int64:
		return float64(x.Int())
	case reflect.Float64:
		return x.Float()
	}
	return 0
}
