package backups

import (
	"bytes"
	"context"
	"database/sql"
	"errors"

	"xr/app"
)

// TestResult is the answer of a successful test: every step passed.
type TestResult struct {
	OK          bool        `json:"ok"`
	Steps       []string    `json:"steps"` // the steps that passed, in order
	Destination Destination `json:"destination"`
}

// probeSteps are the steps a test goes through.
func probeSteps(kind string) []string {
	switch kind {
	case "s3":
		return []string{"dns", "tcp", "tls", "auth", "permission"}
	case "sftp":
		return []string{"dns", "tcp", "host_key", "auth", "permission"}
	}
	return []string{"permission"}
}

// TestDestination writes, reads back and deletes a probe object. A failure
// is a 502 whose details name the step (dns, tcp, tls, host_key, auth,
// permission, storage) and a stable reason.
func TestDestination(ctx context.Context, act *app.Actor, provider string) (TestResult, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return TestResult{}, err
	}
	a, t := act.Tenant.App, act.Tenant
	d, err := findDestination(ctx, a, t.ID, provider)
	if err != nil {
		return TestResult{}, err
	}
	d.Enabled = true // a disabled destination can still be tested
	if err := probe(ctx, a, d); err != nil {
		return TestResult{}, apiStepError(err)
	}
	if err := markConnected(ctx, a, d); err != nil {
		return TestResult{}, err
	}
	nd, err := loadDestination(ctx, a, t.ID, d.ID)
	if err != nil {
		return TestResult{}, err
	}
	return TestResult{OK: true, Steps: probeSteps(d.Kind), Destination: nd.Destination}, nil
}

// ConnectDestination connects and authenticates (an SFTP host key is
// pinned then, on the first connect) without writing anything, and
// records when it succeeded.
func ConnectDestination(ctx context.Context, act *app.Actor, provider string) (Destination, error) {
	if err := act.Require(app.PermSettings); err != nil {
		return Destination{}, err
	}
	a, t := act.Tenant.App, act.Tenant
	d, err := findDestination(ctx, a, t.ID, provider)
	if err != nil {
		return Destination{}, err
	}
	d.Enabled = true
	r, err := dialRemote(ctx, a, d)
	if err != nil {
		return Destination{}, apiStepError(err)
	}
	if s3, ok := r.(*s3Remote); ok {
		// A round trip that needs the credentials: S3 has no session.
		if _, err := s3.c.BucketExists(ctx, s3.bucket); err != nil {
			return Destination{}, apiStepError(classifyS3(err))
		}
	}
	if err := r.Close(); err != nil {
		return Destination{}, apiStepError(classifyFS(err))
	}
	if err := markConnected(ctx, a, d); err != nil {
		return Destination{}, err
	}
	nd, err := loadDestination(ctx, a, t.ID, d.ID)
	if err != nil {
		return Destination{}, err
	}
	return nd.Destination, nil
}

func markConnected(ctx context.Context, a *app.App, d *destination) error {
	return a.Inst.Write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE backup_destinations SET connected_at = ? WHERE id = ?`, a.NowText(), d.ID)
		return err
	})
}

func apiStepError(err error) error {
	var se *StepError
	if errors.As(err, &se) {
		return se.APIError()
	}
	return err
}

// probe writes, reads back and deletes a small random object.
func probe(ctx context.Context, a *app.App, d *destination) error {
	var r remote
	var err error
	if d.Kind == "s3" {
		r, err = dialS3(ctx, a, d, 1)
	} else {
		r, err = dialRemote(ctx, a, d)
	}
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // the probe's outcome is decided before
	name := ".xr-probe-" + app.RandomToken(8)
	body := app.RandomBytes(64)
	if err := r.Put(ctx, name, bytes.NewReader(body), int64(len(body))); err != nil {
		return err
	}
	got, err := r.Get(ctx, name)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, body) {
		return stepErr("storage", "backup_destination_probe_mismatch", nil)
	}
	return r.Delete(ctx, name)
}
