-- The online shop: card series published to the storefront at a price,
-- online sales (one per payment of purpose shop_card) with the cards they
-- reserve, and the audit of staff looking at a buyer's contact.

-- A series offered in the storefront. published = 0 keeps the last price.
CREATE TABLE shop_listings(
  batch_id INTEGER PRIMARY KEY REFERENCES card_batches(id) ON DELETE CASCADE,
  price INTEGER NOT NULL CHECK (price > 0),   -- per card, thousandths
  published INTEGER NOT NULL DEFAULT 1,
  published_by INTEGER,
  published_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- One online sale: created (state reserved) with its payment, paid when the
-- payment succeeds (cards sold online, code delivery queued in the same
-- transaction), released when the payment fails or expires (cards back in
-- stock).
CREATE TABLE shop_sales(
  id INTEGER PRIMARY KEY,
  batch_id INTEGER NOT NULL REFERENCES card_batches(id),
  manager_id INTEGER NOT NULL,              -- the series owner (the seller): scope of prm_shop_sales
  user_id INTEGER,                          -- a portal subscriber buyer; NULL for a public buyer
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  unit_price INTEGER NOT NULL,
  amount INTEGER NOT NULL,
  channel TEXT NOT NULL CHECK (channel IN ('email','sms','inbox')),
  contact_sealed BLOB,                      -- the buyer's email or phone, sealed
  contact_masked TEXT NOT NULL DEFAULT '',
  return_token_hash TEXT NOT NULL,          -- SHA-256 of the token of the buyer's return page
  state TEXT NOT NULL DEFAULT 'reserved' CHECK (state IN ('reserved','paid','released')),
  payment_id INTEGER,
  message_id INTEGER,                       -- the last code delivery (outbox message)
  resends INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  paid_at TEXT,
  released_at TEXT
);
CREATE INDEX shop_sales_manager ON shop_sales(manager_id, id);
CREATE INDEX shop_sales_batch ON shop_sales(batch_id);
CREATE UNIQUE INDEX shop_sales_return ON shop_sales(return_token_hash);

-- The cards of a sale. A card is held by at most one live sale.
CREATE TABLE shop_sale_cards(
  sale_id INTEGER NOT NULL REFERENCES shop_sales(id) ON DELETE CASCADE,
  card_id INTEGER NOT NULL REFERENCES cards(id),
  released INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (sale_id, card_id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX shop_sale_cards_live ON shop_sale_cards(card_id) WHERE released = 0;

-- Who looked at a buyer's contact, and who re-sent the codes.
CREATE TABLE shop_sale_audit(
  id INTEGER PRIMARY KEY,
  sale_id INTEGER NOT NULL REFERENCES shop_sales(id) ON DELETE CASCADE,
  manager_id INTEGER NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('reveal','resend')),
  created_at TEXT NOT NULL
);
CREATE INDEX shop_sale_audit_sale ON shop_sale_audit(sale_id, id);

-- The payment of a sale (purpose shop_card, purpose_ref = sale id).
CREATE INDEX payments_shop_sale ON payments(purpose_ref) WHERE purpose = 'shop_card';
