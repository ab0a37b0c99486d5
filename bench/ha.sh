#!/usr/bin/env bash
# bench/ha.sh [hafigures flags]: the figures of docs/ha.md (Figures). It
# builds xr and runs bench/hafigures, which starts xr processes on
# loopback ports in a temporary directory (bench tenants from
# xr dev tenants, a file:// replica) and measures:
#   steady load   the same rate of API deposits (one writer per tenant,
#                 each with its request_id) on a primary without, then with
#                 --replicate-to and a standby: the primary's CPU per write
#                 (/proc/PID/stat), the bytes written to the replica per
#                 second, the replication lag of every write of a sample
#                 of writers (acknowledged by the primary -> first seen in
#                 the standby's API);
#   trials        kill -9 of the primary at a random moment under that load
#                 and a NAS's Access-Requests (primary first, the standby on
#                 a 1 s timeout, twice through the list), xr promote of the
#                 standby: the acknowledged deposits missing on the promoted
#                 box and the time they span, the Access-Requests no server
#                 answered, the longest span without an answer.
# Flags: go run ./bench/hafigures --help (e.g. --rate 1000 --trials 10 --json).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
go build -o "$WORK/xr" .
go build -o "$WORK/hafigures" ./bench/hafigures
"$WORK/hafigures" --xr "$WORK/xr" "$@"
