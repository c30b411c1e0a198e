#!/usr/bin/env bash
# Thresholds of zero (issue 32): a JetStream source with max-age: 0 and mode: offload lands each
# message in Iceberg as soon as it arrives. 1,000 messages published one at a time (official npm
# nats client, tests/js/e2e/zero_latency.mjs) are each committed to the table within 2 s of their
# publish acknowledgement (clocked against /v1/ingest's committed position), the stream keeps at
# most its last message, and DuckDB reads each of the 1,000 once from the data files python3-avro
# lists. Prints the data files and commits it took (the small-file price). Run through
# tests/s3/moto_env.py (S3TEST_* set) the warehouse is on S3 (moto) and the S3 requests per
# message are printed from floe_s3_requests_total.
# usage: ingest_jetstream_zero_test.sh FLOE_BIN   |   moto_env.py BUCKET -- ingest_jetstream_zero_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
mkdir -p "$work/f" "$work/nats"
NATS_PID=
N=${N:-1000}
cleanup() {
  [ -n "$NATS_PID" ] && kill -9 "$NATS_PID" 2>/dev/null
  [ -n "${FLOE_PID:-}" ] && kill -9 "$FLOE_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
start_nats "$work/nats" "$work/nats.log"; URL="nats://127.0.0.1:$NATS_PORT"
# node -e resolves 'nats' from the working directory: run it from tests/js.
(cd "$here/../js" && timeout 20 node --input-type=module -e "
import { connect } from 'nats';
const nc = await connect({ servers: '$URL' });
await (await nc.jetstreamManager()).streams.add({ name: 'Z', subjects: ['z.>'] });
await nc.close();") || { echo "FAIL: creating stream Z"; exit 1; }
s3=()
if [ -n "${S3TEST_ENDPOINT:-}" ]; then
  s3=(--set "floe.storage.remote.path=s3://$S3TEST_BUCKET/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
      --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
      --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID"
      --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY")
fi
start_floe "$work/f" "${s3[@]}" --set floe.ingest.sources.z.type=jetstream --set floe.ingest.sources.z.url="$URL" \
  --set floe.ingest.sources.z.stream=Z --set floe.ingest.sources.z.topic=z --set floe.ingest.sources.z.mode=offload \
  --set floe.ingest.sources.z.max-age=0 --set floe.auto-create-topics=false || exit 1
s3_before=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep '^floe_s3_requests_total')
t0=$(date +%s%N)
out=$(timeout 60 node "$js/zero_latency.mjs" "$URL" "127.0.0.1:$HTTP_PORT" Z z.x z "$N" 2000 2>&1); rc=$?
echo "$out" | sed 's/^/  /'
check "max-age=0: each of $N messages published one at a time committed to Iceberg within 2 s; offload keeps at most the last (rc $rc)" test "$rc" -eq 0
rows_are() {
  if [ -n "${S3TEST_ENDPOINT:-}" ]; then
    rm -rf "$work/mirror"; python3 "$here/../s3/s3_download.py" "$S3TEST_BUCKET" wh "$work/mirror" >/dev/null || return 1
    export FLOE_S3_MIRROR="s3://$S3TEST_BUCKET/wh=$work/mirror"
  fi
  /usr/bin/python3 "$here/iceberg_files.py" "$work/f/data/catalog.db" floe z > "$work/files.json" 2>>"$work/py.err" || return 1
  [ "$(node "$js/stream_rows.mjs" "$work/files.json" z-0)" = "$N 0 $((N - 1)) 1 0" ]
}
check "DuckDB: the table holds each of the $N messages once" rows_are
files=$(/usr/bin/python3 -c "import json; d=json.load(open('$work/files.json')); print(len(d['files']), d['snapshots'])")
commits=$(grep -c "offloaded segment .* of z-0" "$work/f/floe.log")
echo "  $N messages in $(( ($(date +%s%N) - t0) / 1000000 )) ms: data files / snapshots: $files, commits logged: $commits"
if [ -n "${S3TEST_ENDPOINT:-}" ]; then
  echo "  S3 requests while the $N messages landed (floe_s3_requests_total, per message):"
  curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | grep '^floe_s3_requests_total' | /usr/bin/python3 -c "
import re, sys
before = {}
for l in '$s3_before'.splitlines():
    m = re.match(r'.*operation=\"(\w+)\".* (\S+)$', l)
    if m: before[m.group(1)] = float(m.group(2))
for l in sys.stdin:
    m = re.match(r'.*operation=\"(\w+)\".* (\S+)$', l)
    if m:
        n = float(m.group(2)) - before.get(m.group(1), 0)
        print(f'    {m.group(1)}: {n:.0f} ({n / $N:.2f} per message)')"
fi
if [ "$e2e_failed" -gt 0 ]; then grep -i "ingest\|error\|warn" "$work/f/floe.log" | tail -30; fi
kill -TERM "$FLOE_PID"; wait "$FLOE_PID"; rc=$?; FLOE_PID=
check "floe stops cleanly (rc $rc)" test "$rc" -eq 0
finish
