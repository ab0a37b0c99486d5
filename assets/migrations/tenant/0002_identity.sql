-- Managers (staff and resellers), their tree, roles, credentials and wallet journal.
CREATE TABLE manager_groups(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  created_at TEXT NOT NULL
);

CREATE TABLE managers(
  id INTEGER PRIMARY KEY,
  parent_id INTEGER REFERENCES managers(id),
  username TEXT COLLATE NOCASE,
  email TEXT COLLATE NOCASE,
  password_hash TEXT NOT NULL,
  firstname TEXT NOT NULL DEFAULT '',
  lastname TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  company TEXT NOT NULL DEFAULT '',
  address TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT '',
  language TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended')),
  balance INTEGER NOT NULL DEFAULT 0,          -- thousandths
  debt_limit INTEGER NOT NULL DEFAULT 0,       -- thousandths; how far below zero the wallet may go
  discount_rate INTEGER NOT NULL DEFAULT 0,    -- thousandths of a percent
  points_balance INTEGER NOT NULL DEFAULT 0,
  group_id INTEGER REFERENCES manager_groups(id) ON DELETE SET NULL,
  custom_fields TEXT NOT NULL DEFAULT '{}',
  avatar TEXT NOT NULL DEFAULT '',
  totp_secret BLOB,                             -- sealed
  totp_pending BLOB,                            -- sealed, between setup and enable
  totp_enabled INTEGER NOT NULL DEFAULT 0,
  totp_last_step INTEGER NOT NULL DEFAULT 0,    -- last accepted time step: a code is never accepted twice
  password_changed_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  CHECK (username IS NOT NULL OR email IS NOT NULL)
);
CREATE UNIQUE INDEX managers_username ON managers(username) WHERE username IS NOT NULL;
CREATE UNIQUE INDEX managers_email ON managers(email) WHERE email IS NOT NULL;
CREATE INDEX managers_parent ON managers(parent_id);
-- Exactly one root (the tenant owner): the only manager without a parent.
CREATE UNIQUE INDEX managers_one_root ON managers((parent_id IS NULL)) WHERE parent_id IS NULL;

-- Closure table of the manager tree: every (ancestor, descendant) pair,
-- including (m, m) at depth 0. Subtree scoping is one indexed lookup.
CREATE TABLE manager_tree(
  ancestor_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  descendant_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  depth INTEGER NOT NULL,
  PRIMARY KEY (ancestor_id, descendant_id)
) WITHOUT ROWID;
CREATE INDEX manager_tree_desc ON manager_tree(descendant_id, ancestor_id);

CREATE TABLE recovery_codes(
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  code_hash BLOB NOT NULL,
  used_at TEXT,
  PRIMARY KEY (manager_id, code_hash)
) WITHOUT ROWID;

CREATE TABLE roles(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE COLLATE NOCASE,
  description TEXT NOT NULL DEFAULT '',
  is_system INTEGER NOT NULL DEFAULT 0,
  template_key TEXT,
  immutable INTEGER NOT NULL DEFAULT 0,
  portal_permissions TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE role_permissions(
  role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  code TEXT NOT NULL,
  PRIMARY KEY (role_id, code)
) WITHOUT ROWID;
CREATE TABLE manager_roles(
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  role_id INTEGER NOT NULL REFERENCES roles(id),
  PRIMARY KEY (manager_id, role_id)
) WITHOUT ROWID;
CREATE INDEX manager_roles_role ON manager_roles(role_id);

-- Staff sessions: one row per issued token id (jti).
CREATE TABLE auth_sessions(
  jti TEXT PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  audience TEXT NOT NULL,
  impersonator_id INTEGER,
  parent_jti TEXT,                 -- the impersonator's own session, for exit
  ip TEXT NOT NULL DEFAULT '',
  user_agent TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  last_seen_at TEXT,
  revoked_at TEXT,
  refresh_hash BLOB UNIQUE,        -- SHA-256 of the refresh token; NULL once used
  refresh_expires_at TEXT
) WITHOUT ROWID;
CREATE INDEX auth_sessions_manager ON auth_sessions(manager_id);

CREATE TABLE api_tokens(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash BLOB NOT NULL UNIQUE,
  token_sealed BLOB NOT NULL,
  hint TEXT NOT NULL,              -- first characters, to recognise a token in lists
  scopes TEXT NOT NULL DEFAULT '[]',
  full_access INTEGER NOT NULL DEFAULT 0,
  expires_at TEXT,
  disabled INTEGER NOT NULL DEFAULT 0,
  revoked_at TEXT,
  last_used_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX api_tokens_manager ON api_tokens(manager_id);

CREATE TABLE push_tokens(
  manager_id INTEGER NOT NULL REFERENCES managers(id) ON DELETE CASCADE,
  token TEXT NOT NULL,
  platform TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  PRIMARY KEY (manager_id, token)
) WITHOUT ROWID;

-- The manager wallet journal: append-only, running balance, same
-- transaction as managers.balance.
CREATE TABLE manager_journal(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  kind TEXT NOT NULL,
  amount INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  actor_id INTEGER,
  ref_type TEXT NOT NULL DEFAULT '',
  ref_id INTEGER,
  document_no TEXT NOT NULL DEFAULT '',
  note TEXT NOT NULL DEFAULT '',
  request_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX manager_journal_manager ON manager_journal(manager_id, id);
CREATE TRIGGER manager_journal_no_update BEFORE UPDATE ON manager_journal BEGIN SELECT RAISE(ABORT, 'manager_journal is append-only'); END;
CREATE TRIGGER manager_journal_no_delete BEFORE DELETE ON manager_journal BEGIN SELECT RAISE(ABORT, 'manager_journal is append-only'); END;

CREATE TABLE manager_points(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  delta INTEGER NOT NULL,
  balance_after INTEGER NOT NULL,
  actor_id INTEGER,
  note TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE TRIGGER manager_points_no_update BEFORE UPDATE ON manager_points BEGIN SELECT RAISE(ABORT, 'manager_points is append-only'); END;
CREATE TRIGGER manager_points_no_delete BEFORE DELETE ON manager_points BEGIN SELECT RAISE(ABORT, 'manager_points is append-only'); END;

-- Credit extended to a manager (topup on loan) and its repayments; the
-- outstanding debt is the running total. Append-only.
CREATE TABLE manager_loans(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  kind TEXT NOT NULL CHECK (kind IN ('loan','repayment')),
  amount INTEGER NOT NULL,
  outstanding_after INTEGER NOT NULL,
  actor_id INTEGER,
  journal_id INTEGER REFERENCES manager_journal(id),
  request_id TEXT,
  note TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE INDEX manager_loans_manager ON manager_loans(manager_id, id);
CREATE TRIGGER manager_loans_no_update BEFORE UPDATE ON manager_loans BEGIN SELECT RAISE(ABORT, 'manager_loans is append-only'); END;
CREATE TRIGGER manager_loans_no_delete BEFORE DELETE ON manager_loans BEGIN SELECT RAISE(ABORT, 'manager_loans is append-only'); END;

-- Documents issued for wallet movements: invoices (deposits, top-ups) and
-- receipts (payments received).
CREATE TABLE manager_documents(
  id INTEGER PRIMARY KEY,
  manager_id INTEGER NOT NULL REFERENCES managers(id),
  kind TEXT NOT NULL CHECK (kind IN ('invoice','receipt')),
  number TEXT NOT NULL UNIQUE,
  amount INTEGER NOT NULL,
  journal_id INTEGER REFERENCES manager_journal(id),
  loan_id INTEGER REFERENCES manager_loans(id),
  actor_id INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX manager_documents_manager ON manager_documents(manager_id, kind, id);
