package dataimport

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
)

// KindNAS is the kind of a NAS import. A NAS is written by aaa.CreateNAS
// (or UpdateNAS on update), one transaction per row: a NAS list is short,
// and each NAS also enters the instance's address index.
const KindNAS = "nas"

// maxNASRows bounds a NAS import (its rows are held until written).
const maxNASRows = 10_000

var nasFields = []Field{
	{Name: "name", Type: "string", Required: true, Format: "1-128 characters", Example: "core-1",
		Headers: []string{"name", "shortname", "nas name", "nas", "الاسم", "اسم الجهاز"}},
	{Name: "ip", Type: "ip", Required: true, Format: "the address the NAS sends from", Example: "10.9.0.1",
		Headers: []string{"ip", "ip address", "nasname", "address", "host", "عنوان ip", "العنوان"}},
	{Name: "secret", Type: "password", Required: true, Format: "the RADIUS shared secret (16 characters or more advised)", Example: "s3cr3t-shared-key",
		Headers: []string{"secret", "shared secret", "radius secret", "السر", "كلمة السر"}},
	{Name: "type", Type: "enum", Format: strings.Join(aaa.NASTypes, ", ") + " (default mikrotik)", Example: "mikrotik",
		Headers: []string{"type", "vendor", "النوع"}},
	{Name: "coa_port", Type: "integer", Format: "1-65535 (default 3799)", Example: "3799", Headers: []string{"coa_port", "coa port", "ports", "port"}},
	{Name: "description", Type: "string", Example: "main tower", Headers: []string{"description", "comment", "notes", "الوصف"}},
}

// nasRow builds the input of one row, or why it is refused.
func nasRow(v map[string]string) (aaa.NASInput, *ImportRefusalLike) {
	get := func(k string) string { return strings.TrimSpace(v[k]) }
	in := aaa.NASInput{Name: some(get("name")), IP: some(get("ip")), Secret: some(v["secret"]), Description: some(get("description"))}
	switch {
	case in.Name.V == "" || len(in.Name.V) > 128:
		return in, &ImportRefusalLike{"name", "invalid_name"}
	case in.Secret.V == "" || len(in.Secret.V) > 128:
		return in, &ImportRefusalLike{"secret", "invalid_secret"}
	}
	ip, err := netip.ParseAddr(in.IP.V)
	if err != nil {
		return in, &ImportRefusalLike{"ip", "invalid_ip"}
	}
	in.IP.V = ip.Unmap().String()
	if t := strings.ToLower(get("type")); t != "" {
		if t == "other" { // FreeRADIUS's default type
			t = "generic"
		}
		if !slices.Contains(aaa.NASTypes, t) {
			return in, &ImportRefusalLike{"type", "invalid_enum"}
		}
		in.Type = some(aaa.NASType(t))
	}
	if p := get("coa_port"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return in, &ImportRefusalLike{"coa_port", "invalid_port"}
		}
		in.CoAPort = some(n)
	}
	return in, nil
}

// ImportRefusalLike is a field and reason (the NAS kind's refusal).
type ImportRefusalLike struct{ Field, Reason string }

// nasRun imports or validates a NAS table.
func nasRun(ctx context.Context, act *app.Actor, open func() (table, error), format string, spec Spec, dry bool, skip int, cp Checkpoint) (*Report, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	if err := act.Require(aaa.PermNasManage); err != nil {
		return nil, err
	}
	tb, err := open()
	if err != nil {
		return nil, err
	}
	header := tb.Header()
	cols, mapping, err := resolveMapping(nasFields, header, spec.Mapping, false)
	if err != nil {
		tb.Close()
		return nil, err
	}
	r := &run{act: act, spec: spec, cols: cols, header: header}
	rep := &Report{DryRun: dry, Partial: spec.Partial, Format: format, Header: header, Mapping: mapping, Unmapped: []string{}, Preview: []PreviewRow{}, Errors: []LineError{}}
	r.rep = rep
	type row struct {
		line int
		in   aaa.NASInput
		id   int64 // an existing NAS at that address
	}
	var rows []row
	seen := map[string]bool{}
	n := 0
	for {
		line, rec, err := tb.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if n == maxNASRows {
			tb.Close()
			return nil, app.ErrValidation("too_many_rows", "file").With("max", maxNASRows).With("line", line)
		}
		if errors.Is(err, errMalformedRow) {
			n++
			rep.refuse(r.lineError(line, "failed", "", "malformed_csv", ""))
			continue
		}
		if err != nil {
			tb.Close()
			return nil, err
		}
		n++
		v, _ := r.values(rec)
		in, bad := nasRow(v)
		if bad != nil {
			rep.refuse(r.lineError(line, "failed", bad.Field, bad.Reason, in.Name.V))
			continue
		}
		if seen[in.IP.V] {
			rep.refuse(r.lineError(line, "failed", "ip", "duplicate_in_file", in.Name.V))
			continue
		}
		seen[in.IP.V] = true
		var id int64
		err = act.Tenant.DB.R.QueryRowContext(ctx, `SELECT id FROM nas WHERE ip = ?`, in.IP.V).Scan(&id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			tb.Close()
			return nil, err
		}
		if id != 0 && spec.OnDuplicate == "fail" {
			rep.refuse(r.lineError(line, "failed", "ip", "ip_taken", in.Name.V))
			continue
		}
		rows = append(rows, row{line: line, in: in, id: id})
	}
	if err := tb.Close(); err != nil {
		return nil, err
	}
	rep.Rows = n
	if dry || (rep.Failed > 0 && !spec.Partial) {
		for _, rw := range rows {
			switch {
			case rw.id == 0:
				rep.Created++
			case spec.OnDuplicate == "skip":
				rep.Skipped++
			default:
				rep.Updated++
			}
		}
		finishReport(rep)
		return rep, nil
	}
	lines := append([]LineError{}, rep.Errors...)
	if skip > 0 { // resumed: the refused lines were recorded with the first row
		lines = lines[:0]
	}
	stop := false
	for i, rw := range rows {
		if i < skip {
			continue
		}
		var le *LineError
		switch {
		case rw.id != 0 && spec.OnDuplicate == "skip":
			l := r.lineError(rw.line, "skipped", "ip", "", rw.in.Name.V)
			le = &l
			rep.Skipped++
		case rw.id != 0:
			in := rw.in
			in.Secret = app.Opt[string]{Set: in.Secret.V != "", V: in.Secret.V}
			if _, err := aaa.UpdateNAS(ctx, act, rw.id, in); err != nil {
				if le, err = nasFailure(r, rw.line, rw.in.Name.V, err); err != nil {
					return nil, err
				}
			} else {
				l := r.lineError(rw.line, "updated", "", "", rw.in.Name.V)
				le = &l
				rep.Updated++
			}
		default:
			if _, err := aaa.CreateNAS(ctx, act, rw.in); err != nil {
				if le, err = nasFailure(r, rw.line, rw.in.Name.V, err); err != nil {
					return nil, err
				}
			} else {
				rep.Created++
			}
		}
		if le != nil {
			if le.Outcome == "failed" {
				rep.Failed++
			}
			lines = append(lines, *le)
			rep.Errors = append(rep.Errors, *le)
		}
		if cp != nil {
			err := act.Tenant.Write(ctx, func(tx *sql.Tx) error {
				s, err := cp(ctx, tx, i+1, rep, lines)
				stop = s
				return err
			})
			if err != nil {
				return nil, err
			}
			lines = lines[:0]
			if stop && i+1 < len(rows) {
				rep.Cancelled = true
				break
			}
		}
	}
	rep.Committed = true
	finishReport(rep)
	return rep, nil
}

// nasFailure is the line of a refused NAS write; a server fault is
// returned as the error (the job stops and is retried).
func nasFailure(r *run, line int, name string, err error) (*LineError, error) {
	e := app.AsError(err)
	if e == nil || e.Status >= 500 {
		return nil, err
	}
	field := e.Field
	if f, ok := e.Details["field"].(string); ok && field == "" {
		field = f
	}
	l := r.lineError(line, "failed", field, e.Reason, name)
	return &l, nil
}
