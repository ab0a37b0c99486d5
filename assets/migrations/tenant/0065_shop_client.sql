-- Who started an unpaid shop purchase: the client address of a public
-- buyer, u:<id> of a portal subscriber. The cards the unpaid purchases of
-- one client hold together are capped (setting shop_max_held_per_client).
ALTER TABLE shop_sales ADD COLUMN client TEXT NOT NULL DEFAULT '';
CREATE INDEX shop_sales_held_by_client ON shop_sales(client, state);
