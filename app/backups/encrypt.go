package backups

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"filippo.io/age"

	"xr/app"
)

// Backups leave the box encrypted when the tenant set a passphrase: an age
// file (https://age-encryption.org/v1) with one scrypt recipient. The
// passphrase is sealed at rest (backup_encryption.passphrase_sealed) and
// never returned.

// MinPassphraseLen is the shortest passphrase accepted.
const MinPassphraseLen = 12

// maxPassphraseLen bounds a passphrase.
const maxPassphraseLen = 1024

// ageHeader starts every age file.
var ageHeader = []byte("age-encryption.org/v1\n")

// IsEncrypted tells whether the first bytes of a backup file are an age
// header (restore then needs the passphrase).
func IsEncrypted(head []byte) bool { return bytes.HasPrefix(head, ageHeader) }

// DefaultWorkFactor is age's scrypt work factor (log2 N) for backups:
// age's own default, about a second and 256 MiB once per copy.
const DefaultWorkFactor = 18

type workFactorKey struct{}

// SetEncryptionWorkFactor changes the scrypt work factor of this App's
// encrypted copies (tests lower it; decryption follows the file's).
func SetEncryptionWorkFactor(a *app.App, logN int) { a.SetValue(workFactorKey{}, logN) }

func workFactor(a *app.App) int {
	if n, ok := a.Value(workFactorKey{}).(int); ok {
		return n
	}
	return DefaultWorkFactor
}

// encryptTo writes src encrypted under passphrase to w.
func encryptTo(w io.Writer, src io.Reader, passphrase string, logN int) error {
	rc, err := age.NewScryptRecipient(passphrase)
	if err != nil {
		return err
	}
	rc.SetWorkFactor(logN)
	ew, err := age.Encrypt(w, rc)
	if err != nil {
		return err
	}
	if _, err := io.Copy(ew, src); err != nil {
		return err
	}
	return ew.Close()
}

// DecryptBackup returns the plain backup read from an age file encrypted
// with passphrase. A wrong passphrase (or no scrypt stanza) is a 400
// backup_passphrase_wrong on field passphrase; a stream that is not an age
// file is a 400 backup_not_encrypted. The body is authenticated chunk by
// chunk: a tampered file fails while it is read.
func DecryptBackup(r io.Reader, passphrase string) (io.Reader, error) {
	if passphrase == "" {
		return nil, app.ErrValidation("backup_passphrase_required", "passphrase")
	}
	id, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return nil, app.ErrValidation("backup_passphrase_wrong", "passphrase")
	}
	id.SetMaxWorkFactor(22)
	out, err := age.Decrypt(r, id)
	if err != nil {
		var nm *age.NoIdentityMatchError
		if errors.As(err, &nm) {
			return nil, app.ErrValidation("backup_passphrase_wrong", "passphrase")
		}
		return nil, app.ErrValidation("backup_not_encrypted", "file")
	}
	return out, nil
}

func validPassphrase(p string) error {
	if !utf8.ValidString(p) {
		return app.ErrValidation("invalid_utf8", "encryption_passphrase")
	}
	if utf8.RuneCountInString(p) < MinPassphraseLen {
		return app.ErrValidation("backup_passphrase_too_short", "encryption_passphrase").With("min", MinPassphraseLen)
	}
	if len(p) > maxPassphraseLen {
		return app.ErrValidation("backup_passphrase_too_long", "encryption_passphrase").With("max", maxPassphraseLen)
	}
	return nil
}

// tenantPassphrase is the tenant's backup passphrase, "" when none is set.
func tenantPassphrase(ctx context.Context, a *app.App, tenantID int64) (string, error) {
	var sealed []byte
	err := a.Inst.R.QueryRowContext(ctx, `SELECT passphrase_sealed FROM backup_encryption WHERE tenant_id = ?`, tenantID).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	b, err := a.Keys.Open(sealed)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// setPassphrase stores (or with "" removes) the tenant's passphrase in tx.
func setPassphrase(ctx context.Context, a *app.App, tx *sql.Tx, tenantID int64, p string) error {
	if p == "" {
		_, err := tx.ExecContext(ctx, `DELETE FROM backup_encryption WHERE tenant_id = ?`, tenantID)
		return err
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO backup_encryption(tenant_id, passphrase_sealed, updated_at) VALUES (?,?,?)
		ON CONFLICT(tenant_id) DO UPDATE SET passphrase_sealed = excluded.passphrase_sealed, updated_at = excluded.updated_at`,
		tenantID, a.Keys.Seal([]byte(p)), a.NowText())
	return err
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// decryptFile replaces the age file at path with its plain content
// (DecryptBackup's refusals; nothing is left behind on one).
func decryptFile(path, passphrase string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	plain, err := DecryptBackup(in, passphrase)
	if err != nil {
		return err
	}
	tmp := path + ".plain"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, plain); err != nil {
		removeAll(tmp)
		_ = out.Close()
		return invalidFile(err) // a tampered body fails while it is read
	}
	if err := out.Close(); err != nil {
		removeAll(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
