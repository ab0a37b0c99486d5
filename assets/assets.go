// Package assets embeds the files xr ships inside its binary: migrations,
// message catalogues and web pages.
package assets

import "embed"

// Migrations holds numbered SQL files: instance/NNNN_*.sql and tenant/NNNN_*.sql.
//
//go:embed migrations
var Migrations embed.FS

// Messages holds one JSON catalogue per language: reason key → message.
//
//go:embed messages
var Messages embed.FS

// Console holds the staff console's own static files (CSS, the small
// script), and Vendor the front-end libraries copied from npm at pinned
// versions (see vendor/README.md).
//
//go:embed console vendor
var Static embed.FS
