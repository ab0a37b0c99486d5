package dataimport

import (
	"archive/zip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/aaa"
	"xr/app/cards"
	"xr/app/sheet"
)

// DialectCSV is the reseller-panel CSV set (a zip) of GET
// /admin/legacy/export?format=csv.
const DialectCSV = "csv"

// exportPanel writes the caller's subtree as the reseller-panel CSV set:
// managers.csv (below the caller, parents first; an empty parent is the
// caller), profiles.csv (every plan for a tenant-wide caller, else the
// plans its subscribers and series use), users.csv, series.csv and
// cards.csv, streamed into a zip. The set imports back through the
// legacy import (source panel_csv) to the same records.
func exportPanel(ctx context.Context, act *app.Actor, out io.Writer) error {
	t := act.Tenant
	zw := zip.NewWriter(out)
	file := func(name string, header []string) (*sheet.Writer, error) {
		w, err := zw.Create(name + ".csv")
		if err != nil {
			return nil, err
		}
		cw := sheet.NewWriter(w)
		return cw, cw.Write(header)
	}
	err := t.Read(ctx, func(tx *sql.Tx) error {
		names := map[int64]string{}
		owner := func(id int64) string {
			if id == act.ManagerID {
				return ""
			}
			return names[id]
		}
		// managers.csv
		cw, err := file(panelManagers, []string{"username", "parent", "email", "firstname", "lastname", "phone", "company", "address", "notes", "balance", "debt_limit"})
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT m.id, COALESCE(m.username, m.email, ''), COALESCE(m.parent_id, 0), COALESCE(m.email, ''), m.firstname, m.lastname,
			m.phone, m.company, m.address, m.notes, m.balance, m.debt_limit
			FROM managers m JOIN manager_tree mt ON mt.descendant_id = m.id AND mt.ancestor_id = ? WHERE mt.depth > 0 ORDER BY mt.depth, m.id`, act.ManagerID)
		if err != nil {
			return err
		}
		err = csvRows(cw, rows, func() ([]string, error) {
			var id, parent, bal, debt int64
			var user, email, first, last, phone, company, addr, notes string
			if err := rows.Scan(&id, &user, &parent, &email, &first, &last, &phone, &company, &addr, &notes, &bal, &debt); err != nil {
				return nil, err
			}
			names[id] = user
			return []string{user, owner(parent), email, first, last, phone, company, addr, notes, app.Money(bal).String(), app.Money(debt).String()}, nil
		})
		if err != nil {
			return err
		}
		// profiles.csv
		cond, args := act.ScopeSQL("u.parent_id")
		where := "1=1"
		if !act.TenantWide {
			where = `(p.id IN (SELECT u.profile_id FROM users u WHERE u.deleted_at IS NULL AND ` + cond + `))`
		}
		cw, err = file(panelProfiles, []string{"name", "price", "duration_days", "rate_down_kbps", "rate_up_kbps", "bytes_limit", "simultaneous_use", "description"})
		if err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT p.name, p.price, p.duration_days, p.rate_down_kbps, p.rate_up_kbps, p.bytes_limit, p.simultaneous_use, p.description
			FROM profiles p WHERE `+where+` ORDER BY p.name`, args...)
		if err != nil {
			return err
		}
		err = csvRows(cw, rows, func() ([]string, error) {
			var name, desc string
			var price, days, down, up, bytes, sim int64
			if err := rows.Scan(&name, &price, &days, &down, &up, &bytes, &sim, &desc); err != nil {
				return nil, err
			}
			i := func(n int64) string { return strconv.FormatInt(n, 10) }
			return []string{name, app.Money(price).String(), i(days), i(down), i(up), i(bytes), i(sim), desc}, nil
		})
		if err != nil {
			return err
		}
		// users.csv
		cw, err = file(panelUsers, []string{"username", "password", "password_type", "manager", "profile", "expiration", "balance", "email", "firstname",
			"lastname", "phone", "static_ip", "mac", "enabled", "contract_id", "national_id", "address", "notes"})
		if err != nil {
			return err
		}
		rows, err = tx.QueryContext(ctx, `SELECT u.username, u.password_sealed, u.parent_id, COALESCE(p.name, ''), u.expiration, u.balance, u.email, u.firstname,
			u.lastname, u.phone, u.static_ip, u.mac_lock_enabled, u.mac_locked_addrs, u.enabled, u.contract_id, u.national_id, u.address, u.notes
			FROM users u LEFT JOIN profiles p ON p.id = u.profile_id WHERE u.deleted_at IS NULL AND `+cond+` ORDER BY u.id`, args...)
		if err != nil {
			return err
		}
		err = csvRows(cw, rows, func() ([]string, error) {
			var user, plan, email, first, last, phone, ip, macs, contract, national, addr, notes string
			var sealed []byte
			var parent, bal int64
			var exp app.Time
			var macOn, enabled bool
			if err := rows.Scan(&user, &sealed, &parent, &plan, &exp, &bal, &email, &first, &last, &phone, &ip, &macOn, &macs, &enabled,
				&contract, &national, &addr, &notes); err != nil {
				return nil, err
			}
			pw, err := t.App.Keys.Open(sealed)
			if err != nil {
				return nil, err
			}
			pass, kind := string(pw), "cleartext"
			if k, hash, ok := strings.Cut(strings.TrimPrefix(pass, aaa.LegacyHashPrefix), ":"); ok && strings.HasPrefix(pass, aaa.LegacyHashPrefix) {
				pass, kind = hash, k
			}
			expText := ""
			if !exp.IsZero() {
				expText = exp.UTC().Format("2006-01-02 15:04:05")
			}
			mac := ""
			if macOn {
				var list []string
				if err := json.Unmarshal([]byte(macs), &list); err != nil {
					return nil, fmt.Errorf("mac_locked_addrs of %s: %w", user, err)
				}
				mac = strings.Join(list, ";")
			}
			return []string{user, pass, kind, owner(parent), plan, expText, app.Money(bal).String(), email, first, last, phone, ip, mac,
				strconv.FormatBool(enabled), contract, national, addr, notes}, nil
		})
		if err != nil {
			return err
		}
		// series.csv and cards.csv: the series are written first, their
		// cards into a second entry once the first is complete.
		if !act.Can(cards.PermCardsList) {
			return nil
		}
		sw, err := file(panelSeries, []string{"name", "type", "profile", "face_value", "expiration", "owner"})
		if err != nil {
			return err
		}
		seriesName := map[int64]string{}
		used := map[string]bool{}
		// ExportSeries gives every series before the first card: the cards
		// entry opens once the series entry is complete.
		var cardsW *sheet.Writer
		openCards := func() error {
			if cardsW != nil {
				return nil
			}
			sw.Flush()
			if err := sw.Error(); err != nil {
				return err
			}
			cardsW, err = file(panelCards, []string{"series", "code", "serial", "username", "password", "status"})
			return err
		}
		err = cards.ExportSeries(ctx, tx, act, func(s cards.SeriesOut) error {
			name := s.Name
			if name == "" || used[strings.ToLower(name)] {
				name = strings.TrimSpace(fmt.Sprintf("%s #%d", s.Name, s.ID))
			}
			used[strings.ToLower(name)] = true
			seriesName[s.ID] = name
			typ := "refill"
			if s.Prepaid {
				typ = "prepaid"
			}
			return sw.Write([]string{name, typ, s.PlanName, s.FaceValue.String(), s.Expiration.UTC().Format("2006-01-02 15:04:05"), owner(s.Owner)})
		}, func(c cards.CardOut) error {
			if err := openCards(); err != nil {
				return err
			}
			return cardsW.Write([]string{seriesName[c.SeriesID], c.Code, c.Serial, c.Username, c.Password, c.State})
		})
		if err != nil {
			return err
		}
		if err := openCards(); err != nil {
			return err
		}
		cardsW.Flush()
		return cardsW.Error()
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

// csvRows writes one CSV line per row (line scans the current row), then
// closes rows and flushes the writer.
func csvRows(cw *sheet.Writer, rows *sql.Rows, line func() ([]string, error)) error {
	defer rows.Close()
	for rows.Next() {
		rec, err := line()
		if err != nil {
			return err
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
