#!/usr/bin/env bash
# Peak RSS of rk6 vs k6 on script.js (1000 VUs reading a ~50 MB SharedArray for 10 s).
# Usage: bench/shared_array/run.sh [SIZE_MB] [VUS] [DURATION]
# RK6_BIN (default: target/release/rk6, built if missing) and K6_BIN (default: k6) choose
# the binaries. Each run is bounded by `timeout`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=${1:-50}
vus=${2:-1000}
duration=${3:-10s}
data=$(mktemp -d)/data.json
trap 'rm -rf "$(dirname "$data")"' EXIT
python3 "$here/gen.py" "$size" "$data"
rk6=${RK6_BIN:-$root/target/release/rk6}
if [ ! -x "$rk6" ]; then
  (cd "$root" && cargo build --release --bin rk6)
fi
k6=${K6_BIN:-k6}
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }
printf '| tool | peak RSS (MiB) | wall (s) | iterations | checks failed | exit |\n|---|---|---|---|---|---|\n'
for tool in rk6 k6; do
  bin=$rk6; [ "$tool" = k6 ] && bin=$k6
  out=$(mktemp -d)
  set +e
  /usr/bin/time -f '%M %e' -o "$out/time" timeout 120 "$bin" run -q \
    -e DATA="$data" -e VUS="$vus" -e DURATION="$duration" \
    --summary-export "$out/summary.json" "$here/script.js" >"$out/stdout" 2>"$out/stderr"
  code=$?
  set -e
  read -r rss_kb wall < <(tail -n 1 "$out/time") || true
  python3 - "$tool" "$rss_kb" "$wall" "$code" "$out/summary.json" <<'PY'
import json, sys
tool, rss_kb, wall, code, path = sys.argv[1:]
try:
    m = json.load(open(path))["metrics"]
    iters = int(m["iterations"]["count"])
    fails = int(m["checks"]["fails"])
except Exception:
    iters, fails = "?", "?"
print(f"| {tool} | {int(rss_kb) / 1024:.0f} | {wall} | {iters} | {fails} | {code} |")
PY
  rm -rf "$out"
done
