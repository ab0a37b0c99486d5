package app

// Perm is a permission code of the catalogue. Code names a permission by
// its constant (subs.PermUsersIndex, never the bare "prm_users_index"), so a
// misspelt code does not compile; strings from storage or a request become
// a Perm only after the App's registry knows them (App.KnownPermission).
//
// Each area declares its codes beside its code (app/<area>/perms.go: one
// constant per code, named from the code: drop "prm_", CamelCase the rest,
// prefix Perm) and lists them in its Module's Permissions; the App's
// registry is the catalogue (registry.go). TestPermConstantsMatchCatalogue
// (app/modules) holds the constants and the catalogue to each other.
type Perm string

// The kernel's own codes.
const (
	PermJobsView    Perm = "prm_jobs_view"
	PermLicenseView Perm = "prm_license_view"
	PermSettings    Perm = "prm_settings"
)

// Permission is one code of the catalogue and the area it belongs to.
type Permission struct {
	Code Perm   `json:"code"`
	Area string `json:"area"`
}
