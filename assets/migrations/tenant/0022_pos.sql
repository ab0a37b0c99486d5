-- Point of sale: a cashier's shifts, till sales and their lines, and the
-- cards each sale handed over. Money in thousandths. A sale is written in
-- one transaction with every effect it has (cards, wallet, subscriber), so
-- no half-made sale is ever stored.

CREATE TABLE pos_shifts(
  id INTEGER PRIMARY KEY,
  cashier_id INTEGER NOT NULL REFERENCES managers(id),
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed')),
  opening_float INTEGER NOT NULL DEFAULT 0 CHECK (opening_float >= 0),
  expected_cash INTEGER,                     -- set at close: float + cash sales - voided cash sales
  counted_cash INTEGER,                      -- set at close
  difference INTEGER,                        -- counted - expected
  note TEXT NOT NULL DEFAULT '',
  opened_at TEXT NOT NULL,
  closed_at TEXT,
  closed_by INTEGER
);
-- One open shift per cashier.
CREATE UNIQUE INDEX pos_shifts_open ON pos_shifts(cashier_id) WHERE status = 'open';
CREATE INDEX pos_shifts_cashier ON pos_shifts(cashier_id, id);

CREATE TABLE pos_sales(
  id INTEGER PRIMARY KEY,
  shift_id INTEGER NOT NULL REFERENCES pos_shifts(id),
  cashier_id INTEGER NOT NULL REFERENCES managers(id),
  request_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'completed' CHECK (status IN ('completed','voided')),
  payment_method TEXT NOT NULL DEFAULT 'cash' CHECK (payment_method IN ('cash','card','transfer')),
  total INTEGER NOT NULL,                    -- what the customer pays
  cost INTEGER NOT NULL,                     -- what the cashier's wallet was charged
  journal_id INTEGER,                        -- the wallet row of card and top-up lines
  note TEXT NOT NULL DEFAULT '',
  print_count INTEGER NOT NULL DEFAULT 0,
  printed_at TEXT,
  created_at TEXT NOT NULL,
  voided_at TEXT,
  voided_by INTEGER
);
CREATE INDEX pos_sales_shift ON pos_sales(shift_id, id);
CREATE INDEX pos_sales_cashier ON pos_sales(cashier_id, id);
CREATE INDEX pos_sales_created ON pos_sales(created_at);

CREATE TABLE pos_sale_lines(
  id INTEGER PRIMARY KEY,
  sale_id INTEGER NOT NULL REFERENCES pos_sales(id),
  kind TEXT NOT NULL CHECK (kind IN ('card','renewal','addon','topup')),
  ref_id INTEGER NOT NULL DEFAULT 0,         -- card: series; renewal: plan; addon: add-on; topup: 0
  user_id INTEGER,                           -- renewals, add-ons, top-ups: the subscriber
  name TEXT NOT NULL DEFAULT '',
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price INTEGER NOT NULL,               -- what the customer pays per unit
  amount INTEGER NOT NULL,                   -- unit_price × quantity
  cost INTEGER NOT NULL DEFAULT 0,           -- what the cashier's wallet paid for the line
  minted INTEGER NOT NULL DEFAULT 0,         -- card lines: how many cards were minted for the sale
  effect_id INTEGER NOT NULL DEFAULT 0       -- renewal: user_activations.id; addon: user_addons.id; topup: user_ledger.id
);
CREATE INDEX pos_sale_lines_sale ON pos_sale_lines(sale_id);

CREATE TABLE pos_sale_cards(
  sale_id INTEGER NOT NULL REFERENCES pos_sales(id),
  line_id INTEGER NOT NULL REFERENCES pos_sale_lines(id),
  card_id INTEGER NOT NULL,
  PRIMARY KEY (sale_id, card_id)
) WITHOUT ROWID;
CREATE INDEX pos_sale_cards_card ON pos_sale_cards(card_id);
