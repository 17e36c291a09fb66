#!/usr/bin/env bash
# Dev-only: does k6 parse each file? Prints `path<TAB>ok|syntax<TAB>k6's message` per file.
# Usage: k6-parse.sh FILE... (or a list on stdin with -). K6=path/to/rk6 asks rk6 instead,
# whose syntax errors read "SyntaxError: file://<path>:L:C: ..." (caught by the same test).
# k6 has no parse-only command: `k6 inspect` parses the file and runs its init context.
# A file k6 cannot parse fails with "file://<path>: Line L:C ...", or with a SyntaxError
# (an early error such as a duplicate declaration) that names this file or no file; any
# other outcome (no default export, an unknown module, a syntax error in a *different*
# imported file, a runtime error) means k6 parsed it. Runs in a fresh network namespace with no interface
# up, so a remote import or an init-context request fails at once and nothing leaves the
# machine.
set -u
one() {
  local f out
  f=$(realpath "$1")
  out=$(cd "$(dirname "$f")" && timeout 30 unshare -n env K6_NO_USAGE_REPORT=true \
    "${K6:-k6}" inspect "$f" 2>&1 | grep -m1 'level=error' | tr '\t' ' ')
  if [[ "$out" == *"file://$f: Line "* ]] || { [[ "$out" == *SyntaxError* ]] &&
    { [[ "$out" != *file://* ]] || [[ "$out" == *"file://$f:"* ]]; }; }; then
    printf '%s\tsyntax\t%s\n' "$1" "$out"
  else
    printf '%s\tok\t%s\n' "$1" "$out"
  fi
}
export -f one
if [ "${1:-}" = "-" ]; then xargs -d '\n' -P 2 -I{} bash -c 'one "$1"' _ {}
else printf '%s\n' "$@" | xargs -d '\n' -P 2 -I{} bash -c 'one "$1"' _ {}; fi
