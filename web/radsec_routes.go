package web

import (
	"context"

	"xr/app"
	"xr/app/aaa"
)

// RadSec (RADIUS over TLS, issue 37): a NAS's client certificate of the
// instance CA (issue, download once, revoke, re-issue) and the CA itself.
// Reading needs what reading NAS needs (prm_nas_index); everything that
// issues, hands out a key or revokes, what managing NAS needs.
func (s *Server) radsecRoutes() []Route {
	read := []app.Perm{aaa.PermNasIndex}
	manage := []app.Perm{aaa.PermNasManage}
	return []Route{
		{M: "GET", P: "/admin/nas/{id}/radsec-cert", Access: Staff, Perms: read, H: idCall(aaa.GetRadSecCert), Resp: aaa.RadSecCert{},
			Reasons: []string{"404 radsec_cert_none"},
			Summary: "the NAS's RadSec client certificate (current, else the last revoked): state awaiting_download, active, expired or revoked; never the key"},
		{M: "POST", P: "/admin/nas/{id}/radsec-cert", Status: 201, Access: Staff, Perms: manage, H: idCreatedCall(aaa.IssueRadSecCert), Resp: aaa.RadSecCert{},
			Reasons: []string{"409 radsec_cert_exists"},
			Summary: "issue the NAS a RadSec client certificate of the instance CA, bound to it (connections presenting it are answered for this NAS, from any address); the key waits for its one download"},
		{M: "POST", P: "/admin/nas/{id}/radsec-cert/reissue", Status: 201, Access: Staff, Perms: manage, H: idCreatedCall(aaa.ReissueRadSecCert), Resp: aaa.RadSecCert{},
			Summary: "revoke the NAS's current RadSec certificate (its connections end) and issue a new one"},
		{M: "POST", P: "/admin/nas/{id}/radsec-cert/download", Access: Staff, Perms: manage, H: idCall(aaa.DownloadRadSecCert), Resp: aaa.RadSecBundle{},
			Reasons: []string{"404 radsec_cert_none", "409 radsec_key_downloaded"},
			Summary: "download the NAS's certificate, private key and the CA once (client_pem, client_key, ca_pem): the key is erased as it is answered"},
		{M: "POST", P: "/admin/nas/{id}/radsec-cert/revoke", Access: Staff, Perms: manage, H: idCall(aaa.RevokeRadSecCert), Resp: aaa.RadSecCert{},
			Reasons: []string{"404 radsec_cert_none"},
			Summary: "revoke the NAS's RadSec certificate: refused from the next handshake, its open connections end at their next packet"},
		{M: "GET", P: "/admin/radsec/ca", Access: Staff, Perms: read, H: actorCall(aaa.GetCA), Resp: aaa.CAInfo{},
			Summary: "the instance CA's certificate (ca.pem): what NAS verify the RadSec server with, and Wi-Fi clients the PEAP/TTLS server when it is the instance's"},
	}
}

// idCreatedCall calls fn with the {id} path variable and answers 201
// Created (a record made under {id} from no body).
func idCreatedCall[T any](fn func(context.Context, *app.Actor, int64) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, id)
		if err != nil {
			return err
		}
		return c.Created(out)
	}
}
