package probes

import "xr/app"

// SettingMonitoringRanges is read by TenantGuard; the monitoring module
// declares it (probes has no module of its own).
var SettingMonitoringRanges = app.StringSetting{Key: "monitoring_network_ranges", Default: "", Description: "monitoring: comma-separated CIDR ranges devices may be probed in besides the NAS (empty: private and CGNAT ranges)"}
