package web

import (
	"sort"
	"strconv"
	"strings"
)

// The reasons (details.reason) an operation answers, documented per
// status in /openapi.json and enforced by the contract test: a response
// of a documented error status whose reason is not listed fails the test
// that received it. They are the reasons every row of a kind answers (the
// middleware, the decoder, path ids), plus the operation's own ones in
// opReasons (web/openapi_reasons_table.go).

// kindReasons are the "status reason" pairs the pipeline answers for the
// row, before and around its handler.
func (r *Route) kindReasons() []string {
	if r.H == nil {
		return nil
	}
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	add("400 invalid_utf8")
	switch r.Access {
	case Public:
		add("429 rate_limited")
	case Subscriber:
		add("401 invalid_token", "401 missing_bearer_token", "401 session_revoked", "429 rate_limited", "503 site_offline")
	case Staff:
		add("401 invalid_token", "401 missing_bearer_token", "401 session_revoked", "401 api_token_invalid", "429 rate_limited")
		if len(r.Perms) > 0 {
			add("403 insufficient_permissions")
		}
		if !r.licenseExempt() && !r.Root {
			add("403 license_locked")
		}
		if r.SessionOnly {
			add("403 api_token_forbidden")
		}
		if r.NoImpersonation {
			add("403 impersonation_forbidden")
		}
	}
	if r.Req != nil {
		add("400 malformed_json", "400 body_not_object", "400 unknown_field", "400 invalid_type", "400 invalid_value",
			"400 invalid_enum", "400 too_many_decimals", "400 amount_out_of_range", "400 body_too_large", "400 unreadable_body",
			"408 request_timeout")
	}
	for _, m := range pathParam.FindAllStringSubmatch(r.P, -1) {
		if intParams[m[1]] {
			add("404 not_found")
			break
		}
	}
	if r.List {
		add("400 invalid_filter", "400 invalid_sort", "400 invalid_order")
	}
	if r.isMutation() { // no room to write; a write while the tenant's data is replaced (db/pause.go); any write on a standby (db/followed.go) or a fenced primary (db/fence.go)
		add("503 storage_full", "503 restore_in_progress", "503 reset_in_progress", "503 tenant_restored", "503 standby_read_only", "503 fenced")
	}
	return out
}

// reasonsByStatus groups the row's known reasons by status.
func (r *Route) reasonsByStatus() map[string][]string {
	if r.H == nil {
		return nil
	}
	seen := map[string]bool{}
	out := map[string][]string{}
	pairs := append(r.kindReasons(), opReasons[r.M+" "+r.FullPath()]...)
	for _, pair := range append(pairs, r.Reasons...) {
		if seen[pair] {
			continue
		}
		seen[pair] = true
		st, reason, _ := strings.Cut(pair, " ")
		out[st] = append(out[st], reason)
	}
	for st := range out {
		sort.Strings(out[st])
	}
	return out
}

// reasons is the flat sorted list for x-reasons.
func (r *Route) reasons() []string {
	var out []string
	for st, rs := range r.reasonsByStatus() {
		if _, err := strconv.Atoi(st); err == nil {
			out = append(out, rs...)
		}
	}
	sort.Strings(out)
	var uniq []string
	for i, s := range out {
		if i == 0 || out[i-1] != s {
			uniq = append(uniq, s)
		}
	}
	return uniq
}
