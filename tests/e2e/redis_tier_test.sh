#!/usr/bin/env bash
# floe.local.type=redis end to end, against a real redis-server started here on loopback:
# kafkajs produces to a tiered topic, the storage worker offloads every record from Redis into
# the Iceberg table (DuckDB checks the rows), consumers read through both tiers; kcat produces
# keyed records with headers to a second topic and a plain `redis-cli XRANGE` reads the same
# keys, values and headers back from the stream; Redis stopped: Produce answers a retriable
# error and /readyz names redis; Redis back: produce resumes. Transactional produce and compacted
# topics are refused (kafkajs sees the Kafka errors, the log says why).
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
REDIS_PID=
trap 'stop_floe; stop_redis; rm -rf "$work"' EXIT
REDIS_PORT=$(free_port)
start_redis || exit 1
records=${RECORDS:-20000}
parts=2
topic="orders.created-v1"

# Invalid settings stop start-up naming the key.
"$FLOE_BIN" serve --set floe.data-dir="$work/bad" --set floe.local.type=redis >"$work/bad.out" 2>"$work/bad.log"
check "no floe.local.redis.uri: start-up refused naming the key" grep -q "floe.local.redis.uri" "$work/bad.log"
"$FLOE_BIN" serve --set floe.data-dir="$work/bad" --set floe.local.type=redis \
  --set floe.local.redis.uri=redis://127.0.0.1:notaport >"$work/bad.out" 2>"$work/bad.log"
check "bad floe.local.redis.uri: start-up refused naming the key" grep -q "floe.local.redis.uri" "$work/bad.log"

start_floe "$work" --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$REDIS_PORT \
  --set floe.local.redis.command-timeout=1s \
  --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval=300ms \
  --set floe.default-partitions=$parts || exit 1
check "the log says the local tier is Redis" grep -q "local tier: Redis Streams" "$work/floe.log"

check "kafkajs produced $records records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT "$topic" 0 "$records" "$parts"
check "records are in Redis streams" test "$(redis-cli -p $REDIS_PORT XLEN "{floe:$topic:0}:stream")" -gt 0

# The storage worker offloads every record from Redis into Iceberg.
done_=""
for _ in $(seq 1 120); do
  /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe orders_created_v1 > "$work/files.json" 2>"$work/py.err" || { sleep 0.5; continue; }
  total=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/files.json")
  if [ "$total" -ge "$records" ]; then done_=1; break; fi
  sleep 0.5
done
check "positions reach $records within 60 s (got ${total:-none})" test -n "$done_"
check "table rows match what was produced (DuckDB)" node "$js/check_table.mjs" "$work/files.json" 0 "$records" "$parts" "$topic"
marker=$(redis-cli -p $REDIS_PORT HGET "{floe:$topic:0}:meta" offloaded)
check "offload marker moved in Redis (got $marker)" test "${marker:-0}" -gt 0
check "kafkajs reads every record from offset 0" node "$js/consume_check.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$records" "$parts"

# kcat: keyed records with headers; redis-cli XRANGE reads the same back.
plain="plain.events"
for i in $(seq 0 49); do echo "key$i:value-$i"; done > "$work/plain.txt"
check "kcat produced to $plain" kcat -b 127.0.0.1:$KAFKA_PORT -P -t "$plain" -p 0 -K: -H "source=e2e" -H "n=1" -l "$work/plain.txt"
got=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$plain" -p 0 -o beginning -e -q -f '%k|%s|%h\n')
check "kcat reads 50 records back" test "$(wc -l <<<"$got")" -eq 50
check "kcat sees key, value and headers" contains "$got" "key7|value-7|source=e2e,n=1"
redis-cli -p $REDIS_PORT --raw XRANGE "{floe:$plain:0}:stream" - + > "$work/xrange.txt"
/usr/bin/python3 - "$work/xrange.txt" <<'PY' > "$work/xrange.out"
import sys
lines = open(sys.argv[1]).read().split("\n")
# --raw XRANGE: id, then field/value lines, entry after entry; each entry starts with "<ms>-<seq>".
out, i = [], 0
import re
while i < len(lines):
    if re.fullmatch(r"\d+-\d+", lines[i]):
        j = i + 1
        f = {}
        while j + 1 < len(lines) and not re.fullmatch(r"\d+-\d+", lines[j]):
            f[lines[j]] = lines[j + 1]; j += 2
        out.append(f"{f.get('offset')}|{f.get('key')}|{f.get('value')}|{f.get('headers')}")
        i = j
    else:
        i += 1
print("\n".join(out))
PY
check "XRANGE has 50 entries" test "$(wc -l < "$work/xrange.out")" -eq 50
check "XRANGE entry 7 has offset, key, value and headers" grep -qx "7|key7|value-7|6:source3:e2e1:n1:1" "$work/xrange.out"
firstid=$(head -1 "$work/xrange.txt")
now_ms=$(($(date +%s%N) / 1000000))
check "entry id ms is the append time (${firstid%-*} near $now_ms)" test $((now_ms - ${firstid%-*})) -lt 600000

# Transactions and compacted topics are refused with a clear Kafka error and a log line;
# idempotent produce still works.
check "transactional produce and compacted topics refused (kafkajs)" env FLOE_BROKER=127.0.0.1:$KAFKA_PORT \
  node "$here/../js/kafka/redis_refusals.mjs" "$plain"
check "the log says why the transaction was refused" grep -q "does not support transactions" "$work/floe.log"
check "the log says why the compacted topic was refused" grep -q "refused cleanup.policy=compact" "$work/floe.log"

# Redis down: Produce answers a retriable error, /readyz names redis; back: produce resumes.
stop_redis
sleep 0.3
out=$(echo "late:1" | timeout 30 kcat -b 127.0.0.1:$KAFKA_PORT -P -t "$plain" -p 0 -K: -X message.timeout.ms=3000 2>&1)
check "produce with Redis down is not acknowledged ($out)" test -n "$out"
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz names redis as down" contains "$ready" '"redis":{"status":"down"'
start_redis || exit 1
ok=""
for _ in $(seq 1 50); do
  if echo "back:1" | kcat -b 127.0.0.1:$KAFKA_PORT -P -t "$plain" -p 0 -K: -X message.timeout.ms=3000 2>/dev/null; then ok=1; break; fi
  sleep 0.2
done
check "produce resumes once Redis is back" test -n "$ok"
n=$(kcat -b 127.0.0.1:$KAFKA_PORT -C -t "$plain" -p 0 -o beginning -e -q -f '%k\n' | grep -c .)
check "the 50 acknowledged records survived the Redis restart (AOF) and the new one follows (got $n)" test "$n" -ge 51
ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz: redis up again" contains "$ready" '"redis":{"status":"up"'

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
