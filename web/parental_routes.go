package web

import (
	"xr/app"
	"xr/app/parental"
	"xr/app/subs"
)

// parentalRoutes are the portal's parental-control and guest-access rows, written once under /portal; twins adds the /user alias.
// The staff rows after them show a subscriber's parental state, clear a forgotten PIN and set a plan's guest limits.
func (s *Server) parentalRoutes() []Route {
	feature := []string{"403 feature_disabled", "503 site_offline"}
	pin := []string{"400 pin_required", "400 invalid_pin_format", "400 current_pin_required", "400 invalid_pin"}
	rows := twins([]Route{
		{M: "GET", P: "/portal/guest/context", Access: Subscriber, Buckets: []string{"portal_guest"}, H: actorCall(parental.GetGuestContext),
			Resp: parental.GuestContext{}, Reasons: feature,
			Summary: "what the subscriber's plan allows for guest access (active at once, longest minutes) and its guest accesses of the last 7 days"},
		{M: "POST", P: "/portal/guest/register", Status: 201, Access: Subscriber, Buckets: []string{"portal_guest"}, H: createCall(parental.RegisterGuest),
			Req: parental.GuestInput{}, Resp: parental.Guest{},
			Reasons: append([]string{"400 minutes_required", "400 guest_minutes_out_of_range", "400 too_long", "409 guest_not_offered", "409 guest_limit_reached"}, feature...),
			Summary: "create a time-limited guest login (username and password for RADIUS) on the subscriber's account, within its plan's guest limits"},
		{M: "GET", P: "/portal/parental", Access: Subscriber, H: actorCall(parental.Get), Resp: parental.State{}, Reasons: feature,
			Summary: "the subscriber's parental control: blocked windows (tenant time zone), pause, PIN set, whether blocked now and until when, the next window"},
		{M: "POST", P: "/portal/parental/pause", Access: Subscriber, H: bodyCall(parental.Pause), Req: parental.PauseInput{}, Resp: parental.State{},
			Reasons: append([]string{"400 minutes_required", "400 pause_minutes_out_of_range"}, feature...),
			Summary: "block access now for N minutes (1..1440; 0 ends a pause): live sessions are disconnected at once"},
		{M: "POST", P: "/portal/parental/pin", Access: Subscriber, H: bodyCall(parental.SetPIN), Req: parental.PINInput{}, Resp: parental.State{},
			Reasons: append(pin, feature...),
			Summary: "set the unlock PIN (4 to 8 digits, stored as an argon2id hash); changing it asks the current one"},
		{M: "PUT", P: "/portal/parental/rules", Access: Subscriber, H: bodyCall(parental.PutRules), Req: parental.RulesInput{}, Resp: parental.State{},
			Reasons: append([]string{"400 too_many_windows", "400 invalid_weekday", "400 invalid_time_of_day"}, feature...),
			Summary: "replace the blocked weekly windows (weekdays, start and end HH:MM in the tenant time zone; end not after start crosses midnight): RADIUS refuses logins inside them and disconnects at their start"},
		{M: "POST", P: "/portal/parental/unlock", Access: Public, Buckets: []string{"portal_parental_unlock"}, H: s.parentalUnlock,
			Req: parental.UnlockInput{}, Resp: parental.Unlocked{},
			Reasons: append([]string{"400 username_required", "400 pin_required", "401 invalid_pin", "400 captcha_required", "400 captcha_invalid", "409 not_blocked"}, feature...),
			Summary: "from a blocked device: the subscriber's username and PIN lift the block in force until its end (the current window only); after 3 wrong PINs a captcha is required"},
	})
	return append(rows,
		Route{M: "GET", P: "/users/{id}/parental", Access: Staff, Perms: []app.Perm{subs.PermUsersIndex}, H: idCall(parental.GetUserParental),
			Resp: parental.UserParental{}, Summary: "a subscriber's parental control (windows, pause, PIN set, failures) and guest accesses"},
		Route{M: "DELETE", P: "/users/{id}/parental/pin", Access: Staff, Perms: []app.Perm{subs.PermUsersUpdate}, H: idCall(parental.ClearPIN),
			Resp: parental.UserParental{}, Reasons: []string{"409 no_pin"},
			Summary: "clear a subscriber's forgotten parental PIN (and its failure count): it can set a new one without the old"},
		Route{M: "GET", P: "/admin/profiles/{id}/guest-limits", Access: Staff, Perms: []app.Perm{subs.PermProfilesIndex}, H: idCall(parental.GetGuestLimits),
			Resp: parental.GuestLimits{}, Summary: "a plan's guest-access limits: accesses active at once (0 = none) and the longest in minutes"},
		Route{M: "PUT", P: "/admin/profiles/{id}/guest-limits", Access: Staff, Perms: []app.Perm{subs.PermProfilesManage}, H: idBodyCall(parental.PutGuestLimits),
			Req: parental.GuestLimitsInput{}, Resp: parental.GuestLimits{}, Reasons: []string{"400 required", "400 out_of_range"},
			Summary: "set a plan's guest-access limits"},
	)
}

func (s *Server) parentalUnlock(c *Ctx) error {
	var in parental.UnlockInput
	if err := c.Decode(&in); err != nil {
		return err
	}
	in.IP = c.IP
	out, err := parental.Unlock(c.R.Context(), c.Tenant, in)
	if err != nil {
		return err
	}
	return c.OK(out)
}
