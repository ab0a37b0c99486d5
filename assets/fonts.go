package assets

import "embed"

// Fonts holds the Unicode fonts the design renderer embeds in PDFs and
// draws PNGs with: DejaVu Sans regular and bold (Latin, Cyrillic, Arabic),
// from Debian's fonts-dejavu-core, with their licence (LICENSE-DejaVu.txt).
//
//go:embed fonts/*.ttf
var Fonts embed.FS
