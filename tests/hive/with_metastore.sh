#!/usr/bin/env bash
# Runs a command with the Hive Metastore stand-in (tests/hive/metastore.py) listening on a free
# loopback port: exports HIVE_METASTORE_PORT, HIVE_METASTORE_URI (thrift://127.0.0.1:PORT),
# HIVE_LOCK_TIMEOUT and HIVE_EVENTS (the stand-in's event log); stops the stand-in afterwards and
# exits with the command's status.
#   usage: with_metastore.sh [--lock-timeout S] -- COMMAND ARGS...
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
lock_timeout=5
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --lock-timeout) lock_timeout="$2"; shift 2 ;;
    *) echo "with_metastore.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
shift
work="$(mktemp -d)"
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
/usr/bin/python3 "$here/metastore.py" serve "$port" --lock-timeout "$lock_timeout" --events "$work/events.jsonl" \
  >"$work/metastore.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"; }
trap cleanup EXIT
up=
for _ in $(seq 1 100); do
  if /usr/bin/python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$port" 2>/dev/null; then
    up=1; break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$up" ]; then echo "the metastore stand-in did not start:"; cat "$work/metastore.log"; exit 1; fi
export HIVE_METASTORE_PORT="$port" HIVE_METASTORE_URI="thrift://127.0.0.1:$port" HIVE_LOCK_TIMEOUT="$lock_timeout"
export HIVE_EVENTS="$work/events.jsonl"
"$@"
rc=$?
[ $rc -eq 0 ] || { echo "--- metastore stand-in log ---"; tail -n 50 "$work/metastore.log"; }
exit $rc
