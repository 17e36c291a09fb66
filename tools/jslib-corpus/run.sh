#!/usr/bin/env bash
# Compare an rk6 binary with k6 1.1.0 on jslib.k6.io, the probes and end-to-end journeys
# (no network: 127.0.0.1 only). See README.md.
#   JSLIB_CHECKOUT=/path/to/jslib.k6.io tools/jslib-corpus/run.sh              # jslib probes e2e
#   JSLIB_CHECKOUT=... tools/jslib-corpus/run.sh probes e2e                     # some parts
#   ... K6_CHECKOUT=/path/to/k6 K6_DOCS_CHECKOUT=/path/to/k6-docs run.sh scripts  # k6's own examples
# Env: RK6 (default target/debug/rk6), K6 (default k6), OUT (reports), WORK (scratch; both
# default under $TMPDIR/rk6-jslib-corpus), REFRESH_K6=1 (ignore the cached k6 results),
# JSLIB_ONLY / PROBE_ONLY / E2E_ONLY / SCRIPTS_ONLY (regex filters on names), SCRIPTS_RUN=0
# (scripts: inspect only), SCRIPTS_GREP (regex on script sources).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# Belt and braces: where allowed (root), run everything in a fresh network namespace whose only
# interface is loopback, so nothing can leave the machine whatever a script does.
# HARNESS_NETNS=0 turns this off.
if [ "${HARNESS_NETNS:-1}" = 1 ] && [ -z "${HARNESS_IN_NETNS:-}" ] && unshare -n true 2>/dev/null; then
  exec unshare -n sh -c 'ip link set lo up && HARNESS_IN_NETNS=1 exec "$0" "$@"' "$here/run.sh" "$@"
fi
scratch="${TMPDIR:-/tmp}/rk6-jslib-corpus"
export RK6="${RK6:-$here/../../target/debug/rk6}"
export OUT="${OUT:-$scratch/report}"
export WORK="${WORK:-$scratch/work}"
export K6_NO_USAGE_REPORT=true
mkdir -p "$OUT" "$WORK"
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(jslib probes e2e)
log="$OUT/harness.log"
: > "$log"
if [ -n "${HARNESS_IN_NETNS:-}" ]; then echo "network: own namespace, loopback only"; else echo "network: host namespace (127.0.0.1 targets only)"; fi
echo "rk6: $RK6 ($("$RK6" version 2>/dev/null | head -1)); k6: $(${K6:-k6} version | head -1)"
summary=()
for p in "${parts[@]}"; do
  echo "== $p (progress in $log)"
  line="$(python3 "$here/$p.py" 2>>"$log" | tail -1)"
  summary+=("$line")
  echo "$line"
done
echo
echo "== summary"
printf '%s\n' "${summary[@]}"
echo "reports: $OUT/{jslib,probes,e2e,scripts}.{md,json}"
