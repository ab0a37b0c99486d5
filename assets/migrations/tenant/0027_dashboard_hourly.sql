-- The dashboard's money rollup moves from UTC days to UTC hours, so "today"
-- and "this month" follow the tenant's time zone (summed from the hour that
-- holds local midnight), and refunds and card reversals are taken off
-- instead of counted as income:
--   debits (revenue)  = charges (negative movements other than a withdrawal,
--                       a balance reset or a card reversal) less refunds;
--   credits (deposits) = positive movements other than refunds, less card
--                       reversals (the card's money taken back);
--   card_sales         = face value redeemed, less reversed redemptions.
CREATE TABLE dashboard_hourly(
  hour TEXT NOT NULL,                 -- 'YYYY-MM-DD HH' (UTC)
  manager_id INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(hour, manager_id, metric)
) WITHOUT ROWID;
CREATE INDEX dashboard_hourly_metric ON dashboard_hourly(metric, hour);

INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  SELECT substr(l.created_at, 1, 13), COALESCE(u.parent_id, 0), CASE WHEN l.kind LIKE '%refund%' THEN 'debits'
         WHEN l.kind = 'card_reversal' THEN 'credits'
         WHEN l.amount >= 0 THEN 'credits'
         WHEN l.kind IN ('withdraw', 'reset_balance') THEN ''
         ELSE 'debits' END AS m, SUM(CASE WHEN l.kind LIKE '%refund%' OR l.kind = 'card_reversal' THEN -abs(l.amount) ELSE abs(l.amount) END)
  FROM user_ledger l LEFT JOIN users u ON u.id = l.user_id GROUP BY 1, 2, 3 HAVING m <> '';
INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  SELECT substr(r.created_at, 1, 13), COALESCE(r.reseller_id, u.parent_id, r.manager_id, 0), 'card_sales', SUM(r.face_value)
  FROM card_redemptions r LEFT JOIN users u ON u.id = r.user_id WHERE true GROUP BY 1, 2
  ON CONFLICT(hour, manager_id, metric) DO UPDATE SET value = value + excluded.value;
INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  SELECT substr(v.created_at, 1, 13), COALESCE(r.reseller_id, u.parent_id, r.manager_id, 0), 'card_sales', -SUM(r.face_value)
  FROM card_reversals v JOIN card_redemptions r ON r.id = v.redemption_id LEFT JOIN users u ON u.id = r.user_id WHERE true GROUP BY 1, 2
  ON CONFLICT(hour, manager_id, metric) DO UPDATE SET value = value + excluded.value;

DROP TRIGGER dashboard_daily_ledger;
DROP TRIGGER dashboard_daily_cards;
DROP TABLE dashboard_daily;

CREATE TRIGGER dashboard_hourly_ledger AFTER INSERT ON user_ledger BEGIN
  INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  SELECT substr(NEW.created_at, 1, 13), COALESCE((SELECT parent_id FROM users WHERE id = NEW.user_id), 0), m, CASE WHEN NEW.kind LIKE '%refund%' OR NEW.kind = 'card_reversal' THEN -abs(NEW.amount) ELSE abs(NEW.amount) END
  FROM (SELECT CASE WHEN NEW.kind LIKE '%refund%' THEN 'debits'
         WHEN NEW.kind = 'card_reversal' THEN 'credits'
         WHEN NEW.amount >= 0 THEN 'credits'
         WHEN NEW.kind IN ('withdraw', 'reset_balance') THEN ''
         ELSE 'debits' END AS m) WHERE m <> ''
  ON CONFLICT(hour, manager_id, metric) DO UPDATE SET value = value + excluded.value;
END;
CREATE TRIGGER dashboard_hourly_cards AFTER INSERT ON card_redemptions BEGIN
  INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  VALUES (substr(NEW.created_at, 1, 13), COALESCE(NEW.reseller_id, (SELECT parent_id FROM users WHERE id = NEW.user_id), NEW.manager_id, 0),
          'card_sales', NEW.face_value)
  ON CONFLICT(hour, manager_id, metric) DO UPDATE SET value = value + excluded.value;
END;
CREATE TRIGGER dashboard_hourly_reversals AFTER INSERT ON card_reversals BEGIN
  INSERT INTO dashboard_hourly(hour, manager_id, metric, value)
  SELECT substr(NEW.created_at, 1, 13), COALESCE(r.reseller_id, (SELECT parent_id FROM users WHERE id = r.user_id), r.manager_id, 0),
         'card_sales', -r.face_value
  FROM card_redemptions r WHERE r.id = NEW.redemption_id
  ON CONFLICT(hour, manager_id, metric) DO UPDATE SET value = value + excluded.value;
END;
