package hotspot

import (
	"context"
	"testing"
)

// BenchmarkDownload builds a set's RouterOS zip (seven pages, md5.js, CSS).
func BenchmarkDownload(b *testing.B) {
	ctx := context.Background()
	_, act := newTenantB(b)
	p, err := CreatePage(ctx, act, PageInput{Name: "Lobby", Template: "voucher-first", Blocks: map[string]string{"login": "<p>Welcome</p>"}})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Download(ctx, act, p.ID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPreview renders one page with the sample variables.
func BenchmarkPreview(b *testing.B) {
	ctx := context.Background()
	_, act := newTenantB(b)
	p, err := CreatePage(ctx, act, PageInput{Name: "Lobby", Template: "clean"})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Preview(ctx, act, PreviewInput{ID: p.ID, Page: "status"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSanitize sanitizes a 2 KB block.
func BenchmarkSanitize(b *testing.B) {
	block := ""
	for len(block) < 2000 {
		block += `<p>Welcome <b>guest</b> <a href="$(link-status)">status</a></p><script>x()</script><img src=x onerror=y()>`
	}
	for b.Loop() {
		Sanitize(block)
	}
}
