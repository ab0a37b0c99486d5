package assets

import "embed"

// Hotspot holds the shipped hotspot page templates (pages.tmpl, their CSS
// and texts) and md5.js, the CHAP helper built into every RouterOS zip
// (see app/hotspot).
//
//go:embed hotspot
var Hotspot embed.FS
