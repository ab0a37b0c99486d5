package dataimport

import (
	"encoding/base64"
	"encoding/hex"
	"strings"

	"xr/app/aaa"
)

// headerSchemes are the {scheme} prefixes of FreeRADIUS's
// Password-With-Header (rlm_pap) and the kind each is kept as.
var headerSchemes = map[string]string{
	"clear": "cleartext", "cleartext": "cleartext", "crypt": "crypt", "md5": "md5", "smd5": "smd5", "sha": "sha", "ssha": "ssha",
	"sha2": "sha2", "sha256": "sha2", "sha512": "sha2", "ssha256": "ssha2-256", "ssha512": "ssha2-512", "ssha2": "ssha2",
	"nt": "nt", "nthash": "nt", "x-nthash": "nt",
}

// passwordHeader reads a Password-With-Header ({scheme}value) or a
// Crypt-Password written with its {crypt} prefix into a kind and value;
// an unknown scheme stays kind header (not importable).
func passwordHeader(kind, value string) (string, string) {
	v := strings.TrimSpace(value)
	if !strings.HasPrefix(v, "{") {
		return kind, value
	}
	end := strings.IndexByte(v, '}')
	if end < 0 {
		return kind, value
	}
	k, ok := headerSchemes[strings.ToLower(v[1:end])]
	if !ok || (kind == "crypt" && k != "crypt") {
		return kind, value
	}
	return k, v[end+1:]
}

// compactHash writes a hex digest in base64 when the stored form would
// pass the 128 bytes of a RADIUS password (SSHA2-512 in hex): PAP reads
// both (radiusd/legacyhash.go, app/aaa/legacycrypt.go).
func compactHash(kind, value string) string {
	if len(aaa.LegacyHashPrefix)+len(kind)+1+len(value) <= 128 || kind == "crypt" {
		return value
	}
	b, err := hex.DecodeString(strings.TrimSpace(value))
	if err != nil {
		return value
	}
	return base64.StdEncoding.EncodeToString(b)
}

// legacyExportAttr is the FreeRADIUS attribute a hashed password leaves
// under (the export): the import's own kinds, then export.go's.
func legacyExportAttr(kind string) string {
	switch kind {
	case "crypt":
		return "Crypt-Password"
	case "sha2":
		return "SHA2-Password"
	case "ssha2":
		return "SSHA2-512-Password" // a {ssha2} header: the size is not known
	case "ssha2-224", "ssha2-256", "ssha2-384", "ssha2-512":
		return "SSHA2-" + kind[len("ssha2-"):] + "-Password"
	}
	return legacyHashAttr[kind]
}
