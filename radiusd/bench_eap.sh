#!/usr/bin/env bash
# PEAP sign-ins per second and server CPU per sign-in: xr beside FreeRADIUS
# 3.2 with its default EAP configuration, in the same run, alternating.
#
#   radiusd/bench_eap.sh [SIGNINS] [PROCS] [ROUNDS]     # defaults 400, 8, 2
#
# Both are driven the same way (BenchmarkEAPPEAP in bench_tls_test.go):
# PROCS eapol_test processes at a time, each signing in by PEAP with
# MS-CHAPv2 inside, full TLS handshakes (neither server resumes sessions),
# the MS-MPPE keys checked by eapol_test. xr runs in the benchmark's
# process with an in-memory user table and an RSA 2048 certificate;
# FreeRADIUS is a private copy of the packaged /etc/freeradius/3.0 in
# $FR_DIR (default /tmp/xr-fr-eap), unchanged but for its ports, the client
# 127.0.0.1 and 1000 users in the files module (its snakeoil certificate is
# RSA 2048 too). The script starts that FreeRADIUS, and stops exactly the
# process it started. Needs eapol_test (eapoltest) and freeradius (apt-get
# install eapoltest freeradius). Numbers move with the machine's load: run
# it with nothing else busy and compare the two rows of the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-400}
PROCS=${2:-8}
ROUNDS=${3:-2}
FR_DIR=${FR_DIR:-/tmp/xr-fr-eap}
FR_PORT=${FR_PORT:-21812}
SECRET=bench-eap-secret-0123

command -v eapol_test >/dev/null || { echo "eapol_test missing: apt-get install eapoltest" >&2; exit 1; }
command -v freeradius >/dev/null || { echo "freeradius missing: apt-get install freeradius" >&2; exit 1; }

rm -rf "$FR_DIR"
cp -a /etc/freeradius/3.0 "$FR_DIR"
mkdir -p "$FR_DIR/log" "$FR_DIR/run"
sed -i -e "s|^raddbdir = .*|raddbdir = $FR_DIR|" -e "s|^logdir = .*|logdir = $FR_DIR/log|" \
  -e "s|^run_dir = .*|run_dir = $FR_DIR/run|" "$FR_DIR/radiusd.conf"
# The default site's four listeners (auth, acct, IPv6 auth, IPv6 acct) on
# private ports; the inner tunnel's on another.
awk -v base="$FR_PORT" '/^\tport = 0$/ { n++; sub(/0$/, base + (n == 1 ? 0 : n == 2 ? 1 : n + 1)) } { print }' \
  "$FR_DIR/sites-available/default" >"$FR_DIR/default.tmp" && mv "$FR_DIR/default.tmp" "$FR_DIR/sites-available/default"
sed -i -e "s|port = 18120|port = $((FR_PORT + 2))|" "$FR_DIR/sites-available/inner-tunnel"
cat >"$FR_DIR/clients.conf" <<EOF
client bench_localhost {
	ipaddr = 127.0.0.1
	secret = $SECRET
	require_message_authenticator = yes
}
EOF
awk 'BEGIN { for (i = 1; i <= 1000; i++) printf "user%05d\tCleartext-Password := \"pass%05d\"\n\tSession-Timeout := 3600\n\n", i, i }' \
  >"$FR_DIR/users.tmp"
cat "$FR_DIR/mods-config/files/authorize" >>"$FR_DIR/users.tmp"
mv "$FR_DIR/users.tmp" "$FR_DIR/mods-config/files/authorize"

freeradius -f -d "$FR_DIR" -l "$FR_DIR/log/radius.log" &
FR_PID=$!
trap 'kill "$FR_PID" 2>/dev/null || true; wait "$FR_PID" 2>/dev/null || true' EXIT
for i in $(seq 1 50); do
  if echo 'User-Name = user00001, User-Password = pass00001, Message-Authenticator = 0x00' |
    radclient -r 1 -t 1 "127.0.0.1:$FR_PORT" auth "$SECRET" 2>/dev/null | grep -q Access-Accept; then
    break
  fi
  kill -0 "$FR_PID" 2>/dev/null || { echo "freeradius did not start:"; tail -20 "$FR_DIR/log/radius.log"; exit 1; }
  sleep 0.2
done

go test -c -o "$FR_DIR/radiusd.test" ./radiusd/
for r in $(seq 1 "$ROUNDS"); do
  echo "== round $r: xr"
  XR_BENCH_EAP_PROCS=$PROCS "$FR_DIR/radiusd.test" -test.run '^$' -test.bench '^BenchmarkEAPPEAP$' -test.benchtime "${N}x" | grep Benchmark
  echo "== round $r: FreeRADIUS $(freeradius -v | head -1 | sed 's/.*Version \([0-9.]*\).*/\1/') (default EAP configuration)"
  XR_BENCH_EAP_PROCS=$PROCS XR_BENCH_EAP_SERVER="127.0.0.1:$FR_PORT" XR_BENCH_EAP_SECRET=$SECRET XR_BENCH_EAP_PID=$FR_PID \
    XR_BENCH_EAP_CA=/etc/ssl/certs/ssl-cert-snakeoil.pem \
    "$FR_DIR/radiusd.test" -test.run '^$' -test.bench '^BenchmarkEAPPEAP$' -test.benchtime "${N}x" | grep Benchmark
done
