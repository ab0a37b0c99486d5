package web

import "net/url"

// Temporary: the console's pages still live in package web (they move to
// web/console next); these keep their calls as they were.

type view = View

var (
	canMap     = CanMap
	humanBytes = HumanBytes
	parseForm  = ParseForm
	redirect   = Redirect
	pager      = Pager
	catMoney   = FormMoney
)

func nonEmpty(key, value string) url.Values { return NonEmpty(key, value) }

func (s *Server) newView(c *Ctx, active, titleKey string) *View {
	return s.console.NewView(c, active, titleKey)
}

func (s *Server) render(c *Ctx, status int, page string, v *View) error {
	return s.console.Render(c, status, page, v)
}

func (s *Server) formError(c *Ctx, page string, v *View, err error) error {
	return s.console.FormError(c, page, v, err)
}

func (s *Server) setFlash(c *Ctx, msg string, bad bool) { s.console.SetFlash(c, msg, bad) }

func (s *Server) loginRefused(c *Ctx, page string, v *View, err error) error {
	return s.console.LoginRefused(c, page, v, err)
}

func (s *Server) consoleLang(c *Ctx) string { return s.console.Lang(c) }
