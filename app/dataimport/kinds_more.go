package dataimport

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"xr/app"
	"xr/app/cards"
	"xr/app/identity"
	"xr/app/monitoring"
)

// Kinds of the row engine.
const (
	KindManagers    = "managers"
	KindCards       = "cards"
	KindCoordinates = "coordinates"
)

var managerFields = []Field{
	{Name: "username", Type: "string", Required: true, Format: "letters, digits, . _ - @", Example: "reseller1",
		Headers: []string{"username", "user", "user name", "login", "manager", "reseller", "name", "اسم المستخدم", "المستخدم", "اسم الدخول", "المدير", "الموزع"}},
	{Name: "password", Type: "password", Format: "8+ characters of two kinds: required for a new manager unless password_policy=generate (never changed by update)", Example: "Reseller-2026",
		Headers: []string{"password", "pass", "passwd", "pwd", "كلمة المرور", "كلمة السر"}},
	{Name: "parent", Type: "reference", Format: "a manager's username or email in the caller's subtree, or one of an earlier line", Example: "admin",
		Headers: []string{"parent", "parent manager", "parent_manager", "owner", "dealer", "upline", "المدير الأعلى", "الأب", "المالك", "الوكيل"}},
	{Name: "email", Type: "string", Format: "an email address", Example: "sales@example.com",
		Headers: []string{"email", "e-mail", "mail", "البريد الإلكتروني", "البريد"}},
	{Name: "firstname", Type: "string", Example: "Omar", Headers: []string{"firstname", "first name", "given name", "الاسم الأول", "الاسم"}},
	{Name: "lastname", Type: "string", Example: "Said", Headers: []string{"lastname", "last name", "surname", "اسم العائلة", "العائلة"}},
	{Name: "phone", Type: "string", Example: "+9647700000001", Headers: []string{"phone", "mobile", "tel", "الهاتف", "الجوال"}},
	{Name: "company", Type: "string", Example: "North Net", Headers: []string{"company", "shop", "الشركة", "المحل"}},
	{Name: "address", Type: "string", Example: "Main St", Headers: []string{"address", "العنوان"}},
	{Name: "notes", Type: "string", Example: "", Headers: []string{"notes", "note", "comment", "ملاحظات"}},
	{Name: "balance", Type: "money", Format: "major units, at most 3 decimals: the opening balance, moved through the wallet journal (a reseller pays it from its own wallet)", Example: "150.000",
		Headers: []string{"balance", "credit", "wallet", "الرصيد", "المحفظة"}},
	{Name: "debt_limit", Type: "money", Format: "major units, not negative", Example: "50",
		Headers: []string{"debt_limit", "debt limit", "credit limit", "حد الدين"}},
}

var cardFields = []Field{
	{Name: "code", Type: "string", Required: true, Format: "4-32 letters and digits (spaces and dashes dropped, upper-cased)", Example: "4821-7730-1956",
		Headers: []string{"code", "pin", "card code", "voucher", "card", "الرمز", "رمز البطاقة", "الكود"}},
	{Name: "series", Type: "reference", Format: "a ready series the caller sees, by id or name (required unless the series option is given)", Example: "Summer 5GB",
		Headers: []string{"series", "batch", "series_id", "batch_id", "series name", "السلسلة", "الدفعة"}},
	{Name: "serial", Type: "string", Format: "up to 64 characters, unique (default: <series>-<seq>)", Example: "SN-000123",
		Headers: []string{"serial", "serial number", "sn", "الرقم التسلسلي", "التسلسلي"}},
	{Name: "username", Type: "string", Format: "prepaid series only, required there: the RADIUS login", Example: "c8k2m4p9",
		Headers: []string{"username", "login", "user", "اسم المستخدم"}},
	{Name: "password", Type: "password", Format: "prepaid series only, required there", Example: "73019456",
		Headers: []string{"password", "pass", "كلمة المرور"}},
}

var coordinateFields = []Field{
	{Name: "device", Type: "reference", Required: true, Format: "a monitored device or NAS the caller sees, by name or address", Example: "core-1",
		Headers: []string{"device", "name", "nas", "address", "ip", "host", "الجهاز", "الاسم", "العنوان"}},
	{Name: "kind", Type: "enum", Format: "device or nas (default: either)", Example: "nas", Headers: []string{"kind", "type", "النوع"}},
	{Name: "lat", Type: "number", Required: true, Format: "-90 to 90", Example: "33.3152", Headers: []string{"lat", "latitude", "y", "خط العرض"}},
	{Name: "lon", Type: "number", Required: true, Format: "-180 to 180", Example: "44.3661", Headers: []string{"lon", "lng", "long", "longitude", "x", "خط الطول"}},
}

var (
	managersKind    = rowKind{fields: managerFields, begin: beginManagers}
	cardsKind       = rowKind{fields: cardFields, begin: beginCards}
	coordinatesKind = rowKind{fields: coordinateFields, begin: beginCoordinates}
)

func parseMoneyField(field, s string) (app.Money, string) {
	m, err := app.ParseMoney(s)
	switch {
	case err == nil:
		return m, ""
	case errors.Is(err, app.ErrMoneyPrecision):
		return 0, "too_many_decimals"
	case errors.Is(err, app.ErrMoneyRange):
		return 0, "amount_out_of_range"
	}
	return 0, "invalid_" + field
}

// newManagerPassword is a generated password that passes the strength rule.
func newManagerPassword() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789"
	b := make([]byte, 14)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b) + "-7a"
}

// managersWriter imports managers through identity's primitives.
type managersWriter struct {
	act           *app.Actor
	spec          Spec
	defaultParent int64
	// pending are the usernames of earlier lines (a parent may be one).
	pending map[string]bool
}

type managerRow struct {
	in      identity.ManagerInput
	parent  string
	balance app.Money
	id      int64
}

func beginManagers(ctx context.Context, act *app.Actor, spec Spec) (rowWriter, error) {
	if err := act.Require(identity.PermManagersCreate); err != nil {
		return nil, err
	}
	if spec.OnDuplicate == "update" {
		if err := act.Require(identity.PermManagersUpdate); err != nil {
			return nil, err
		}
	}
	w := &managersWriter{act: act, spec: spec, defaultParent: act.ManagerID, pending: map[string]bool{}}
	if spec.Parent != "" {
		id, ok, err := identity.FindManagerForImport(ctx, act.Tenant.DB.R, act, strings.TrimSpace(spec.Parent))
		if err != nil {
			return nil, err
		}
		if id == 0 || !ok {
			return nil, app.ErrValidation("invalid_parent_id", "parent")
		}
		w.defaultParent = id
	}
	return w, nil
}

func (w *managersWriter) ownTx() bool                                     { return false }
func (w *managersWriter) keyField() string                                { return "username" }
func (w *managersWriter) takenReason() string                             { return "username_taken" }
func (w *managersWriter) chunkDone(ctx context.Context, tx *sql.Tx) error { return nil }

func (w *managersWriter) check(ctx context.Context, q app.Querier, v map[string]string, present map[string]bool) (rowCheck, error) {
	get := func(k string) string { return strings.TrimSpace(v[k]) }
	row := &managerRow{parent: get("parent")}
	rc := rowCheck{key: get("username"), data: row}
	refuse := func(f, r string) (rowCheck, error) { rc.field, rc.reason = f, r; return rc, nil }
	opt := func(k string) app.Opt[string] { return app.Opt[string]{Set: present[k] && get(k) != "", V: get(k)} }
	row.in = identity.ManagerInput{Username: app.Opt[string]{Set: true, V: rc.key}, Email: opt("email"), Firstname: opt("firstname"),
		Lastname: opt("lastname"), Phone: opt("phone"), Company: opt("company"), Address: opt("address"), Notes: opt("notes")}
	pw := v["password"]
	if pw == "" && w.spec.PasswordPolicy == "generate" {
		pw = newManagerPassword()
	}
	row.in.Password = app.Opt[string]{Set: true, V: pw}
	if rc.key == "" {
		return refuse("username", "identity_required")
	}
	if pw == "" {
		row.in.Password = app.Opt[string]{}
	}
	if b := get("balance"); b != "" {
		m, bad := parseMoneyField("balance", b)
		if bad != "" {
			return refuse("balance", bad)
		}
		row.balance = m
	}
	if d := get("debt_limit"); d != "" {
		m, bad := parseMoneyField("debt_limit", d)
		if bad != "" {
			return refuse("debt_limit", bad)
		}
		row.in.DebtLimit = app.Opt[app.Money]{Set: true, V: m}
	}
	id, scoped, err := identity.FindManagerForImport(ctx, q, w.act, rc.key)
	if err != nil {
		return rc, err
	}
	if id == 0 && row.in.Email.V != "" {
		if eid, _, err := identity.FindManagerForImport(ctx, q, w.act, row.in.Email.V); err != nil {
			return rc, err
		} else if eid != 0 {
			return refuse("email", "email_taken")
		}
	}
	rc.exists, rc.scoped, row.id = id != 0, scoped, id
	if rc.exists {
		in := row.in
		in.Password = app.Opt[string]{}
		if err := identity.CheckManagerImport(&identity.ManagerInput{Username: in.Username, Password: app.Opt[string]{Set: true, V: "Checked-only-1"},
			Email: in.Email, DebtLimit: in.DebtLimit}); err != nil {
			if e := app.AsError(err); e != nil {
				return refuse(e.Field, e.Reason)
			}
			return rc, err
		}
	} else if err := identity.CheckManagerImport(&row.in); err != nil {
		if e := app.AsError(err); e != nil {
			f := e.Field
			if f == "parent_manager_id" {
				f = "parent"
			}
			return refuse(f, e.Reason)
		}
		return rc, err
	}
	if row.parent != "" && !w.pending[strings.ToLower(row.parent)] {
		pid, ok, err := identity.FindManagerForImport(ctx, q, w.act, row.parent)
		if err != nil {
			return rc, err
		}
		if pid == 0 || !ok {
			return refuse("parent", "invalid_parent_id")
		}
	}
	rc.show = map[string]string{"username": rc.key, "parent": row.parent, "email": row.in.Email.V, "balance": row.balance.String()}
	if !rc.exists {
		w.pending[strings.ToLower(rc.key)] = true
	}
	return rc, nil
}

func (w *managersWriter) write(ctx context.Context, tx *sql.Tx, rc rowCheck) error {
	row := rc.data.(*managerRow)
	if rc.exists {
		in := row.in
		in.Username, in.Password = app.Opt[string]{}, app.Opt[string]{}
		return identity.UpdateImportedManager(ctx, tx, w.act, row.id, in)
	}
	parent := w.defaultParent
	if row.parent != "" {
		pid, ok, err := identity.FindManagerForImport(ctx, tx, w.act, row.parent)
		if err != nil {
			return err
		}
		if pid == 0 || !ok {
			return app.ErrValidation("invalid_parent_id", "parent")
		}
		parent = pid
	}
	row.in.ParentManagerID = app.Opt[int64]{Set: true, V: parent}
	_, err := identity.ImportManager(ctx, tx, w.act, row.in, row.balance, "import")
	return err
}

// cardsWriter imports cards into series through app/cards' primitives.
type cardsWriter struct {
	act    *app.Actor
	series map[string]*cards.ImportSeries // by lower-cased reference
	def    string
	added  map[int64]int // cards added per series in the current chunk
}

type cardRow struct {
	s *cards.ImportSeries
	c cards.CardIn
}

func beginCards(ctx context.Context, act *app.Actor, spec Spec) (rowWriter, error) {
	if err := act.Require(cards.PermCardsGenerateUser); err != nil {
		return nil, err
	}
	w := &cardsWriter{act: act, series: map[string]*cards.ImportSeries{}, def: strings.TrimSpace(spec.Series), added: map[int64]int{}}
	if w.def != "" {
		s, err := cards.FindImportSeries(ctx, act.Tenant.DB.R, act, w.def)
		if err != nil {
			return nil, err
		}
		w.series[strings.ToLower(w.def)] = s
	}
	return w, nil
}

func (w *cardsWriter) ownTx() bool         { return false }
func (w *cardsWriter) keyField() string    { return "code" }
func (w *cardsWriter) takenReason() string { return "code_taken" }

func (w *cardsWriter) chunkDone(ctx context.Context, tx *sql.Tx) error {
	for id, n := range w.added {
		if err := cards.NoteImportedCards(ctx, tx, w.act, id, n); err != nil {
			return err
		}
	}
	clear(w.added)
	return nil
}

func (w *cardsWriter) check(ctx context.Context, q app.Querier, v map[string]string, present map[string]bool) (rowCheck, error) {
	ref := strings.TrimSpace(v["series"])
	if ref == "" {
		ref = w.def
	}
	row := &cardRow{c: cards.CardIn{Code: v["code"], Serial: v["serial"], Username: v["username"], Password: v["password"]}}
	rc := rowCheck{key: cards.NormalizeCode(v["code"]), data: row}
	if ref == "" {
		rc.field, rc.reason = "series", "series_required"
		return rc, nil
	}
	s, ok := w.series[strings.ToLower(ref)]
	if !ok {
		var err error
		s, err = cards.FindImportSeries(ctx, q, w.act, ref)
		if e := app.AsError(err); e != nil && e.Status < 500 {
			rc.field, rc.reason = "series", e.Reason
			return rc, nil
		}
		if err != nil {
			return rc, err
		}
		w.series[strings.ToLower(ref)] = s
	}
	row.s = s
	field, reason, dup, err := cards.CheckImportCard(ctx, q, s, &row.c)
	if err != nil {
		return rc, err
	}
	rc.key = row.c.Code
	rc.field, rc.reason, rc.exists, rc.scoped = field, reason, dup, dup
	rc.show = map[string]string{"code": row.c.Code, "series": s.Name, "serial": row.c.Serial, "username": row.c.Username}
	return rc, nil
}

func (w *cardsWriter) write(ctx context.Context, tx *sql.Tx, rc rowCheck) error {
	row := rc.data.(*cardRow)
	if rc.exists {
		return cards.UpdateImportCard(ctx, tx, row.s, row.c)
	}
	if err := cards.AddImportCard(ctx, tx, row.s, row.c); err != nil {
		return err
	}
	w.added[row.s.ID]++
	return nil
}

// coordinatesWriter sets device coordinates through app/monitoring.
type coordinatesWriter struct {
	act   *app.Actor
	found map[string][]monitoring.Device
}

type coordRow struct {
	d        monitoring.Device
	lat, lon float64
}

func beginCoordinates(ctx context.Context, act *app.Actor, spec Spec) (rowWriter, error) {
	if err := act.Require(monitoring.PermMapEdit); err != nil {
		return nil, err
	}
	if err := act.Require(monitoring.PermMonitoringView); err != nil {
		return nil, err
	}
	return &coordinatesWriter{act: act, found: map[string][]monitoring.Device{}}, nil
}

func (w *coordinatesWriter) ownTx() bool                                     { return true }
func (w *coordinatesWriter) keyField() string                                { return "device" }
func (w *coordinatesWriter) takenReason() string                             { return "coordinates_set" }
func (w *coordinatesWriter) chunkDone(ctx context.Context, tx *sql.Tx) error { return nil }

// lookup is the caller's devices whose name or address is ref (case
// folded), through monitoring's device list.
func (w *coordinatesWriter) lookup(ctx context.Context, ref string) ([]monitoring.Device, error) {
	key := strings.ToLower(ref)
	if d, ok := w.found[key]; ok {
		return d, nil
	}
	lq, err := app.ParseList(url.Values{"q": {ref}, "page_size": {"200"}}, monitoring.ListSpec)
	if err != nil {
		return nil, err
	}
	page, err := monitoring.ListDevices(ctx, w.act, lq)
	if err != nil {
		return nil, err
	}
	var out []monitoring.Device
	for _, d := range page.Rows {
		if strings.EqualFold(d.Name, ref) || strings.EqualFold(d.Address, ref) {
			out = append(out, d)
		}
	}
	w.found[key] = out
	return out, nil
}

func (w *coordinatesWriter) check(ctx context.Context, q app.Querier, v map[string]string, present map[string]bool) (rowCheck, error) {
	ref := strings.TrimSpace(v["device"])
	row := &coordRow{}
	rc := rowCheck{key: ref, data: row}
	refuse := func(f, r string) (rowCheck, error) { rc.field, rc.reason = f, r; return rc, nil }
	if ref == "" {
		return refuse("device", "device_not_found")
	}
	kind := strings.ToLower(strings.TrimSpace(v["kind"]))
	if kind != "" && kind != monitoring.KindDevice && kind != monitoring.KindNAS {
		return refuse("kind", "invalid_enum")
	}
	var err error
	if row.lat, err = strconv.ParseFloat(strings.TrimSpace(v["lat"]), 64); err != nil || row.lat < -90 || row.lat > 90 {
		return refuse("lat", "out_of_range")
	}
	if row.lon, err = strconv.ParseFloat(strings.TrimSpace(v["lon"]), 64); err != nil || row.lon < -180 || row.lon > 180 {
		return refuse("lon", "out_of_range")
	}
	all, err := w.lookup(ctx, ref)
	if err != nil {
		return rc, err
	}
	var match []monitoring.Device
	for _, d := range all {
		if kind == "" || d.Kind == kind {
			match = append(match, d)
		}
	}
	switch len(match) {
	case 0:
		return refuse("device", "device_not_found")
	case 1:
	default:
		return refuse("device", "device_ambiguous")
	}
	row.d = match[0]
	rc.key = row.d.Path()
	rc.exists, rc.scoped = row.d.Lat != nil, true
	rc.show = map[string]string{"device": row.d.Path(), "name": row.d.Name, "lat": strconv.FormatFloat(row.lat, 'f', -1, 64),
		"lon": strconv.FormatFloat(row.lon, 'f', -1, 64)}
	return rc, nil
}

func (w *coordinatesWriter) write(ctx context.Context, tx *sql.Tx, rc rowCheck) error {
	row := rc.data.(*coordRow)
	lat, lon := row.lat, row.lon
	_, err := monitoring.SetGeo(ctx, w.act, row.d.Kind, row.d.Ref, monitoring.GeoInput{Lat: &lat, Lon: &lon})
	if err == nil {
		delete(w.found, strings.ToLower(row.d.Name))
		delete(w.found, strings.ToLower(row.d.Address))
	}
	return err
}
