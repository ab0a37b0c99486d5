-- The auth log names the method of each decision (issue 37): pap, chap,
-- mschapv2, or EAP with the method inside (eap-peap/mschapv2, eap-ttls/pap,
-- eap-ttls/mschapv2, eap-ttls/eap-mschapv2, eap-mschapv2; eap when none
-- was agreed). Older rows have ''.
ALTER TABLE auth_log ADD COLUMN method TEXT NOT NULL DEFAULT '';
