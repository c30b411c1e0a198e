#!/usr/bin/env bash
# Runs an end-to-end test script with floe.local.type=redis: starts a redis-server on a free
# loopback port (temporary directory, persistence off), passes the settings through
# E2E_EXTRA_SETS (lib.sh's start_floe adds them), and stops Redis afterwards.
# usage: with_redis.sh TEST_SCRIPT FLOE_BIN [args...]   (a .sh script runs under bash; anything
# else, e.g. python3 and a Kafka integration test, is run as given)
set -uo pipefail
script="$1"; shift
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
dir="$(mktemp -d)"
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no --logfile "$dir/redis.log" \
  --daemonize no >/dev/null 2>&1 &
pid=$!
trap 'kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
# lib.sh: redis_sets gives each floe work directory its own database; wipe_data empties them.
export E2E_REDIS_PORT=$port E2E_REDIS_DBS="$dir/dbs"
export E2E_EXTRA_SETS="--set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$port"
if [[ "$script" == *.sh ]]; then bash "$script" "$@"; else "$script" "$@"; fi
