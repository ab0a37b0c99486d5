package web

import (
	"strconv"

	"xr/app"
	"xr/app/subs"
)

// purchasableAddons is GET /addons[?user_id=N]: the enabled add-ons, those
// allowed on that subscriber's plan when user_id is given.
func (s *Server) purchasableAddons(c *Ctx) error {
	var uid int64
	if v := c.Query().Get("user_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return app.ErrValidation("invalid_value", "user_id")
		}
		uid = n
	}
	out, err := subs.PurchasableAddons(c.R.Context(), c.Actor, uid)
	if err != nil {
		return err
	}
	return oneList(c, out)
}
