package backups

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"

	"xr/app"
	"xr/app/egress"
	"xr/db"
)

// Destinations are where a tenant's verified backups are copied: an
// S3-compatible bucket, an SFTP directory or a local directory on another
// disk. They live in the instance database, keyed by tenant id, so a
// restore or factory reset of the tenant file keeps them. Credentials are
// sealed at rest (backup_destinations.secrets_sealed) and never returned.

// RemoteField is one field a destination kind needs.
type RemoteField struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // string | int | bool | secret | text_secret
	Required bool   `json:"required"`
	Default  any    `json:"default,omitempty"`
	Hint     string `json:"hint,omitempty"`
}

// RemoteType is one kind of destination with its fields.
type RemoteType struct {
	Kind   string        `json:"kind"`
	Label  string        `json:"label"`
	Fields []RemoteField `json:"fields"`
}

// remoteTypes is the catalogue of GET /admin/backup/remote-types.
var remoteTypes = []RemoteType{
	{Kind: "s3", Label: "S3-compatible object storage (AWS, MinIO, Backblaze B2, Wasabi)", Fields: []RemoteField{
		{Name: "endpoint", Type: "string", Required: true, Hint: "host or host:port, e.g. s3.eu-west-1.amazonaws.com"},
		{Name: "bucket", Type: "string", Required: true},
		{Name: "region", Type: "string"},
		{Name: "prefix", Type: "string", Hint: "folder inside the bucket"},
		{Name: "use_tls", Type: "bool", Default: true},
		{Name: "path_style", Type: "bool", Default: false},
		{Name: "access_key", Type: "secret", Required: true},
		{Name: "secret_key", Type: "secret", Required: true},
	}},
	{Kind: "sftp", Label: "SFTP server (host key pinned on first connect)", Fields: []RemoteField{
		{Name: "host", Type: "string", Required: true},
		{Name: "port", Type: "int", Default: 22},
		{Name: "username", Type: "string", Required: true},
		{Name: "path", Type: "string", Hint: "remote directory"},
		{Name: "password", Type: "secret", Hint: "password or private_key"},
		{Name: "private_key", Type: "text_secret", Hint: "OpenSSH private key (unencrypted)"},
	}},
	{Kind: "local", Label: "Directory on another disk", Fields: []RemoteField{
		{Name: "path", Type: "string", Required: true, Hint: "absolute path inside a folder the instance operator allows for this account (<backup dir>/<account>)"},
	}},
}

// RemoteTypes lists the kinds of destination and their fields.
func RemoteTypes(ctx context.Context, act *app.Actor) ([]RemoteType, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return nil, err
	}
	return remoteTypes, nil
}

// RemoteTypeOf is the kind's entry of the catalogue.
func RemoteTypeOf(kind string) (RemoteType, bool) { return remoteType(kind) }

func remoteType(kind string) (RemoteType, bool) {
	for _, rt := range remoteTypes {
		if rt.Kind == kind {
			return rt, true
		}
	}
	return RemoteType{}, false
}

func kinds() []string {
	var out []string
	for _, rt := range remoteTypes {
		out = append(out, rt.Kind)
	}
	return out
}

func isSecret(f RemoteField) bool { return f.Type == "secret" || f.Type == "text_secret" }

// Destination is what the API shows of a destination: never a credential,
// only which secret fields are set.
type Destination struct {
	ID          int64          `json:"id"`
	Name        string         `json:"name"`
	Kind        string         `json:"kind"`
	Config      map[string]any `json:"config"`
	SecretsSet  []string       `json:"secrets_set"`
	HostKey     string         `json:"host_key_fingerprint,omitempty"`
	Enabled     bool           `json:"enabled"`
	FailStreak  int            `json:"fail_streak"`
	Failing     bool           `json:"failing"`
	LastError   string         `json:"last_error"`
	LastOKAt    app.Time       `json:"last_ok_at"`
	ConnectedAt app.Time       `json:"connected_at"`
	CreatedAt   app.Time       `json:"created_at"`
	UpdatedAt   app.Time       `json:"updated_at"`
}

// destination is a stored row with its secrets opened.
type destination struct {
	Destination
	TenantID int64
	secrets  map[string]string
	hostKey  string // authorized_keys form
}

func (d *destination) str(k string) string {
	switch v := d.Config[k].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatInt(int64(v), 10)
	}
	return ""
}

func (d *destination) boolean(k string, def bool) bool {
	if v, ok := d.Config[k].(bool); ok {
		return v
	}
	return def
}

// DestinationInput creates a destination. Config holds the kind's fields
// (remote-types), secrets included.
type DestinationInput struct {
	Name    string         `json:"name"`
	Kind    string         `json:"kind"`
	Config  map[string]any `json:"config"`
	Enabled *bool          `json:"enabled,omitempty"`
}

// DestinationPatch changes one destination (named by provider: its id or
// name) and/or the tenant's encryption passphrase. In config, a key
// present replaces the field (null clears it); a secret left out or given
// as "" keeps its stored value.
type DestinationPatch struct {
	Provider             string          `json:"provider"`
	Name                 app.Opt[string] `json:"name"`
	Config               map[string]any  `json:"config"`
	Enabled              app.Opt[bool]   `json:"enabled"`
	ResetHostKey         bool            `json:"reset_host_key"`
	EncryptionPassphrase app.Opt[string] `json:"encryption_passphrase"`
}

// DestinationList is GET /admin/backup/destinations.
type DestinationList struct {
	Destinations []Destination `json:"destinations"`
	Encrypted    bool          `json:"encrypted"` // a passphrase is set
}

const (
	maxDestinations = 20
	maxFieldLen     = 1024
	maxKeyLen       = 16 << 10
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

func validName(n string) error {
	if n == "" {
		return app.ErrValidation("backup_destination_name_required", "name")
	}
	if !nameRE.MatchString(n) || isDigits(n) {
		return app.ErrValidation("backup_destination_name_invalid", "name")
	}
	return nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// normalize checks cfg against the kind's fields: it returns the plain
// fields and the secret ones. prev (a PATCH) supplies the values of fields
// left out.
func normalize(ctx context.Context, a *app.App, slug, kind string, cfg map[string]any, prev *destination) (map[string]any, map[string]string, error) {
	rt, ok := remoteType(kind)
	if !ok {
		return nil, nil, app.ErrValidation("invalid_enum", "kind").With("allowed", kinds())
	}
	known := map[string]bool{}
	for _, f := range rt.Fields {
		known[f.Name] = true
	}
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return nil, nil, app.ErrValidation("backup_destination_field_unknown", "config."+k)
		}
	}
	plain := map[string]any{}
	secrets := map[string]string{}
	for _, f := range rt.Fields {
		field := "config." + f.Name
		v, given := cfg[f.Name]
		if !given && prev != nil {
			if isSecret(f) {
				if s := prev.secrets[f.Name]; s != "" {
					secrets[f.Name] = s
				}
			} else if pv, ok := prev.Config[f.Name]; ok {
				plain[f.Name] = pv
			}
			continue
		}
		if v == nil {
			continue
		}
		switch f.Type {
		case "bool":
			b, ok := v.(bool)
			if !ok {
				if s, isStr := v.(string); isStr && (s == "true" || s == "false" || s == "on" || s == "") {
					b, ok = s == "true" || s == "on", true
				}
			}
			if !ok {
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
			}
			plain[f.Name] = b
		case "int":
			var n float64
			switch x := v.(type) {
			case float64:
				n = x
			case json.Number:
				f, err := x.Float64()
				if err != nil {
					return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
				}
				n = f
			case string:
				if strings.TrimSpace(x) == "" {
					continue
				}
				i, err := strconv.Atoi(strings.TrimSpace(x))
				if err != nil {
					return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
				}
				n = float64(i)
			default:
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
			}
			if n != math.Trunc(n) || n < 1 || n > 65535 {
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
			}
			plain[f.Name] = n
		default:
			s, ok := v.(string)
			if !ok {
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
			}
			limit := maxFieldLen
			if f.Type == "text_secret" {
				limit = maxKeyLen
			}
			if len(s) > limit || !utf8.ValidString(s) {
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", field)
			}
			if isSecret(f) {
				if s == "" && prev != nil {
					if ps := prev.secrets[f.Name]; ps != "" {
						secrets[f.Name] = ps
					}
					continue
				}
				if s != "" {
					secrets[f.Name] = s
				}
				continue
			}
			s = strings.TrimSpace(s)
			if s != "" {
				plain[f.Name] = s
			}
		}
	}
	for _, f := range rt.Fields {
		if !f.Required {
			continue
		}
		if isSecret(f) {
			if secrets[f.Name] == "" {
				return nil, nil, app.ErrValidation("backup_destination_field_required", "config."+f.Name)
			}
		} else if _, ok := plain[f.Name]; !ok {
			return nil, nil, app.ErrValidation("backup_destination_field_required", "config."+f.Name)
		}
	}
	d := &destination{Destination: Destination{Kind: kind, Config: plain}, secrets: secrets}
	switch kind {
	case "s3":
		host, port, err := splitEndpoint(d.str("endpoint"))
		if err != nil {
			return nil, nil, app.ErrValidation("backup_destination_host_invalid", "config.endpoint")
		}
		if port != "" {
			plain["endpoint"] = net.JoinHostPort(host, port)
		}
		if err := checkHost(ctx, a, host, "config.endpoint"); err != nil {
			return nil, nil, err
		}
		if !validBucket(d.str("bucket")) {
			return nil, nil, app.ErrValidation("backup_destination_field_invalid", "config.bucket")
		}
		if p := d.str("prefix"); p != "" {
			plain["prefix"] = strings.Trim(p, "/")
		}
	case "sftp":
		if err := checkHost(ctx, a, d.str("host"), "config.host"); err != nil {
			return nil, nil, err
		}
		if secrets["password"] == "" && secrets["private_key"] == "" {
			return nil, nil, app.ErrValidation("backup_destination_credentials_required", "config.password")
		}
		if k := secrets["private_key"]; k != "" {
			if _, err := ssh.ParsePrivateKey([]byte(k)); err != nil {
				return nil, nil, app.ErrValidation("backup_destination_field_invalid", "config.private_key")
			}
		}
	case "local":
		p := filepath.Clean(d.str("path"))
		if !filepath.IsAbs(p) {
			return nil, nil, app.ErrValidation("backup_destination_path_not_absolute", "config.path")
		}
		data, err := filepath.Abs(a.Cfg.DataDir)
		if err != nil {
			return nil, nil, err
		}
		if rel, err := filepath.Rel(data, p); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return nil, nil, app.ErrValidation("backup_destination_path_inside_data", "config.path")
		}
		if _, err := confineLocal(a, slug, p); err != nil {
			return nil, nil, err
		}
		plain["path"] = p
	}
	return plain, secrets, nil
}

// splitEndpoint splits host[:port] (no scheme, no path).
func splitEndpoint(ep string) (host, port string, err error) {
	if ep == "" || strings.ContainsAny(ep, "/?#@ ") {
		return "", "", errors.New("invalid endpoint")
	}
	if strings.HasPrefix(ep, "[") || strings.Count(ep, ":") == 1 {
		h, p, err := net.SplitHostPort(ep)
		if err != nil {
			return "", "", err
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", "", errors.New("invalid port")
		}
		return h, p, nil
	}
	return ep, "", nil
}

var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func validBucket(b string) bool { return bucketRE.MatchString(b) }

// checkHost applies the webhook egress rules to a destination host on save.
func checkHost(ctx context.Context, a *app.App, host, field string) error {
	valid, addr, class := egress.CheckHost(ctx, strings.Trim(host, "[]"), a.Cfg.AllowPrivateEgress)
	if !valid {
		return app.ErrValidation("backup_destination_host_invalid", field)
	}
	if class != "" {
		return app.ErrValidation("backup_destination_address_not_allowed", field).With("address", addr).With("class", class)
	}
	return nil
}

// ListDestinations lists the tenant's destinations.
func ListDestinations(ctx context.Context, act *app.Actor) (DestinationList, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return DestinationList{}, err
	}
	a, t := act.Tenant.App, act.Tenant
	ds, err := loadDestinations(ctx, a, t.ID)
	if err != nil {
		return DestinationList{}, err
	}
	out := DestinationList{Destinations: []Destination{}}
	for _, d := range ds {
		out.Destinations = append(out.Destinations, d.Destination)
	}
	p, err := tenantPassphrase(ctx, a, t.ID)
	if err != nil {
		return DestinationList{}, err
	}
	out.Encrypted = p != ""
	return out, nil
}

// CreateDestination adds a destination.
func CreateDestination(ctx context.Context, act *app.Actor, in DestinationInput) (Destination, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return Destination{}, err
	}
	a, t := act.Tenant.App, act.Tenant
	in.Name = strings.TrimSpace(in.Name)
	if err := validName(in.Name); err != nil {
		return Destination{}, err
	}
	if in.Kind == "" {
		return Destination{}, app.ErrValidation("backup_destination_kind_required", "kind")
	}
	plain, secrets, err := normalize(ctx, a, t.Slug, in.Kind, in.Config, nil)
	if err != nil {
		return Destination{}, err
	}
	cfg, sealed, err := encodeConfig(a, plain, secrets)
	if err != nil {
		return Destination{}, err
	}
	enabled := in.Enabled == nil || *in.Enabled
	var id int64
	err = a.Inst.Write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM backup_destinations WHERE tenant_id = ?`, t.ID).Scan(&n); err != nil {
			return err
		}
		if n >= maxDestinations {
			return app.ErrConflict("backup_destination_limit").With("max", maxDestinations)
		}
		now := t.NowText()
		r, err := tx.ExecContext(ctx, `INSERT INTO backup_destinations(tenant_id, name, kind, config, secrets_sealed, enabled, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?)`,
			t.ID, in.Name, in.Kind, cfg, sealed, enabled, now, now)
		if db.IsUnique(err) {
			return app.ErrConflict("backup_destination_name_taken").With("field", "name")
		}
		if err != nil {
			return err
		}
		id, err = r.LastInsertId()
		return err
	})
	if err != nil {
		return Destination{}, err
	}
	d, err := loadDestination(ctx, a, t.ID, id)
	if err != nil {
		return Destination{}, err
	}
	return d.Destination, nil
}

// PatchDestinations changes one destination and/or the encryption
// passphrase, in one transaction, and answers the list.
func PatchDestinations(ctx context.Context, act *app.Actor, in DestinationPatch) (DestinationList, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return DestinationList{}, err
	}
	a, t := act.Tenant.App, act.Tenant
	var pass string
	if in.EncryptionPassphrase.Set && !in.EncryptionPassphrase.Null && in.EncryptionPassphrase.V != "" {
		pass = in.EncryptionPassphrase.V
		if err := validPassphrase(pass); err != nil {
			return DestinationList{}, err
		}
	}
	var d *destination
	var cfg string
	var sealed []byte
	name := ""
	if in.Provider == "" {
		if !in.EncryptionPassphrase.Set {
			return DestinationList{}, app.ErrValidation("backup_destination_provider_required", "provider")
		}
	} else {
		var err error
		if d, err = findDestination(ctx, a, t.ID, in.Provider); err != nil {
			return DestinationList{}, err
		}
		name = d.Name
		if in.Name.Set {
			name = strings.TrimSpace(in.Name.V)
			if err := validName(name); err != nil {
				return DestinationList{}, err
			}
		}
		cfgIn := in.Config
		if cfgIn == nil {
			cfgIn = map[string]any{}
		}
		plain, secrets, err := normalize(ctx, a, t.Slug, d.Kind, cfgIn, d)
		if err != nil {
			return DestinationList{}, err
		}
		if cfg, sealed, err = encodeConfig(a, plain, secrets); err != nil {
			return DestinationList{}, err
		}
	}
	err := a.Inst.Write(ctx, func(tx *sql.Tx) error {
		if d != nil {
			enabled := d.Enabled
			if in.Enabled.Set && !in.Enabled.Null {
				enabled = in.Enabled.V
			}
			q := `UPDATE backup_destinations SET name = ?, config = ?, secrets_sealed = ?, enabled = ?, updated_at = ?`
			args := []any{name, cfg, sealed, enabled, t.NowText()}
			// A new host or port is another server: its key is pinned anew.
			if in.ResetHostKey || (d.Kind == "sftp" && (d.str("host") != jsonField(cfg, "host") || d.str("port") != jsonField(cfg, "port"))) {
				q += `, host_key = '', connected_at = NULL`
			}
			_, err := tx.ExecContext(ctx, q+` WHERE id = ? AND tenant_id = ?`, append(args, d.ID, t.ID)...)
			if db.IsUnique(err) {
				return app.ErrConflict("backup_destination_name_taken").With("field", "name")
			}
			if err != nil {
				return err
			}
		}
		if in.EncryptionPassphrase.Set {
			return setPassphrase(ctx, a, tx, t.ID, pass)
		}
		return nil
	})
	if err != nil {
		return DestinationList{}, err
	}
	return ListDestinations(ctx, act)
}

func jsonField(cfg, k string) string {
	var m map[string]any
	if json.Unmarshal([]byte(cfg), &m) != nil {
		return ""
	}
	d := destination{Destination: Destination{Config: m}}
	return d.str(k)
}

// DeleteDestination removes a destination and its copy states (the copies
// already made stay where they are).
func DeleteDestination(ctx context.Context, act *app.Actor, provider string) error {
	if err := act.Require(app.PermSettings); err != nil {
		return err
	}
	a, t := act.Tenant.App, act.Tenant
	d, err := findDestination(ctx, a, t.ID, provider)
	if err != nil {
		return err
	}
	return a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM backup_destinations WHERE id = ? AND tenant_id = ?`, d.ID, t.ID)
		return err
	})
}

func encodeConfig(a *app.App, plain map[string]any, secrets map[string]string) (string, []byte, error) {
	b, err := json.Marshal(plain)
	if err != nil {
		return "", nil, err
	}
	var sealed []byte
	if len(secrets) > 0 {
		sb, err := json.Marshal(secrets)
		if err != nil {
			return "", nil, err
		}
		sealed = a.Keys.Seal(sb)
	}
	return string(b), sealed, nil
}

const destCols = `id, tenant_id, name, kind, config, secrets_sealed, host_key, enabled, fail_streak, last_error, last_ok_at, connected_at, created_at, updated_at`

func scanDestination(a *app.App, sc interface{ Scan(...any) error }) (*destination, error) {
	d := &destination{}
	var cfg string
	var sealed []byte
	if err := sc.Scan(&d.ID, &d.TenantID, &d.Name, &d.Kind, &cfg, &sealed, &d.hostKey, &d.Enabled, &d.FailStreak, &d.LastError, &d.LastOKAt, &d.ConnectedAt, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(cfg), &d.Config); err != nil {
		return nil, fmt.Errorf("destination %d config: %w", d.ID, err)
	}
	if d.Config == nil {
		d.Config = map[string]any{}
	}
	d.secrets = map[string]string{}
	if len(sealed) > 0 {
		b, err := a.Keys.Open(sealed)
		if err != nil {
			return nil, fmt.Errorf("destination %d secrets: %w", d.ID, err)
		}
		if err := json.Unmarshal(b, &d.secrets); err != nil {
			return nil, fmt.Errorf("destination %d secrets: %w", d.ID, err)
		}
	}
	d.SecretsSet = []string{}
	for k := range d.secrets {
		d.SecretsSet = append(d.SecretsSet, k)
	}
	sort.Strings(d.SecretsSet)
	if d.hostKey != "" {
		if pk, _, _, _, err := ssh.ParseAuthorizedKey([]byte(d.hostKey)); err == nil {
			d.HostKey = ssh.FingerprintSHA256(pk)
		}
	}
	d.Failing = d.FailStreak >= FailStreakAlert
	return d, nil
}

func loadDestinations(ctx context.Context, a *app.App, tenantID int64) ([]*destination, error) {
	rows, err := a.Inst.R.QueryContext(ctx, `SELECT `+destCols+` FROM backup_destinations WHERE tenant_id = ? ORDER BY name, id`, tenantID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*destination
	for rows.Next() {
		d, err := scanDestination(a, rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func loadDestination(ctx context.Context, a *app.App, tenantID, id int64) (*destination, error) {
	d, err := scanDestination(a, a.Inst.R.QueryRowContext(ctx, `SELECT `+destCols+` FROM backup_destinations WHERE id = ? AND tenant_id = ?`, id, tenantID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return d, err
}

// findDestination resolves the {provider} path key: a destination id or
// its name, within the tenant (another tenant's is not found).
func findDestination(ctx context.Context, a *app.App, tenantID int64, provider string) (*destination, error) {
	if isDigits(provider) {
		id, err := strconv.ParseInt(provider, 10, 64)
		if err != nil {
			return nil, app.ErrNotFound()
		}
		return loadDestination(ctx, a, tenantID, id)
	}
	d, err := scanDestination(a, a.Inst.R.QueryRowContext(ctx, `SELECT `+destCols+` FROM backup_destinations WHERE name = ? AND tenant_id = ?`, provider, tenantID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, app.ErrNotFound()
	}
	return d, err
}

// GetDestination reads one destination ({provider}: id or name).
func GetDestination(ctx context.Context, act *app.Actor, provider string) (Destination, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return Destination{}, err
	}
	d, err := findDestination(ctx, act.Tenant.App, act.Tenant.ID, provider)
	if err != nil {
		return Destination{}, err
	}
	return d.Destination, nil
}

// Deleted is the answer of DELETE /admin/backup/destinations/{provider}.
type Deleted struct {
	Provider string `json:"provider"`
	Deleted  bool   `json:"deleted"`
}
