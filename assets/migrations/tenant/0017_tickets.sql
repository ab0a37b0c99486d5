-- Support tickets (app/tickets). The number shown as T-000123 is the id
-- (AUTOINCREMENT: never reused). State machine: see app/tickets/state.go.
-- Teams are manager groups. Times are UTC text like every table.
CREATE TABLE ticket_categories(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  description TEXT NOT NULL DEFAULT '',
  team_id INTEGER REFERENCES manager_groups(id) ON DELETE SET NULL,
  portal INTEGER NOT NULL DEFAULT 1,          -- offered on the subscriber portal
  position INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- Custom fields of a category: the rules of form_fields (subscriber forms).
CREATE TABLE ticket_fields(
  id INTEGER PRIMARY KEY,
  category_id INTEGER NOT NULL REFERENCES ticket_categories(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL,
  required INTEGER NOT NULL DEFAULT 0,
  regex TEXT NOT NULL DEFAULT '',
  options TEXT NOT NULL DEFAULT '[]',
  placeholder TEXT NOT NULL DEFAULT '',
  help TEXT NOT NULL DEFAULT '',
  max_length INTEGER NOT NULL DEFAULT 0,
  position INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE(category_id, name)
);
CREATE TABLE ticket_sla_calendars(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  timezone TEXT NOT NULL DEFAULT 'UTC',
  hours TEXT NOT NULL DEFAULT '{}',           -- {"mon":[{"start":"09:00","end":"17:00"}],...}
  holidays TEXT NOT NULL DEFAULT '[]',        -- ["2026-12-25",...] in the calendar's zone
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE ticket_sla_policies(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  priority TEXT,                               -- NULL = any
  category_id INTEGER REFERENCES ticket_categories(id) ON DELETE CASCADE,
  calendar_id INTEGER REFERENCES ticket_sla_calendars(id) ON DELETE RESTRICT, -- NULL = around the clock
  first_response_minutes INTEGER NOT NULL DEFAULT 0,  -- business minutes; 0 = no target
  resolution_minutes INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE tickets(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  subject TEXT NOT NULL,
  category_id INTEGER REFERENCES ticket_categories(id) ON DELETE SET NULL,
  priority TEXT NOT NULL DEFAULT 'normal' CHECK (priority IN ('low','normal','high','urgent')),
  state TEXT NOT NULL DEFAULT 'new' CHECK (state IN ('new','open','pending','snoozed','resolved','closed')),
  snoozed_until TEXT,
  requester_user_id INTEGER REFERENCES users(id),   -- a subscriber requester
  requester_email TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
  requester_name TEXT NOT NULL DEFAULT '',
  user_id INTEGER REFERENCES users(id),             -- the subscriber it concerns (scope)
  assignee_id INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  assigned_at TEXT,
  team_id INTEGER REFERENCES manager_groups(id) ON DELETE SET NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  custom_fields TEXT NOT NULL DEFAULT '{}',
  spam INTEGER NOT NULL DEFAULT 0,
  channel TEXT NOT NULL DEFAULT 'staff',           -- staff, portal
  created_by INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  first_response_due TEXT,
  resolution_due TEXT,
  first_responded_at TEXT,
  resolved_at TEXT,
  closed_at TEXT,
  last_message_at TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX tickets_updated ON tickets(updated_at, id);
CREATE INDEX tickets_state ON tickets(state);
CREATE INDEX tickets_assignee ON tickets(assignee_id, state);
CREATE INDEX tickets_user ON tickets(user_id);
CREATE INDEX tickets_requester ON tickets(requester_user_id, updated_at);
CREATE INDEX tickets_category ON tickets(category_id);
CREATE INDEX tickets_team ON tickets(team_id);
CREATE INDEX tickets_priority ON tickets(priority, updated_at);
CREATE INDEX tickets_created_by ON tickets(created_by);
CREATE INDEX tickets_first_due ON tickets(first_response_due) WHERE first_responded_at IS NULL AND state NOT IN ('resolved','closed');
CREATE INDEX tickets_resolution_due ON tickets(resolution_due) WHERE state NOT IN ('resolved','closed');
CREATE TABLE ticket_messages(
  id INTEGER PRIMARY KEY,
  ticket_id INTEGER NOT NULL REFERENCES tickets(id) ON DELETE CASCADE,
  internal INTEGER NOT NULL DEFAULT 0,         -- 1 = internal note: never shown to the subscriber
  author_manager_id INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  author_user_id INTEGER REFERENCES users(id),
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX ticket_messages_ticket ON ticket_messages(ticket_id, id);
CREATE TABLE ticket_attachments(
  id INTEGER PRIMARY KEY,
  ticket_id INTEGER NOT NULL REFERENCES tickets(id) ON DELETE CASCADE,
  message_id INTEGER REFERENCES ticket_messages(id) ON DELETE SET NULL,
  file_id INTEGER NOT NULL UNIQUE REFERENCES files(id),
  internal INTEGER NOT NULL DEFAULT 0,
  uploaded_by_manager_id INTEGER REFERENCES managers(id) ON DELETE SET NULL,
  uploaded_by_user_id INTEGER REFERENCES users(id),
  created_at TEXT NOT NULL
);
CREATE INDEX ticket_attachments_ticket ON ticket_attachments(ticket_id);
CREATE TABLE ticket_canned_replies(
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL UNIQUE COLLATE NOCASE,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
-- actions: {"state":..., "priority":..., "category_id":..., "assignee_id":..., "add_tags":[...], "remove_tags":[...]}
CREATE TABLE ticket_macros(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  body TEXT NOT NULL DEFAULT '',
  internal INTEGER NOT NULL DEFAULT 0,
  actions TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE ticket_blocklist(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('email','domain','subscriber')),
  value TEXT NOT NULL COLLATE NOCASE,
  action TEXT NOT NULL DEFAULT 'refuse' CHECK (action IN ('refuse','spam')),
  note TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  UNIQUE(kind, value)
);
