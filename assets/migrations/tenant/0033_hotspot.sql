-- Hotspot page sets: what a MikroTik hotspot serves to a guest before login
-- (login.html, status.html...). A set is a shipped template (assets/hotspot)
-- plus the tenant's branding overrides, optional HTML blocks per page
-- (sanitized on write: the stored value is the sanitized one) and custom
-- CSS (checked on write). A set belongs to the manager who created it: a
-- reseller sees the sets of its subtree.

CREATE TABLE hotspot_pages(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  template TEXT NOT NULL,                   -- shipped template key (clean, voucher-first)
  lang TEXT NOT NULL DEFAULT 'en',          -- en | ar (ar pages are dir=rtl)
  title TEXT NOT NULL DEFAULT '',           -- '' = the tenant's name
  color_primary TEXT NOT NULL DEFAULT '',   -- #rrggbb; '' = branding or the template's
  color_background TEXT NOT NULL DEFAULT '',
  color_text TEXT NOT NULL DEFAULT '',
  logo_file_id INTEGER REFERENCES files(id) ON DELETE SET NULL,
  blocks TEXT NOT NULL DEFAULT '{}',        -- JSON {page: sanitized html}
  custom_css TEXT NOT NULL DEFAULT '',
  public_url TEXT NOT NULL DEFAULT '',      -- base of the portal/shop links; '' = the tenant's host
  show_signup INTEGER NOT NULL DEFAULT 1,
  show_shop INTEGER NOT NULL DEFAULT 1,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX hotspot_pages_manager ON hotspot_pages(manager_id);
