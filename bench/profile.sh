#!/usr/bin/env bash
# Profile rk6 on scenario 1 (10 VUs, tight loop) with perf, against the bench nginx target.
#   bench/profile.sh [SECONDS]   (default 5)
# Prints the top functions by self time and by inclusive time, and writes the perf data to
# $TMPDIR/rk6-s1.perf.data. Needs `perf` (apt-get install -y linux-perf) and a release build
# with debug info (the workspace's release profile keeps it). RK6_BIN overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-5}"
port=18092
rk6="${RK6_BIN:-target/release/rk6}"
[ -x "$rk6" ] || cargo build --release -q
rk6="$(realpath "$rk6")"
command -v perf >/dev/null || { echo "perf missing: apt-get install -y linux-perf" >&2; exit 1; }
data="${TMPDIR:-/tmp}/rk6-s1.perf.data"

python3 bench/runner.py --serve $((secs + 60)) --port "$port" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done

(cd bench/scripts && perf record -q -F 999 -g --call-graph dwarf,16384 -o "$data" \
  "$rk6" run -q --no-summary -u 10 -d "${secs}s" -e "BASE_URL=http://127.0.0.1:$port" tight.js)

set +eo pipefail  # head closes pipes early
echo "== by thread"
perf report -i "$data" --no-children --sort comm --stdio -g none 2>/dev/null | grep '%' | head -8
echo "== top 25 by self time"
perf report -i "$data" --no-children --sort symbol --stdio -g none 2>/dev/null | grep '%' \
  | sed -E 's/ {2,}/ /g; s/ - - *$//' | cut -c1-150 | head -25
echo "== top rk6 / boa / hyper functions by inclusive time"
perf report -i "$data" --children --sort symbol --stdio -g none 2>/dev/null | grep '%' \
  | grep -v '(inlined)' | grep -E 'rk6_|boa_gc::Collector::collect|hyper::proto|mpmc' \
  | sed -E 's/ {2,}/ /g; s/ - - *$//' | cut -c1-150 | head -25
echo "perf data: $data  (perf report -i $data)"
