#!/usr/bin/env bash
# Issue 30: encrypted offload with the aws-kms provider against moto's KMS (envelope encryption:
# a data key per file from GenerateDataKey, wrapped in the file's key_metadata), through kill -9
# and a KMS outage. kcat produces every record at once; floe is killed -9 three times while the
# segments are being offloaded, and moto is paused (SIGSTOP) for a few seconds, so offload stalls
# on the key provider: /readyz shows it down, nothing is lost, and offload resumes by itself.
# Readers Floe did not write judge the table: boto3 unwraps each file's data key with KMS
# Decrypt (from the key_metadata python3-avro reads from the manifests), and DuckDB reads every
# file with its own key: each record exactly once, every value right. kcat reads everything back
# through tiered Fetch. Prints the KMS requests per million records offloaded.
# usage: kms_env.py -- encryption_kms_test.sh FLOE_BIN   (KMSTEST_* from src/crypto/tests/kms_env.py)
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
MOTO_PID=$(pgrep -f "moto_server_signed.py -H 127.0.0.1 -p ${KMSTEST_ENDPOINT##*:}\$" | head -1)
trap '[ -n "$MOTO_PID" ] && kill -CONT "$MOTO_PID" 2>/dev/null; stop_floe; [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
total=${RECORDS:-40000}
export AWS_ACCESS_KEY_ID=any AWS_SECRET_ACCESS_KEY=any
args=(--set floe.encryption.provider=aws-kms --set floe.encryption.kms.key-id="$KMSTEST_ALIAS"
      --set floe.encryption.kms.endpoint="$KMSTEST_ENDPOINT" --set floe.encryption.kms.region="$KMSTEST_REGION"
      --set floe.encryption.kms.request-timeout=1s --set floe.encryption.kms.max-attempts=2
      --set floe.topic-defaults.floe.iceberg.encryption=uniform
      --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=300
      --set floe.topic-defaults.local.retention.ms=1000 --set floe.storage.worker.tick-interval=200ms)
check "moto_server found (pid ${MOTO_PID:-none}) for $KMSTEST_ENDPOINT" test -n "$MOTO_PID"

files_of() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe kms_t; }
position() { # records the table holds (its committed position), 0 before the first commit
  files_of 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(sum(json.load(sys.stdin)["positions"].values()))' 2>/dev/null || echo 0
}
seq 0 $((total - 1)) | awk '{printf "key-%d|value-%d\n", $1 % 97, $1}' >"$work/expected"
# Fixed ports across restarts, so the producer reconnects to the restarted broker.
KP=$(free_port); HP=$(free_port)
args+=(--set floe.kafka.listen=127.0.0.1:$KP --set floe.http.listen=127.0.0.1:$HP)
start_floe "$work" "${args[@]}" || exit 1
broker() { echo 127.0.0.1:$KP; }
HTTP_PORT=$HP
# An idempotent producer (acks=all) fed 1,000 records every 0.1 s, while floe is killed -9 three
# times: segments seal every 300 ms and are offloaded as they come, so each kill lands during
# encrypted offload.
# (librdkafka through python3-confluent-kafka: kcat gives up when its only broker is down.)
# The last 5,000 records wait until the third kill is over, so every kill lands before the end
# (on a loaded machine the producer could otherwise finish first).
/usr/bin/python3 - "$work/expected" "$(broker)" "$work/kills-done" >"$work/producer.out" 2>&1 <<'EOF' &
import os, sys, time
from confluent_kafka import Producer
p = Producer({"bootstrap.servers": sys.argv[2], "enable.idempotence": True, "acks": "all",
              "message.timeout.ms": 120000, "linger.ms": 5})
failed = []
def done(err, msg):
    if err is not None:
        failed.append(str(err))
lines = [l.split("|", 1) for l in open(sys.argv[1]).read().splitlines()]
for i in range(0, len(lines), 1000):
    if i == len(lines) - 5000:
        for _ in range(1200):
            if os.path.exists(sys.argv[3]):
                break
            p.poll(0.1)
    for k, v in lines[i:i + 1000]:
        while True:
            try:
                p.produce("kms-t", key=k, value=v, on_delivery=done)
                break
            except BufferError:
                p.poll(0.1)
    p.poll(0)
    time.sleep(0.1)
left = p.flush(150)
print(f"undelivered {left}, failed {len(failed)}: {failed[:3]}")
sys.exit(0 if left == 0 and not failed else 1)
EOF
PRODUCER=$!
for i in 1 2 3; do
  sleep 1.$((RANDOM % 5))
  p=$(position)
  kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
  echo "  kill -9 number $i with the table at $p of $total records"
  start_floe "$work" "${args[@]}" || exit 1
  HTTP_PORT=$HP
done
touch "$work/kills-done"
wait "$PRODUCER"; rc=$?
check "the idempotent producer delivered every record across the kills (rc $rc: $(cat "$work/producer.out"))" test "$rc" -eq 0
check "the table was short of the end at the last kill ($p < $total)" test "$p" -lt "$total"

# A KMS outage: moto paused; new segments cannot get a data key.
seq $total $((total + 999)) | awk '{printf "key-%d|value-%d\n", $1 % 97, $1}' >>"$work/expected"
total=$((total + 1000))
kill -STOP "$MOTO_PID"
tail -n 1000 "$work/expected" | kcat -P -b "$(broker)" -t kms-t -K '|' -X topic.acks=all
check "kcat produced 1,000 more while KMS is down" test $? -eq 0
ready_down() { curl -s -m 5 "http://127.0.0.1:$HTTP_PORT/readyz" | grep -q '"key-provider":{"status":"down"'; }
check "/readyz shows the key provider down during the outage" wait_for 15 ready_down
sleep 4 # longer than an offload's KMS attempts (2 x 1 s)
kill -CONT "$MOTO_PID"
ready_up() { curl -s -m 5 "http://127.0.0.1:$HTTP_PORT/readyz" | grep -q '"key-provider":{"status":"up"'; }
check "/readyz shows it up again once KMS answers" wait_for 15 ready_up
caught_up() { [ "$(position)" -ge "$total" ]; }
check "offload resumes by itself: the table reaches all $total records" wait_for 60 caught_up
check "floe logged the offload that failed on KMS" grep -q "warn.*KMS GenerateDataKey" "$work/floe.log"

files_of >"$work/files.json"
# Independent readers: boto3 unwraps each file's data key (KMS Decrypt of the CiphertextBlob in
# key_metadata: u8 version, u8 'M', u16 id length, key ARN, u16 blob length, blob), and DuckDB
# reads each file with its own key.
python3 - "$work/files.json" "$KMSTEST_ENDPOINT" "$KMSTEST_REGION" "$KMSTEST_KEY_ARN" >"$work/keys.sql" 2>"$work/keys.err" <<'EOF'
import base64, json, struct, sys
import boto3
files = json.load(open(sys.argv[1]))["files"]
kms = boto3.client("kms", endpoint_url=sys.argv[2], region_name=sys.argv[3],
                   aws_access_key_id="any", aws_secret_access_key="any")
pragmas, reads = [], []
for i, f in enumerate(sorted(files, key=lambda f: f["path"])):
    m = bytes.fromhex(f["key_metadata"])
    assert m[0] == 1 and m[1:2] == b"M", m[:2]
    (idlen,) = struct.unpack(">H", m[2:4])
    arn = m[4:4 + idlen].decode()
    assert arn == sys.argv[4], (arn, sys.argv[4])
    (bloblen,) = struct.unpack(">H", m[4 + idlen:6 + idlen])
    blob = m[6 + idlen:6 + idlen + bloblen]
    assert len(m) == 6 + idlen + bloblen
    key = kms.decrypt(CiphertextBlob=blob)["Plaintext"]
    assert len(key) == 32, len(key)
    pragmas.append(f"PRAGMA add_parquet_key('f{i}', '{base64.b64encode(key).decode()}')")
    reads.append(f"SELECT \"offset\", key, value FROM read_parquet('{f['path']}', encryption_config = {{footer_key: 'f{i}'}})")
print(len(files))
for p in pragmas:
    print(p)
print(" UNION ALL ".join(reads))
EOF
check "boto3 unwrapped every file's data key with KMS Decrypt ($(head -1 "$work/keys.sql") files; $(tail -1 "$work/keys.err"))" \
  test -s "$work/keys.sql" -a ! -s "$work/keys.err"
mapfile -t stmts < <(tail -n +2 "$work/keys.sql")
last=${#stmts[@]}; body=${stmts[$((last - 1))]}
sql="SELECT count(*), count(DISTINCT \"offset\"), min(\"offset\"), max(\"offset\"),
       sum(CASE WHEN value = ('value-' || \"offset\")::BLOB AND key = ('key-' || (\"offset\" % 97))::BLOB THEN 1 ELSE 0 END)
     FROM ($body)"
out=$(node "$js/duckdb_sql.mjs" "${stmts[@]:0:$((last - 1))}" "$sql" 2>&1)
check "DuckDB reads every file with its unwrapped key: $total records, each once, every key and value right (got '$out')" \
  test "$out" = "$total	$total	0	$((total - 1))	$total"
check "no file is plaintext Parquet" /usr/bin/python3 -c '
import json,sys
fs=json.load(open(sys.argv[1]))["files"]
assert fs and all(open(f["path"],"rb").read(4)==b"PARE" for f in fs)' "$work/files.json"

timeout 60 kcat -C -b "$(broker)" -t kms-t -o beginning -e -q -f '%k|%s\n' >"$work/got" 2>"$work/kcat.err"
check "kcat reads back every record, exactly, through tiered Fetch ($(wc -l <"$work/got") lines)" cmp -s "$work/expected" "$work/got"

calls=$(curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk '/^floe_kms_requests_total/ {s += $2} END {print s + 0}')
nfiles=$(head -1 "$work/keys.sql")
echo "  KMS: $calls requests since the last start for $nfiles files of $total records" \
     "($(awk -v c="$calls" -v n="$total" 'BEGIN {printf "%.0f", c * 1e6 / n}') per million records; one GenerateDataKey a file, Decrypt for reads)"
# A column key named by a topic config is checked with KMS when the config is set: a usable key
# passes; an unknown, disabled or pending-deletion key is refused with INVALID_CONFIG naming it.
/usr/bin/python3 - "$(broker)" "$KMSTEST_OTHER_KEY_ARN" \
  "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000" \
  "$KMSTEST_DISABLED_KEY_ARN" "$KMSTEST_PENDING_KEY_ARN" >"$work/keycheck.out" 2>&1 <<'EOF'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
a = AdminClient({"bootstrap.servers": sys.argv[1]})
def create(name, key):
    cfg = {"floe.iceberg.encryption": "columns", "floe.iceberg.encryption.columns": f"key,value:{key}"}
    try:
        a.create_topics([NewTopic(name, 1, 1, config=cfg)], request_timeout=30)[name].result(30)
        return "ok"
    except Exception as e:
        return str(e)
ok = create("kms-col-ok", sys.argv[2])
print("usable key:", ok)
bad = 0
for i, key in enumerate(sys.argv[3:]):
    r = create(f"kms-col-bad{i}", key)
    print("refused" if "INVALID_CONFIG" in r and key in r else "NOT REFUSED", key, r)
    bad += "INVALID_CONFIG" in r and key in r
sys.exit(0 if ok == "ok" and bad == 3 else 1)
EOF
rc=$?
check "topic configs naming KMS keys: a usable key accepted, unknown/disabled/pending-deletion keys refused naming them ($(tr '\n' ' ' <"$work/keycheck.out"))" \
  test $rc -eq 0
# The accepted topic's value column is keyed by a KMS key ARN (colons of its own): its records
# are offloaded and read back exactly through tiered Fetch.
seq 0 19 | awk '{printf "k%d|v%d\n", $1, $1}' >"$work/col-expected"
kcat -P -b "$(broker)" -t kms-col-ok -K '|' <"$work/col-expected"
col_rows() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe kms_col_ok 2>/dev/null |
  /usr/bin/python3 -c 'import json,sys; print(sum(json.load(sys.stdin)["positions"].values()))' 2>/dev/null || echo 0; }
for _ in $(seq 1 100); do [ "$(col_rows)" -ge 20 ] && break; sleep 0.3; done
check "a column keyed by a KMS key ARN is offloaded ($(col_rows) of 20 rows)" test "$(col_rows)" -ge 20
timeout 60 kcat -C -b "$(broker)" -t kms-col-ok -o beginning -e -q -f '%k|%s\n' >"$work/col-got" 2>/dev/null
check "kcat reads that topic back exactly" cmp -s "$work/col-expected" "$work/col-got"
stop_floe; rc=$?
check "floe stops cleanly (rc $rc)" test "$rc" -eq 0
finish
