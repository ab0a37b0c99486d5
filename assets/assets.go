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
