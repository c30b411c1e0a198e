#!/usr/bin/env bash
# The /v1 lookup API of a running floe across both tiers: records produced with kcat, local
# segments offloaded and deleted, then lookups by offset, key and time answered from the remote
# tier (Iceberg) and the local tier, plus the error answers (400, 404) and capped limits.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
# Run under tests/s3/moto_env.py (S3TEST_ENDPOINT set), the warehouse is s3:// on that server:
# remote lookups are then ranged GETs.
remote=(); scheme=file://
if [ -n "${S3TEST_ENDPOINT:-}" ]; then
  scheme=s3://
  remote=(--set "floe.storage.remote.path=s3://$S3TEST_BUCKET/wh" --set "floe.storage.remote.s3.endpoint=$S3TEST_ENDPOINT"
          --set floe.storage.remote.s3.path-style-access=true --set "floe.storage.remote.s3.region=$S3TEST_REGION"
          --set "floe.storage.remote.s3.access-key-id=$S3TEST_ACCESS_KEY_ID"
          --set "floe.storage.remote.s3.secret-access-key=$S3TEST_SECRET_ACCESS_KEY")
fi
start_floe "$work" "${remote[@]}" --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.storage.worker.tick-interval=200ms --set floe.topic-defaults.local.retention.ms=500 || exit 1
api="http://127.0.0.1:$HTTP_PORT/v1"
broker=127.0.0.1:$KAFKA_PORT
seq 0 1999 | sed 's/.*/key-&:value-&/' | kcat -P -b $broker -t lookups -K: -H src=e2e
# Wait (bounded) until the local tier has moved past every produced record.
for _ in $(seq 1 100); do
  start=$(curl -s "$api/topics" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["topics"][0]["partitions"][0]["local_start"])' 2>/dev/null)
  [ "${start:-0}" -ge 2000 ] && break; sleep 0.2
done
check "local segments offloaded and deleted (local_start ${start:-none})" test "${start:-0}" -ge 2000
# Newer records stay in the local tier: key-5 again, binary value. With 500 ms segments the
# storage worker would offload and delete them within a second, racing the lookups below on a
# loaded machine: the same floe again, without its storage worker (the remote tier is still read).
stop_floe
start_floe "$work" "${remote[@]}" --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500 \
  --set floe.topic-defaults.local.retention.ms=500 --set floe.storage.worker.enabled=false || exit 1
api="http://127.0.0.1:$HTTP_PORT/v1"
broker=127.0.0.1:$KAFKA_PORT
printf 'key-5:value-5-again\n' | kcat -P -b $broker -t lookups -K:
printf '\x00\xff\x01' | kcat -P -b $broker -t lookups -k binkey

jq_() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
topics=$(curl -s "$api/topics")
check "topics lists the table" contains "$topics" "\"location\":\"$scheme"
check "topics shows remote start 0" contains "$topics" '"remote_start":0'

r=$(curl -s "$api/topics/lookups/partitions/0/records?offset=10&limit=5")
check "by offset from the remote tier" test "$(jq_ "[x['offset'] for x in d['records']]" <<<"$r")" = "[10, 11, 12, 13, 14]"
check "remote records carry key, value and headers" test "$(jq_ "(d['records'][0]['tier'], d['records'][0]['key'], d['records'][0]['value'], d['records'][0]['headers'][0]['value'])" <<<"$r")" = "('remote', 'key-10', 'value-10', 'e2e')"
r=$(curl -s "$api/topics/lookups/partitions/0/records?offset=1998&limit=4")
check "by offset across the tier boundary" test "$(jq_ "[(x['offset'], x['tier']) for x in d['records']]" <<<"$r")" = "[(1998, 'remote'), (1999, 'remote'), (2000, 'local'), (2001, 'local')]"
r=$(curl -s "$api/topics/lookups/records?key=key-77")
check "by key from the remote tier" test "$(jq_ "[(x['offset'], x['value'], x['tier']) for x in d['records']]" <<<"$r")" = "[(77, 'value-77', 'remote')]"
r=$(curl -s "$api/topics/lookups/records?key=key-5")
check "by key: the newest is local" test "$(jq_ "[(x['offset'], x['value']) for x in d['records']]" <<<"$r")" = "[(2000, 'value-5-again')]"
r=$(curl -s "$api/topics/lookups/records?key=key-5&all=true")
check "by key, all: both tiers" test "$(jq_ "[x['offset'] for x in d['records']]" <<<"$r")" = "[5, 2000]"
r=$(curl -s "$api/topics/lookups/records?key=binkey")
check "binary values as base64" test "$(jq_ "(d['records'][0]['value'], d['records'][0]['value_encoding'])" <<<"$r")" = "('AP8B', 'base64')"
r=$(curl -s "$api/topics/lookups/records?key=key-77&encoding=base64")
check "encoding=base64 forces base64" test "$(jq_ "d['records'][0]['value']" <<<"$r")" = "dmFsdWUtNzc="
ts=$(curl -s "$api/topics/lookups/partitions/0/records?offset=100&limit=1" | jq_ "d['records'][0]['timestamp']")
r=$(curl -s "$api/topics/lookups/records?from-ts=$ts&to-ts=$ts&limit=5000")
check "by time range (remote)" test "$(jq_ "all(x['timestamp']==$ts for x in d['records']) and len(d['records'])>0" <<<"$r")" = "True"
r=$(curl -s "$api/topics/lookups/partitions/0/records?offset=0&limit=100000")
check "huge limits are capped at 1000" test "$(jq_ "len(d['records'])" <<<"$r")" = "1000"
check "1000 remote records in order across data files" test "$(jq_ "[x['offset'] for x in d['records']] == list(range(1000)) and all(x['value'] == 'value-%d' % x['offset'] for x in d['records'])" <<<"$r")" = "True"
r=$(curl -s "$api/topics/lookups/partitions/0/records?offset=1500&limit=1000")
check "remote then local, in order, from the middle of the table" test "$(jq_ "[x['offset'] for x in d['records']] == list(range(1500, 2002)) and d['next_offset'] == 2002" <<<"$r")" = "True"

code() { curl -s -o /dev/null -w '%{http_code}' "$1"; }
check "unknown topic 404" test "$(code "$api/topics/nope/records?key=a")" = 404
check "unknown partition 404" test "$(code "$api/topics/lookups/partitions/9/records?offset=0")" = 404
check "missing offset 400" test "$(code "$api/topics/lookups/partitions/0/records")" = 400
check "bad offset 400" test "$(code "$api/topics/lookups/partitions/0/records?offset=abc")" = 400
check "bad partition 400" test "$(code "$api/topics/lookups/partitions/x/records?offset=0")" = 400
check "bad time range 400" test "$(code "$api/topics/lookups/records?from-ts=5&to-ts=1")" = 400
check "no lookup kind 400" test "$(code "$api/topics/lookups/records")" = 400
check "unknown key 404" test "$(code "$api/topics/lookups/records?key=absent")" = 404
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
