package aaa

// LegacyHashPrefix marks a RADIUS password imported hashed from a legacy
// system (app/dataimport): the stored password is the prefix, the kind
// (md5, smd5, sha, ssha, nt, crypt, sha2, ssha2-256, ...), ":" and the hash as the legacy system held
// it. radiusd verifies it by PAP and refuses CHAP and MS-CHAP with
// password_reset_required until the password is reset.
const LegacyHashPrefix = "\x00legacy-hash:"

// LegacyHashKinds are the hashed kinds PAP can verify in radiusd; crypt
// ($1$ $5$ $6$), sha2 and ssha2-* are verified by legacycrypt.go
// (LegacyKindSupported covers them all).
var LegacyHashKinds = map[string]bool{"md5": true, "smd5": true, "sha": true, "ssha": true, "nt": true}
