#!/usr/bin/env bash
# A JetStream source of every stream (streams: "*", topic-prefix nats.) over the three kinds of
# stream (issue 32): standard streams, KV buckets and object stores, some created before floe
# starts and some after (picked up by the periodic stream listing). NATS is filled by the official
# client (tests/js/e2e/nats_kinds.mjs); the Iceberg tables are judged by DuckDB over the files
# python3-avro lists, against NATS and what the client wrote (tests/js/e2e/kinds_check.mjs):
# every message in its table once, KV history and tombstones, "every key as of T", objects
# rebuilt byte-for-byte, also after a kill -9 of floe while all kinds are written. A per-stream
# override (ORDERS2: max-messages=10) is checked to apply; two more sources select streams by a
# list and by a ^regex.
# usage: ingest_jetstream_kinds_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
mkdir -p "$work/f" "$work/nats"
NATS_PID=
cleanup() {
  [ -n "$NATS_PID" ] && kill -9 "$NATS_PID" 2>/dev/null
  [ -n "${FLOE_PID:-}" ] && kill -9 "$FLOE_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
start_nats "$work/nats" "$work/nats.log"; URL="nats://127.0.0.1:$NATS_PORT"

check "before floe: ORDERS, KV cfg, object store files filled" timeout 30 node "$js/nats_kinds.mjs" "$URL" before "$work"
floe_args=(--set floe.ingest.sources.nats.type=jetstream --set floe.ingest.sources.nats.url="$URL"
  --set 'floe.ingest.sources.nats.streams=*' --set floe.ingest.sources.nats.topic-prefix=nats.
  --set floe.ingest.sources.nats.max-age=500ms
  --set floe.ingest.sources.nats.overrides.ORDERS2.max-messages=10
  --set floe.ingest.sources.some.type=jetstream --set floe.ingest.sources.some.url="$URL"
  --set floe.ingest.sources.some.streams=ORDERS2,KV_late --set floe.ingest.sources.some.topic-prefix=some.
  --set floe.ingest.sources.some.max-age=300ms --set floe.ingest.sources.re.max-age=300ms
  --set floe.ingest.sources.re.type=jetstream --set floe.ingest.sources.re.url="$URL"
  --set 'floe.ingest.sources.re.streams=^OBJ_.*' --set floe.ingest.sources.re.topic-prefix=re.
  --set floe.storage.worker.tick-interval=300ms --set floe.auto-create-topics=false)
start_floe "$work/f" "${floe_args[@]}" || exit 1
ingest() { curl -s "http://127.0.0.1:$HTTP_PORT/v1/ingest"; }
# Every stream of the source has a mirror, all committed to Iceberg up to the stream's end.
caught_up() { # expected number of streams
  ingest | /usr/bin/python3 -c "
import json, sys
ps = [p for s in json.load(sys.stdin)['sources'] for p in s['partitions']]
ok = len(ps) == $1 and all(p['source_position'] is not None and p['committed_position'] == p['source_position'] for p in ps)
sys.exit(0 if ok else 1)"
}
check "the streams present at start are mirrored and committed (3 + 1 by the regex)" wait_for 20 caught_up 4
sleep 0.2; T=$(date +%s%3N); sleep 0.2
check "after floe started: ORDERS2, KV late, object store late created; more in each" \
  timeout 30 node "$js/nats_kinds.mjs" "$URL" after "$work"
check "the streams created later are picked up and committed (6 + 2 by the list + 2 by the regex)" wait_for 25 caught_up 10
check "KV purges (a rollup: NATS drops the key's history; the table keeps it)" \
  timeout 30 node "$js/nats_kinds.mjs" "$URL" purge "$work"
check "purges committed" wait_for 15 caught_up 10
# kill -9 of floe while all three kinds are being written, then a restart: each stream resumes
# at its mirror's end (the object store's consumer, bound by name, too).
node "$js/nats_kinds.mjs" "$URL" crash "$work" >"$work/crash.out" 2>&1 &
CRASH_PID=$!
sleep 0.3
kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null
sleep 0.5
start_floe "$work/f" "${floe_args[@]}" || exit 1
check "written while floe was killed and restarted" wait "$CRASH_PID"
check "after kill -9 and restart: every stream committed to its end" wait_for 25 caught_up 10
# A consumer moved past messages by a purge before its first delivery: after a restart with
# nothing new in the streams, floe's consumers have not fetched a message yet; floe is paused
# (SIGSTOP) while two objects are put (each put's rollup moves them past the new chunks), then
# resumed. The skipped chunks are read from the stream directly (checked with the rest below).
kill -TERM "$FLOE_PID"; wait "$FLOE_PID"; FLOE_PID=
start_floe "$work/f" "${floe_args[@]}" || exit 1
check "restarted with nothing new: every stream committed" wait_for 25 caught_up 10
sleep 1
kill -STOP "$FLOE_PID"
check "objects put while floe is paused" timeout 30 node "$js/nats_kinds.mjs" "$URL" skip "$work"
kill -CONT "$FLOE_PID"
# (Until the paused process appends, /v1/ingest still shows the stream's end from before.)
filled() { grep -q "ingest $1: stream OBJ_files delivered sequence .* read them directly" "$work/f/floe.log"; }
check "the chunks the consumers were moved past are read directly (source nats)" wait_for 15 filled nats
check "the chunks the consumers were moved past are read directly (source re)" wait_for 15 filled re
check "after the pause: every stream committed to its end" wait_for 25 caught_up 10
topics_of() { # source -> its mirror topics, sorted
  ingest | /usr/bin/python3 -c "
import json, sys
print(' '.join(sorted(p['topic'] for s in json.load(sys.stdin)['sources'] if s['name'] == '$1' for p in s['partitions'])))"
}
check "a list selects its streams: $(topics_of some)" test "$(topics_of some)" = "some.KV_late some.ORDERS2"
check "a ^regex selects its streams: $(topics_of re)" test "$(topics_of re)" = "re.OBJ_files re.OBJ_late"
check "* selects every stream: $(topics_of nats)" \
  test "$(topics_of nats)" = "nats.KV_cfg nats.KV_late nats.OBJ_files nats.OBJ_late nats.ORDERS nats.ORDERS2"
for t in ORDERS ORDERS2 KV_cfg KV_late OBJ_files OBJ_late; do
  /usr/bin/python3 "$here/iceberg_files.py" "$work/f/data/catalog.db" floe "nats_$t" > "$work/f_nats_$t.json" 2>>"$work/py.err"
done
out=$(timeout 60 node "$js/kinds_check.mjs" "$URL" "$work" "$T" nats. 2>&1); rc=$?
echo "$out" | sed 's/^/  /'
check "DuckDB: every message once, KV history and as-of-T, objects byte-for-byte (rc $rc)" test "$rc" -eq 0
check "the override applied: ORDERS2 sealed by max-messages" grep -q "of nats.ORDERS2-0 sealed by max-messages" "$work/f/floe.log"
check "ORDERS sealed by the source's max-age" grep -q "of nats.ORDERS-0 sealed by max-age" "$work/f/floe.log"
st=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "readyz has the source up" contains "$st" '"ingest-nats":{"status":"up"'
if [ "$e2e_failed" -gt 0 ]; then grep -i "ingest\|error" "$work/f/floe.log" | tail -30; fi
kill -TERM "$FLOE_PID"; wait "$FLOE_PID"; rc=$?; FLOE_PID=
check "floe stops cleanly (rc $rc)" test "$rc" -eq 0
finish
