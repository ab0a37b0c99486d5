-- The system reseller role sells at the till and reads the history of its
-- card stock (issue 34), as a new tenant's template grants: a reseller
-- sells the cards it holds at its own till and sees what moved in and out
-- of its branch. A code of an area the build lacks grants nothing.
INSERT OR IGNORE INTO role_permissions(role_id, code)
  SELECT r.id, c.code FROM roles r, (SELECT 'prm_pos_sell' AS code UNION ALL SELECT 'prm_report_cards_log') c
  WHERE r.template_key = 'reseller' AND r.is_system = 1;
