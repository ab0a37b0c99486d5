-- The map's subscriber layer (GET /admin/monitoring/geo?subscribers=true)
-- is cached in memory; this row changes (to a new random value) whenever
-- something the layer shows changes, so a reader knows in one lookup
-- whether its copy is current. Random rather than a counter, so a restored
-- backup never matches a copy taken from a different history.
CREATE TABLE mon_geo_version(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  v INTEGER NOT NULL
);
INSERT INTO mon_geo_version(id, v) VALUES (1, random());

CREATE TRIGGER mon_user_geo_ins AFTER INSERT ON mon_user_geo BEGIN UPDATE mon_geo_version SET v = random(); END;
CREATE TRIGGER mon_user_geo_upd AFTER UPDATE ON mon_user_geo BEGIN UPDATE mon_geo_version SET v = random(); END;
CREATE TRIGGER mon_user_geo_del AFTER DELETE ON mon_user_geo BEGIN UPDATE mon_geo_version SET v = random(); END;
CREATE TRIGGER users_geo_upd AFTER UPDATE OF username, parent_id ON users
  WHEN EXISTS (SELECT 1 FROM mon_user_geo WHERE user_id = NEW.id)
  BEGIN UPDATE mon_geo_version SET v = random(); END;
-- A deleted subscriber takes its mon_user_geo row with it (ON DELETE
-- CASCADE), which fires mon_user_geo_del.
