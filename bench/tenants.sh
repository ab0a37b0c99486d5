#!/usr/bin/env bash
# bench/tenants.sh N: xr with N tenants on this box. It makes N tenants
# (xr dev tenants: the first with xr tenant create's code, the others as
# copies of it; the first $NAS get a NAS and a subscriber), starts xr serve
# on them and reports:
#   ready      seconds from exec to the first 200 of /readyz
#   idle RSS   resident memory after $IDLE seconds with nobody calling
#   open files file descriptors of the process then
#   idle CPU   share of one core used over those $IDLE seconds
#   cold login / cold Access-Request: latency of the first call to
#              $SAMPLES tenants nobody used since the start (xr dev cold)
# Environment: NAS (default 100), IDLE (60), SAMPLES (100), WORK (a temp
# dir, removed at the end unless KEEP=1), PORT (18080), RPORT (18112).
set -euo pipefail
N=${1:-1000}
NAS=${NAS:-100}
IDLE=${IDLE:-60}
SAMPLES=${SAMPLES:-100}
PORT=${PORT:-18080}
RPORT=${RPORT:-18112}
WORK=${WORK:-$(mktemp -d)}
cd "$(dirname "$0")/.."
XR="$WORK/xr"
go build -o "$XR" .
DATA="$WORK/data"
rm -rf "$DATA"
"$XR" --data "$DATA" dev tenants --count "$N" --nas "$NAS"
du -sh "$DATA" | awk '{print "on disk: " $1}'

"$XR" --data "$DATA" serve --http "127.0.0.1:$PORT" --radius-auth "127.0.0.1:$RPORT" --radius-acct "127.0.0.1:$((RPORT + 1))" \
	--log-level warn >"$WORK/serve.log" 2>&1 &
PID=$!
start=$(date +%s.%N)
cleanup() {
	kill "$PID" 2>/dev/null || true
	wait "$PID" 2>/dev/null || true
	[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz"; do
	kill -0 "$PID" || { cat "$WORK/serve.log"; exit 1; }
	sleep 0.01
done
ready=$(echo "$(date +%s.%N) - $start" | bc)

ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
hz=$(getconf CLK_TCK)
sleep 5 # let the start settle (the scheduler's first pass, the wake requests)
t0=$(ticks)
sleep "$IDLE"
t1=$(ticks)
cpu=$(echo "scale=2; ($t1 - $t0) * 100 / $hz / $IDLE" | bc)
rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$PID/status")
fds=$(ls "/proc/$PID/fd" | wc -l)
open=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^xr_tenants_open / {print $2}')

cold=$("$XR" dev cold --count "$N" --nas "$NAS" --samples "$SAMPLES" --http "127.0.0.1:$PORT" --radius-auth "127.0.0.1:$RPORT")
rss_after=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$PID/status")
fds_after=$(ls "/proc/$PID/fd" | wc -l)
open_after=$(curl -s "http://127.0.0.1:$PORT/metrics" | awk '/^xr_tenants_open / {print $2}')
sleep 40 # the opened tenants' idle reader connections close (db.TenantReaderIdle)
rss_later=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$PID/status")
fds_later=$(ls "/proc/$PID/fd" | wc -l)

echo "tenants:            $N ($NAS with a NAS)"
echo "ready:              ${ready} s"
echo "idle RSS:           ${rss} MB"
echo "idle open files:    ${fds} (tenants open: ${open})"
echo "idle CPU:           ${cpu} % of a core over ${IDLE} s"
echo "$cold"
echo "after the cold calls: RSS ${rss_after} MB, open files ${fds_after}, tenants open ${open_after}"
echo "40 s later:         RSS ${rss_later} MB, open files ${fds_later} (tenants stay open until --idle-close, 10 min)"
echo "load average:       $(cut -d' ' -f1-3 /proc/loadavg) (other work on the box)"
