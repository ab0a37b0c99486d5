-- An add-on purchase can be reverted once (a voided till sale): the
-- moment is recorded; refunded_at is the only column ever updated.
ALTER TABLE user_addons ADD COLUMN refunded_at TEXT;
