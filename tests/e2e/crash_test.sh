#!/usr/bin/env bash
# Crash test: CYCLES times, start floe, produce with acks=all while the storage worker offloads
# and commits, and SIGKILL floe at a random moment. Then restart once more and let the worker
# finish. The table must hold each offset once, without gaps, and every acknowledged record.
# Run under tests/s3/moto_env.py (S3TEST_ENDPOINT set), the warehouse is s3:// on that server
# and the table is read from a boto3 download.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
cycles=${CYCLES:-20}
topic=crash
settings=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=200
          --set floe.storage.worker.tick-interval=100ms --set floe.topic-defaults.local.retention.ms=2000)
if [ -n "${S3TEST_ENDPOINT:-}" ]; then
  settings+=(--set "floe.storage.remote.path=s3://$S3TEST_BUCKET/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
             --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
             --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID"
             --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY")
fi
# The table's files, judged by readers Floe did not write (after a boto3 download on S3).
table_files() {
  if [ -n "${S3TEST_ENDPOINT:-}" ]; then
    rm -rf "$work/mirror"
    python3 "$here/../s3/s3_download.py" "$S3TEST_BUCKET" wh "$work/mirror" >/dev/null || return 1
    FLOE_S3_MIRROR="s3://$S3TEST_BUCKET/wh=$work/mirror" /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$topic"
  else
    /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$topic"
  fi
}
position() {
  if [ -n "${S3TEST_ENDPOINT:-}" ]; then
    python3 "$here/../s3/s3_positions.py" "$work/data/catalog.db" "$topic" crash-0
  else
    /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$topic" > "$work/files.json" || return 1
    /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["positions"].get("crash-0",0))' "$work/files.json"
  fi
}
echo 0 > "$work/acked"
RANDOM=42
for cycle in $(seq 1 "$cycles"); do
  start_floe "$work" "${settings[@]}" || exit 1
  from=$(cat "$work/acked")
  node "$js/produce_stream.mjs" 127.0.0.1:$KAFKA_PORT "$topic" "$from" $((from + 100000)) "$work/acked" &
  producer=$!
  sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
  kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
  wait "$producer"
done
acked=$(cat "$work/acked")
check "records were acknowledged across $cycles crashes ($acked)" test "$acked" -gt 0
start_floe "$work" "${settings[@]}" || exit 1
end=$(kcat -b 127.0.0.1:$KAFKA_PORT -Q -t "$topic:0:-1" 2>/dev/null | awk '{print $NF}')
done_=""
for _ in $(seq 1 120); do
  pos=$(position) || break
  [ -n "$end" ] && [ "$pos" -ge "$end" ] && { done_=1; break; }
  sleep 0.5
done
table_files > "$work/files.json"
check "after restart the table catches up with the log end $end (position ${pos:-none})" test -n "$done_"
check "table: each offset once, no gaps, every acked record" node "$js/check_crash.mjs" "$work/files.json" "$acked"
recovered=$(grep -c "already committed up to offset" "$work/floe.log")
echo "crash_test: $cycles kills, $acked acknowledged records, $recovered committed-but-unmarked segment(s) recognised"
stop_floe
finish
