package dataimport

import (
	"context"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"xr/app"
)

// Field is one importable field of a kind.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // string, password, date, money, ip, mac_list, boolean, reference
	Required bool   `json:"required"`
	Format   string `json:"format"`
	Example  string `json:"example"`
	// Headers are the column names recognised for the field (compared
	// without case, accents, spaces or punctuation), English and Arabic.
	Headers []string `json:"headers"`
}

// Kind is one kind of record with its fields.
type Kind struct {
	Kind   string  `json:"kind"`
	Fields []Field `json:"fields"`
}

// The catalogue: subscribers and NAS here; managers, cards into an
// existing series and device coordinates in kinds_more.go.
var subscriberFields = []Field{
	{Name: "username", Type: "string", Required: true, Format: "letters, digits, . _ - @ (1-64)", Example: "ali.hassan",
		Headers: []string{"username", "user", "user name", "login", "account", "name", "اسم المستخدم", "المستخدم", "الحساب", "اسم الدخول",
			"nom d'utilisateur", "identifiant", "usuario", "benutzername"}},
	{Name: "password", Type: "password", Required: true, Format: "RADIUS password as written (required unless password_policy=generate)", Example: "s3cret",
		Headers: []string{"password", "pass", "passwd", "pwd", "secret", "cleartext-password", "كلمة المرور", "كلمة السر", "الرقم السري",
			"mot de passe", "contraseña", "passwort"}},
	{Name: "profile", Type: "reference", Format: "a plan name the caller may assign", Example: "Home 10M",
		Headers: []string{"profile", "plan", "package", "service", "group", "groupname", "الباقة", "الخطة", "الاشتراك", "الخدمة"}},
	{Name: "parent", Type: "reference", Format: "a manager's username or email in the caller's subtree", Example: "reseller1",
		Headers: []string{"parent", "manager", "reseller", "owner", "dealer", "المدير", "الموزع", "الوكيل", "المالك"}},
	{Name: "expiration", Type: "date", Format: "yyyy-MM-dd[ HH:mm:ss] UTC", Example: "2026-12-31",
		Headers: []string{"expiration", "expiry", "expires", "expire", "expiration date", "expiry date", "end date", "valid until", "تاريخ الانتهاء", "الانتهاء", "ينتهي"}},
	{Name: "email", Type: "string", Format: "an email address", Example: "ali@example.com",
		Headers: []string{"email", "e-mail", "mail", "email address", "البريد الإلكتروني", "البريد", "الايميل", "courriel", "correo"}},
	{Name: "firstname", Type: "string", Example: "Ali",
		Headers: []string{"firstname", "first name", "given name", "forename", "الاسم الأول", "الاسم", "prénom", "nombre"}},
	{Name: "lastname", Type: "string", Example: "Hassan",
		Headers: []string{"lastname", "last name", "surname", "family name", "اسم العائلة", "العائلة", "اللقب", "nom de famille", "apellido"}},
	{Name: "phone", Type: "string", Example: "+9647700000000",
		Headers: []string{"phone", "mobile", "tel", "telephone", "phone number", "mobile number", "الهاتف", "الجوال", "الموبايل", "رقم الهاتف"}},
	{Name: "static_ip", Type: "ip", Format: "an IPv4 address", Example: "10.0.0.20",
		Headers: []string{"static_ip", "static ip", "ip", "ip address", "framed-ip-address", "remote-address", "عنوان ip", "الايبي"}},
	{Name: "mac", Type: "mac_list", Format: "MAC addresses separated by ; (turns the MAC lock on)", Example: "AA:BB:CC:DD:EE:FF",
		Headers: []string{"mac", "mac address", "caller id", "calling-station-id", "العنوان الفيزيائي", "الماك"}},
	{Name: "balance", Type: "money", Format: "major units, at most 3 decimals (opening balance of a new subscriber)", Example: "12.500",
		Headers: []string{"balance", "credit", "الرصيد"}},
	{Name: "contract_id", Type: "string", Example: "C-1001", Headers: []string{"contract_id", "contract", "contract id", "رقم العقد", "العقد"}},
	{Name: "national_id", Type: "string", Example: "199012345", Headers: []string{"national_id", "national id", "id number", "الرقم الوطني", "رقم الهوية"}},
	{Name: "address", Type: "string", Example: "12 Palm St", Headers: []string{"address", "العنوان"}},
	{Name: "notes", Type: "string", Example: "", Headers: []string{"notes", "note", "comment", "comments", "ملاحظات", "ملاحظة"}},
	{Name: "enabled", Type: "boolean", Format: "true/false, yes/no, 1/0, enabled/disabled", Example: "true",
		Headers: []string{"enabled", "active", "status", "مفعل", "الحالة"}},
}

var kinds = []Kind{{Kind: KindSubscribers, Fields: subscriberFields}, {Kind: KindNAS, Fields: nasFields},
	{Kind: KindManagers, Fields: managerFields}, {Kind: KindCards, Fields: cardFields}, {Kind: KindCoordinates, Fields: coordinateFields}}

// KindSubscribers is the kind of a subscriber import.
const KindSubscribers = "subscribers"

// Fields is GET /admin/import/fields.
func Fields(ctx context.Context, act *app.Actor) ([]Kind, error) {
	if err := act.Require(PermToolsImport); err != nil {
		return nil, err
	}
	return kinds, nil
}

func kindFields(kind string) []Field {
	for _, k := range kinds {
		if k.Kind == kind {
			return k.Fields
		}
	}
	return nil
}

// normHeader folds a column name for comparison: lower case, accents and
// Arabic diacritics removed, the Arabic letter variants folded (أ إ آ → ا,
// ة → ه, ى → ي), spaces and punctuation dropped.
func normHeader(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff"))) {
		switch {
		case unicode.Is(unicode.Mn, r):
			continue
		case r == 'أ' || r == 'إ' || r == 'آ' || r == 'ٱ':
			r = 'ا'
		case r == 'ة':
			r = 'ه'
		case r == 'ى':
			r = 'ي'
		case r == 'ـ': // tatweel
			continue
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// suggestMapping maps each field of the kind to the first header naming
// it (field → header as written).
func suggestMapping(fields []Field, header []string) map[string]string {
	m := map[string]string{}
	taken := map[int]bool{}
	for _, f := range fields {
		names := map[string]bool{normHeader(f.Name): true}
		for _, h := range f.Headers {
			names[normHeader(h)] = true
		}
		for i, h := range header {
			if !taken[i] && names[normHeader(h)] {
				m[f.Name] = h
				taken[i] = true
				break
			}
		}
	}
	return m
}

// resolveMapping turns a mapping (field → header, compared like
// normHeader; nil = suggested) into field → column index. Unknown fields
// are 400 unknown_field, a header not in the file 400 unknown_column, a
// required field without a column 400 mapping_required.
func resolveMapping(fields []Field, header []string, mapping map[string]string, generate bool) (map[string]int, map[string]string, error) {
	if len(mapping) == 0 {
		mapping = suggestMapping(fields, header)
	}
	byName := map[string]int{}
	for i, h := range header {
		if _, dup := byName[normHeader(h)]; !dup {
			byName[normHeader(h)] = i
		}
	}
	cols := map[string]int{}
	for field, h := range mapping {
		known := false
		for _, f := range fields {
			known = known || f.Name == field
		}
		if !known {
			return nil, nil, app.ErrValidation("unknown_field", "mapping").With("column", field)
		}
		if h == "" {
			continue
		}
		i, ok := byName[normHeader(h)]
		if !ok {
			return nil, nil, app.ErrValidation("unknown_column", "mapping").With("column", h)
		}
		cols[field] = i
	}
	for _, f := range fields {
		if _, ok := cols[f.Name]; f.Required && !ok && !(f.Name == "password" && generate) {
			return nil, nil, app.ErrValidation("mapping_required", "mapping").With("column", f.Name)
		}
	}
	return cols, mapping, nil
}

// Catalogue is every importable kind with its fields (the CLI's help).
func Catalogue() []Kind { return kinds }
