# shellcheck shell=bash
# What scripts/demo and scripts/demo-triggers share, sourced (not run): the `kindgi` binary,
# the Python SDK a Python pack runs on, and `kindgi dev` started in the background with a
# bounded wait for its `listening` line and a trap that stops it on exit.
#   demo_kindgi            sets $kindgi: $KINDGI_BIN when set (a test passes the binary it
#                          built), else `cargo build -p kindgi` and target/debug/kindgi
#   demo_python PACK       for a Python pack, sets KINDGI_PYTHON (installing the official SDK
#                          into .venv with scripts/setup-reference unless KINDGI_PYTHON is set)
#   demo_dev PACK ARGS…    starts `kindgi dev PACK --no-watch ARGS…`, prints its stdout lines,
#                          sets $dev (its pid) and $dev_url; exits 1 when it does not start
#                          within 5 minutes. On exit the trap stops it (SIGTERM, then waits).
# Expects $root (the repository) and `set -euo pipefail` from the script that sources it.

demo_kindgi() {
  if [ -n "${KINDGI_BIN:-}" ]; then
    kindgi=$KINDGI_BIN
  else
    echo "building kindgi…" >&2
    (cd "$root" && cargo build -q -p kindgi)
    kindgi="$root/target/debug/kindgi"
  fi
}

demo_python() {
  [ -f "$1/pyproject.toml" ] || return 0
  if [ -z "${KINDGI_PYTHON:-}" ]; then
    (cd "$root" && ./scripts/setup-reference >/dev/null)
    export KINDGI_PYTHON="$root/.venv/bin/python"
  fi
}

demo_dev() {
  local pack=$1; shift
  dev_out=$(mktemp)
  "$kindgi" dev "$pack" --no-watch "$@" >"$dev_out" &
  dev=$!
  trap 'kill -TERM $dev 2>/dev/null || true; wait $dev 2>/dev/null || true; rm -f "$dev_out"' EXIT
  local _
  for _ in $(seq 1 1200); do
    grep -q "listening on" "$dev_out" && break
    kill -0 "$dev" 2>/dev/null || { echo "kindgi dev did not start (see above)" >&2; exit 1; }
    sleep 0.25
  done
  grep -q "listening on" "$dev_out" || { echo "kindgi dev did not start within 5 minutes" >&2; exit 1; }
  cat "$dev_out"
  dev_url=$(sed -n 's/^kindgi dev: listening on //p' "$dev_out" | head -n 1)
}
