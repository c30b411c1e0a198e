# Shared by the bench/*/run.sh harnesses (source it): a work directory removed on exit together
# with every server started here, free loopback ports, and starting floe serve and redis-server
# with bounded waits. Sets `here` (the repository), `build` and `work`.
set -euo pipefail
# Every floe started here answers the schema registry on a free port (its default, 127.0.0.1:8081,
# would collide between tests running in parallel); a test that needs the registry sets its own.
export FLOE_SCHEMA_REGISTRY_LISTEN="${FLOE_SCHEMA_REGISTRY_LISTEN:-127.0.0.1:0}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD:-$here/build}"
work="$(mktemp -d)"
bench_pids=()
bench_cleanup() {
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap bench_cleanup EXIT
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# start_floe KAFKA_PORT HTTP_PORT DATA_DIR [--set k=v ...]: floe serve (FLOE_BIN, default the
# build's), logging to $work/floe.log; returns once it says it is up (at most 20 s). floe reads
# every FLOE_* variable as a setting and refuses unknown ones, so the harnesses' own are unset.
start_floe() {
  local kport="$1" hport="$2" data="$3"; shift 3
  env -u FLOE_BIN -u FLOE_BENCH_BROKER "${FLOE_BIN:-$build/bin/floe}" serve --set floe.data-dir="$data" --set floe.kafka.listen=127.0.0.1:$kport \
    --set floe.http.listen=127.0.0.1:$hport "$@" >"$work/floe.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 200); do grep -q "floe is up" "$work/floe.log" && return 0; sleep 0.1; done
  echo "floe did not come up:" >&2; tail -20 "$work/floe.log" >&2; return 1
}
# start_redis PORT: an in-memory redis-server on loopback; returns once it answers PING.
start_redis() {
  redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "redis-server did not come up" >&2; return 1
}
