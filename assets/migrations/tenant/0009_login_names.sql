-- Subscriber usernames and prepaid-card logins share one RADIUS namespace:
-- a subscriber named like a card login would shadow the card. The cards
-- area refuses logins that are subscribers; this refuses the reverse, in
-- every path that writes a username (create, rename, import).
CREATE TRIGGER users_username_not_card_i BEFORE INSERT ON users
  WHEN EXISTS (SELECT 1 FROM cards WHERE username = NEW.username)
BEGIN SELECT RAISE(ABORT, 'username_taken'); END;
CREATE TRIGGER users_username_not_card_u BEFORE UPDATE OF username ON users
  WHEN EXISTS (SELECT 1 FROM cards WHERE username = NEW.username)
BEGIN SELECT RAISE(ABORT, 'username_taken'); END;
