package web

import (
	"xr/app"
	"xr/app/aaa"
)

// nasRoutes are the NAS registry (RADIUS clients): DESIGN.md adds them
// where the spec leaves the API open.
func (s *Server) nasRoutes() []Route {
	return []Route{
		{M: "GET", P: "/admin/nas", Access: Staff, Perms: []app.Perm{aaa.PermNasIndex}, H: allCall(aaa.ListNAS), Resp: aaa.NASRecord{}, List: true, Summary: "every NAS (one page); the secret is never returned"},
		{M: "POST", P: "/admin/nas", Status: 201, Access: Staff, Perms: []app.Perm{aaa.PermNasManage}, H: createCall(aaa.CreateNAS), Req: aaa.NASInput{}, Resp: aaa.NASRecord{},
			Reasons: []string{"400 ip_address_not_allowed"},
			Summary: "register a NAS; its IP is unique across the instance (409 ip_taken), and not loopback, link-local or the host's own unless the instance allows private egress; the secret is write-only"},
		{M: "GET", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{aaa.PermNasIndex}, H: idCall(aaa.GetNAS), Resp: aaa.NASRecord{}, Summary: "one NAS (RADIUS client)"},
		{M: "PATCH", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{aaa.PermNasManage}, H: idBodyCall(aaa.UpdateNAS), Req: aaa.NASInput{}, Resp: aaa.NASRecord{},
			Reasons: []string{"400 ip_address_not_allowed"}, Summary: "update a NAS"},
		{M: "DELETE", P: "/admin/nas/{id}", Access: Staff, Perms: []app.Perm{aaa.PermNasManage}, H: idAction(aaa.DeleteNAS), Summary: "delete a NAS"},
		{M: "GET", P: "/admin/nas/{id}/setup", Access: Staff, Perms: []app.Perm{aaa.PermNasIndex}, H: s.nasSetup, Resp: aaa.NASSetup{},
			Summary: "the NAS's RADIUS configuration: vendor=mikrotik|cisco|generic (default: its type), server=address the NAS must reach (default: setting radius_public_address, else the Host), transport=udp|radsec (default udp); the secret is a placeholder"},
		{M: "GET", P: "/admin/nas/{id}/health", Access: Staff, Perms: []app.Perm{aaa.PermNasIndex}, H: s.nasHealth, Resp: aaa.NASHealth{},
			Summary: "what the RADIUS server saw of the NAS since it started: last Access-Request, accounting and CoA, Message-Authenticator, clock skew, bad-authenticator drops in the last hour"},
	}
}
