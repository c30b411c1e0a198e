#!/usr/bin/env bash
# Two floe brokers on one redis-server (floe.local.type=redis) share one schema registry: both
# register the same 1,000 schemas concurrently (schema_registry_race.mjs) and give consistent
# ids; kill -9 of both brokers and a restart keep every id; Redis stopped: a registration is
# 50001 (backend store error) and the broker stays up; Redis back: registrations work again.
# usage: schema_registry_cluster_test.sh FLOE_BIN
set -uo pipefail
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}" $REDIS_PID; do kill -9 $p 2>/dev/null; done; rm -rf "$work"' EXIT

RPORT=$(free_port)
# appendfsync always: an acknowledged registration is on disk before the broker answers.
run_redis "$work/redis" "$RPORT" --appendonly yes --appendfsync always || exit 1
REDIS_PID=$RUN_REDIS_PID
SR0=$(free_port); SR1=$(free_port)
start_broker() { # N SR_PORT
  mkdir -p "$work/b$1"
  start_floe "$work/b$1" --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$RPORT \
    --set floe.broker.id=$1 --set floe.schema-registry.listen=127.0.0.1:$2 --set floe.storage.worker.enabled=false \
    --set floe.cluster.session-timeout=2s --set floe.storage.remote.catalog.uri=sqlite://$work/catalog.db \
    --set floe.storage.remote.path=file://$work/warehouse || return 1
  pids+=("$FLOE_PID")
  eval "B$1_PID=$FLOE_PID"
}
start_broker 0 "$SR0" || exit 1
start_broker 1 "$SR1" || exit 1

out=$(timeout 150 node "$js/schema_registry_race.mjs" 1000 "http://127.0.0.1:$SR0" "http://127.0.0.1:$SR1" 2>&1)
rc=$?
echo "$out" | head -3 | cut -c1-300
check "1,000 concurrent registrations on two brokers agree" test "$rc" = 0
ids=$(echo "$out" | tail -1)
check "ids are 1..1000 (none skipped or doubled)" /usr/bin/python3 -c "import json,sys; ids=json.loads(sys.argv[1]); assert sorted(ids)==list(range(1,1001)), ids[:10]" "$ids"

# kill -9 both, restart one: every id is still there, and answers the same schema.
kill -9 "$B0_PID" "$B1_PID"; wait "$B0_PID" "$B1_PID" 2>/dev/null
start_broker 0 "$SR0" || exit 1
check "after kill -9, every schema keeps its id" /usr/bin/python3 - "$ids" "http://127.0.0.1:$SR0" <<'PY'
import json, sys, urllib.request
ids = json.loads(sys.argv[1]); url = sys.argv[2]
for i, sid in enumerate(ids):
    s = json.load(urllib.request.urlopen(f"{url}/schemas/ids/{sid}"))
    assert json.loads(s["schema"])["name"] == f"R{i}", (i, sid, s)
for s in range(10):
    v = json.load(urllib.request.urlopen(f"{url}/subjects/race-{s}/versions"))
    assert len(v) == 100, (s, v)
PY

# Redis gone: 50001, the broker stays up and answers again once Redis is back.
redis-cli -p "$RPORT" shutdown nosave >/dev/null 2>&1; wait "$REDIS_PID" 2>/dev/null
st=$(curl -s -m 20 -o "$work/body" -w '%{http_code}' -X POST -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
  --data '{"schema":"\"string\""}' "http://127.0.0.1:$SR0/subjects/down/versions")
check "redis down: 500" test "$st" = 500
check "redis down: error_code 50001" grep -q '"error_code":50001' "$work/body"
check "redis down: broker up" kill -0 "$FLOE_PID"
run_redis "$work/redis" "$RPORT" --appendonly yes --appendfsync always || exit 1
REDIS_PID=$RUN_REDIS_PID
ok=0
for _ in $(seq 1 50); do
  r=$(curl -s -m 5 -X POST -H 'Content-Type: application/vnd.schemaregistry.v1+json' --data '{"schema":"\"string\""}' \
    "http://127.0.0.1:$SR0/subjects/down/versions")
  if contains "$r" '{"id":1001}'; then ok=1; break; fi
  sleep 0.2
done
check "redis back (AOF): registration works, next id 1001" test "$ok" = 1
check "redis back: old ids kept" contains "$(curl -s "http://127.0.0.1:$SR0/schemas/ids/1000")" '"schema"'

echo "$e2e_passed passed, $e2e_failed failed"
[ "$e2e_failed" -eq 0 ]
