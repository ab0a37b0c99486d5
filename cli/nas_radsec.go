package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"xr/app"
	"xr/app/aaa"
)

// radsecFiles are the files `xr nas radsec-cert` writes: what a NAS (or
// radsecproxy) needs to connect by RadSec.
var radsecFiles = []string{"client.pem", "client.key", "ca.pem"}

func nasRadSecCertCmd(g *globals) *cobra.Command {
	var tenant, name, out string
	var reissue, revoke bool
	cmd := &cobra.Command{
		Use:   "radsec-cert",
		Short: "issue a NAS its RadSec client certificate and write client.pem, client.key and ca.pem",
		Long: "Issues the NAS a client certificate of the instance CA, bound to it (RadSec connections presenting it are\n" +
			"answered for this NAS, from any address), and writes the certificate, its private key and the CA into --out.\n" +
			"The key is handed out once: xr keeps no copy after this. A NAS that has a certificate needs --reissue (which\n" +
			"revokes the old one at once); --revoke revokes it and writes nothing. Existing files in --out are not overwritten.",
		Example: "  xr nas radsec-cert --tenant acme --name tower-1 --out ./tower-1\n" +
			"  xr nas radsec-cert --tenant acme --name tower-1 --out ./tower-1 --reissue",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !revoke && out == "" {
				return app.ErrValidation("out_required", "out")
			}
			return g.withTenant(tenant, func(a *app.App, t *app.Tenant) error {
				ctx := context.Background()
				act, err := app.SystemActor(ctx, t)
				if err != nil {
					return err
				}
				nas, err := nasByName(ctx, act, name)
				if err != nil {
					return err
				}
				if revoke {
					c, err := aaa.RevokeRadSecCert(ctx, act, nas.ID)
					if err != nil {
						return err
					}
					g.print(c, fmt.Sprintf("revoked the RadSec certificate %s of NAS %d %s", c.Serial, nas.ID, nas.Name))
					return nil
				}
				files, err := claimFiles(out)
				if err != nil {
					return err
				}
				b, err := issueAndDownload(ctx, act, nas.ID, reissue)
				if err == nil {
					err = writeClaimed(files, b)
				}
				if err != nil {
					removeClaimed(files)
					return err
				}
				c := b.Certificate
				g.print(map[string]any{"certificate": c, "files": files},
					fmt.Sprintf("issued RadSec certificate %s for NAS %d %s (valid until %s, sha256 %s)\nwrote %s, %s, %s",
						c.Serial, nas.ID, nas.Name, c.NotAfter.Format("2006-01-02"), c.Fingerprint, files[0], files[1], files[2]))
				return nil
			})
		},
	}
	f := cmd.Flags()
	tenantFlag(cmd, &tenant)
	f.StringVar(&name, "name", "", "the NAS's name")
	f.StringVar(&out, "out", "", "directory to write client.pem, client.key and ca.pem into (created if missing)")
	f.BoolVar(&reissue, "reissue", false, "revoke the NAS's current certificate and issue a new one")
	f.BoolVar(&revoke, "revoke", false, "revoke the NAS's current certificate; write nothing")
	cmd.MarkFlagsMutuallyExclusive("reissue", "revoke")
	required(cmd, "tenant", "name")
	return cmd
}

// nasByName finds a tenant's NAS by its name.
func nasByName(ctx context.Context, act *app.Actor, name string) (*aaa.NASRecord, error) {
	list, err := aaa.ListNAS(ctx, act)
	if err != nil {
		return nil, err
	}
	var found *aaa.NASRecord
	for _, n := range list {
		if n.Name == name {
			if found != nil {
				return nil, app.ErrConflict("nas_name_ambiguous").With("field", "name")
			}
			found = n
		}
	}
	if found == nil {
		return nil, (&app.Error{Code: app.CodeNotFound, Status: 404, Reason: "nas_not_found", Field: "name"}).With("name", name)
	}
	return found, nil
}

func issueAndDownload(ctx context.Context, act *app.Actor, nasID int64, reissue bool) (*aaa.RadSecBundle, error) {
	issue := aaa.IssueRadSecCert
	if reissue {
		issue = aaa.ReissueRadSecCert
	}
	if _, err := issue(ctx, act, nasID); err != nil {
		return nil, err
	}
	return aaa.DownloadRadSecCert(ctx, act, nasID)
}

// claimFiles creates the output directory and the three files, empty and
// exclusively, before anything is issued: the key is handed out once, so
// it must have somewhere to go.
func claimFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var files []string
	for _, name := range radsecFiles {
		p := filepath.Join(dir, name)
		mode := os.FileMode(0o644)
		if name == "client.key" {
			mode = 0o600
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			removeClaimed(files)
			if errors.Is(err, fs.ErrExist) {
				return nil, app.ErrConflict("file_exists").With("field", "out").With("file", p)
			}
			return nil, err
		}
		if err := f.Close(); err != nil {
			removeClaimed(append(files, p))
			return nil, err
		}
		files = append(files, p)
	}
	return files, nil
}

func writeClaimed(files []string, b *aaa.RadSecBundle) error {
	for i, text := range []string{b.ClientPEM, b.ClientKey, b.CAPEM} {
		f, err := os.OpenFile(files[i], os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(text)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// removeClaimed removes files this command created (a refusal leaves
// nothing behind).
func removeClaimed(files []string) {
	for _, p := range files {
		_ = os.Remove(p) // best effort: the error being returned matters more
	}
}
