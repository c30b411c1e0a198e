#!/usr/bin/env bash
# Issue 30: encrypted tables end to end, one floe for most checks. A keyring file; two topics
# created with librdkafka's Admin API: uniform (AES_GCM_V1, encrypted footer: the profile DuckDB
# reads) and columns (key, value, headers with their key; plaintext signed footer;
# AES_GCM_CTR_V1); and columns with a column of its own key (value with key 'pii', so holders of
# the file's key alone read offsets, keys and headers, never values). kcat produces; once offloaded and dropped locally, the records come back
# through Kafka Fetch (tiered reads) and HTTP lookups. Readers Floe did not write judge the
# files: DuckDB reads the uniform table's files with the key (same rows) and refuses them
# without it; the independent Python decryptor (tests/parquet/pme_verify.py, `cryptography`)
# checks every module of a columns-mode file, and finds the payload unreadable without the key.
# Then a rotation: `floe maintain --reencrypt` moves the uniform table to the new key, and floe
# restarts with a keyring without the old one: the uniform table still reads, the columns
# table's reads fail naming the file and the key id.
FLOE_BIN="$(realpath "$1")"
ADMIN="$(realpath "$2")"   # librdkafka's Admin API client (src/kafka/tests/rdkafka_admin.c)
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
n=${RECORDS:-3000}
key_b64="AAECAwQFBgcICQoLDA0ODwABAgMEBQYHCAkKCwwNDg8="
key_hex=$(/usr/bin/python3 -c 'import base64,sys; print(base64.b64decode(sys.argv[1]).hex())' "$key_b64")
pii_b64=$(head -c 32 /dev/zero | tr '\0' '\5' | base64)
pii_hex=$(/usr/bin/python3 -c 'import base64,sys; print(base64.b64decode(sys.argv[1]).hex())' "$pii_b64")
printf '{"current": "k1", "keys": {"k1": "%s", "pii": "%s"}}' "$key_b64" "$pii_b64" >"$work/keys.json"
chmod 600 "$work/keys.json"

tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
        --set floe.topic-defaults.local.retention.ms=1000 --set floe.storage.worker.tick-interval=300ms)
start_floe "$work" --set floe.encryption.provider=keyring --set floe.encryption.keyring-file="$work/keys.json" \
  "${tiered[@]}" || exit 1
broker=127.0.0.1:$KAFKA_PORT
api="http://127.0.0.1:$HTTP_PORT/v1"

out=$("$ADMIN" $broker create-topic enc-u 1 floe.iceberg.encryption=uniform 2>&1); rc=$?
check "an encrypted topic is created now that the lake encrypts (rc=$rc: $out)" test "$rc" -eq 0
out=$("$ADMIN" $broker create-topic enc-c 1 floe.iceberg.encryption=columns floe.iceberg.encryption.columns=key,value,headers \
  floe.iceberg.encryption.footer=plaintext floe.iceberg.encryption.algorithm=AES_GCM_CTR_V1 2>&1); rc=$?
check "a columns-mode topic is created (rc=$rc: $out)" test "$rc" -eq 0
out=$("$ADMIN" $broker create-topic enc-p 1 floe.iceberg.encryption=columns floe.iceberg.encryption.columns=key,value:pii,headers \
  floe.iceberg.encryption.footer=plaintext 2>&1); rc=$?
check "a topic whose value column has its own key is created (rc=$rc: $out)" test "$rc" -eq 0
# A column key the keyring lacks is refused when the config is set, naming it, at creation and
# at an alter; the topic keeps its config.
out=$("$ADMIN" $broker create-topic enc-x 1 floe.iceberg.encryption=columns floe.iceberg.encryption.columns=key,value:piii 2>&1); rc=$?
check "CreateTopics naming a key the keyring lacks is refused with INVALID_CONFIG naming it (rc=$rc: $out)" \
  sh -c '[ "$1" -ne 0 ] && printf %s "$2" | grep -q "INVALID_CONFIG" && printf %s "$2" | grep -q "piii"' _ "$rc" "$out"
out=$("$ADMIN" $broker alter-config topic enc-p floe.iceberg.encryption.columns=key,value:nokey 2>&1); rc=$?
check "AlterConfigs naming a key the keyring lacks is refused naming it (rc=$rc: $out)" \
  sh -c '[ "$1" -ne 0 ] && printf %s "$2" | grep -q "nokey"' _ "$rc" "$out"
check "enc-p keeps its column key after the refused alter" \
  sh -c 'curl -sf "$1/topics/enc-p/configs" | grep -q "key,value:pii,headers"' _ "$api"
out=$("$ADMIN" $broker create-topic enc-a 1 floe.iceberg.encryption=uniform floe.iceberg.encryption.aad-prefix=supplied 2>&1); rc=$?
check "a topic whose files' AAD prefix readers supply is created (rc=$rc: $out)" test "$rc" -eq 0

seq 0 $((n - 1)) | awk '{printf "key-%d|value-%d\n", $1 % 50, $1}' >"$work/expected"
for t in enc-u enc-c enc-p enc-a; do
  kcat -P -b $broker -t $t -K '|' -H src=e2e -z lz4 <"$work/expected"
  check "kcat produced $n records to $t" test $? -eq 0
done

# Bounded wait: both tables hold every record, and the local tier dropped what was offloaded.
files_of() { /usr/bin/python3 "$here/iceberg_files.py" "$work/data/catalog.db" floe "$1"; }
for t in enc_u enc_c enc_p enc_a; do
  got=0
  for _ in $(seq 1 100); do
    files_of $t >"$work/$t.json" 2>/dev/null && got=$(/usr/bin/python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["positions"].values()))' "$work/$t.json")
    [ "${got:-0}" -ge "$n" ] && break
    sleep 0.3
  done
  check "table $t holds all $n records (position ${got:-none})" test "${got:-0}" -ge "$n"
done
local_start() { curl -s "$api/topics" | /usr/bin/python3 -c "import json,sys; print([p['local_start'] for t in json.load(sys.stdin)['topics'] if t['name']=='$1' for p in t['partitions']][0])"; }
for t in enc-u enc-c enc-p enc-a; do
  s=0
  for _ in $(seq 1 100); do s=$(local_start $t); [ "${s:-0}" -gt 0 ] && break; sleep 0.2; done
  check "$t: the local tier dropped offloaded segments (local start $s)" test "${s:-0}" -gt 0
done

# Every data file entry names its key; the files are not plaintext Parquet.
check "every data file entry of enc_u carries key_metadata naming k1" /usr/bin/python3 -c '
import json,sys
fs=json.load(open(sys.argv[1]))["files"]
assert fs and all(bytes.fromhex(f["key_metadata"])==b"\x01K\x00\x02k1" for f in fs), fs
assert all(open(f["path"],"rb").read(4)==b"PARE" for f in fs)' "$work/enc_u.json"
check "enc_c files have a plaintext (signed) footer and name k1" /usr/bin/python3 -c '
import json,sys
fs=json.load(open(sys.argv[1]))["files"]
assert fs and all(f["key_metadata"] for f in fs) and all(open(f["path"],"rb").read(4)==b"PAR1" for f in fs)' "$work/enc_c.json"

# Kafka Fetch of offloaded offsets (tiered reads decrypt), for every mode.
for t in enc-u enc-c enc-p enc-a; do
  timeout 30 kcat -C -b $broker -t $t -o beginning -e -q -f '%k|%s\n' >"$work/got-$t" 2>"$work/kcat-$t.err"
  check "$t: kcat reads back every record, exactly, through the remote tier ($(wc -l <"$work/got-$t") lines)" \
    cmp -s "$work/expected" "$work/got-$t"
done
hdr=$(timeout 30 kcat -C -b $broker -t enc-c -o 5 -c 1 -e -q -f '%h')
check "headers come back decrypted (got '$hdr')" test "$hdr" = "src=e2e"

# HTTP lookups of offloaded records.
jq_() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
r=$(curl -s "$api/topics/enc-u/partitions/0/records?offset=10&limit=3")
check "lookup by offset from the encrypted table ($r)" test "$(jq_ "[(x['offset'], x['tier'], x['value']) for x in d['records']]" <<<"$r")" = "[(10, 'remote', 'value-10'), (11, 'remote', 'value-11'), (12, 'remote', 'value-12')]"
r=$(curl -s "$api/topics/enc-c/records?key=key-7&all=true")
check "lookup by key in the columns-mode table" test "$(jq_ "len(d['records']) == $n // 50 and all(x['value'] == 'value-%d' % x['offset'] for x in d['records'])" <<<"$r")" = "True"

# DuckDB reads a uniform file with the key (the README's query) and refuses it without.
f=$(/usr/bin/python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["files"], key=lambda f: f["path"])[0]["path"])' "$work/enc_u.json")
rows=$(/usr/bin/python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["files"], key=lambda f: f["path"])[0]["records"])' "$work/enc_u.json")
sql="SELECT count(*), sum(CASE WHEN value = ('value-' || \"offset\")::BLOB THEN 1 ELSE 0 END), min(\"offset\") FROM read_parquet('$f', encryption_config = {footer_key: 'k1'})"
out=$(node "$js/duckdb_sql.mjs" "PRAGMA add_parquet_key('k1', '$key_b64')" "$sql" 2>&1)
check "DuckDB reads the uniform file with the key: $rows rows, every value right (got '$out')" \
  bash -c "[ \"\$(cut -f1,2 <<<'$out')\" = \"$rows	$rows\" ]"
# The README's query: every file of the table at once.
sql="SELECT count(*), count(DISTINCT \"offset\"), sum(CASE WHEN value = ('value-' || \"offset\")::BLOB THEN 1 ELSE 0 END) FROM read_parquet('$work/data/warehouse/floe/enc_u/data/*/*.parquet', encryption_config = {footer_key: 'k1'}, hive_partitioning = false)"
out=$(node "$js/duckdb_sql.mjs" "PRAGMA add_parquet_key('k1', '$key_b64')" "$sql" 2>&1)
check "DuckDB reads the whole uniform table with the key: $n rows, each once, every value right (got '$out')" \
  test "$out" = "$n	$n	$n"
# What an outside reader needs, printed by floe: the keys' PRAGMA statements and the expression.
tables=(--set floe.data-dir="$work/data" --set floe.encryption.provider=keyring --set floe.encryption.keyring-file="$work/keys.json")
pragma=$("$FLOE_BIN" tables files enc-u --keys "${tables[@]}" 2>"$work/keys.err")
check "floe tables files --keys prints the key's PRAGMA ($(cat "$work/keys.err"))" test "$pragma" = "PRAGMA add_parquet_key('k1', '$key_b64');"
expr=$("$FLOE_BIN" tables files enc-u --sql "${tables[@]}" 2>/dev/null)
check "floe tables files --sql names the key ($expr)" contains "$expr" "encryption_config = {footer_key: 'k1'}"
out=$(node "$js/duckdb_sql.mjs" "$pragma" "SELECT count(*) FROM $expr" 2>&1)
check "DuckDB reads the table with what floe printed ($out rows)" test "$out" = "$n"
out=$(node "$js/duckdb_sql.mjs" "SELECT count(*) FROM read_parquet('$f')" 2>&1); rc=$?
check "DuckDB refuses the file without the key (rc=$rc)" test "$rc" -ne 0
out=$(node "$js/duckdb_sql.mjs" "PRAGMA add_parquet_key('x', '$(head -c 32 /dev/zero | base64)')" \
  "SELECT count(*) FROM read_parquet('$f', encryption_config = {footer_key: 'x'})" 2>&1); rc=$?
check "DuckDB refuses the file with a wrong key (rc=$rc)" test "$rc" -ne 0

# The independent decryptor: every module of a columns-mode file with the key; without it the
# payload stays unreadable while offsets read in clear.
check "pme_verify decrypts every module of a columns-mode file and finds the payload encrypted" \
  /usr/bin/python3 - "$here/../parquet" "$work/enc_c.json" "$key_hex" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import pme_verify
f = json.load(open(sys.argv[2]))["files"][0]
meta = bytes.fromhex(f["key_metadata"])
s = pme_verify.verify(f["path"], {meta: sys.argv[3]}, None)
cols = s["columns"]
enc = {c for c, v in cols.items() if v.get("encryption") != "plaintext"}
assert s["footer"] == "plaintext", s["footer"]
assert {"key", "value"} <= enc and all(c.startswith(("key", "value", "headers")) for c in enc), enc
assert all(v.get("readable") for v in cols.values()), cols
assert cols["offset"]["encryption"] == "plaintext"
n = pme_verify.verify(f["path"], {}, None)
assert not n["columns"]["value"].get("readable") and n["columns"]["offset"].get("readable"), n["columns"]
try:
    pme_verify.verify(f["path"], {meta: "11" * 32}, None)
    raise SystemExit("a wrong key went unnoticed")
except pme_verify.Fail as e:
    print("wrong key refused:", e)
EOF
# The value column with its own key: the file's key (k1) reads offsets, keys and headers, only
# the pii key reads values.
check "pme_verify: enc_p's values need the pii key, its other columns the file's key" \
  /usr/bin/python3 - "$here/../parquet" "$work/enc_p.json" "$key_hex" "$pii_hex" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import pme_verify
f = json.load(open(sys.argv[2]))["files"][0]
k1 = bytes.fromhex(f["key_metadata"])
assert k1 == b"\x01K\x00\x02k1", k1
pii = b"\x01K\x00\x03pii"
s = pme_verify.verify(f["path"], {k1: sys.argv[3]}, None)
cols = s["columns"]
assert not cols["value"].get("readable") and cols["value"]["encryption"] != "plaintext", cols["value"]
assert cols["key"].get("readable") and cols["key"]["encryption"] != "plaintext", cols["key"]
assert all(v.get("readable") for c, v in cols.items() if c.startswith("headers")), cols
s = pme_verify.verify(f["path"], {k1: sys.argv[3], pii: sys.argv[4]}, None)
assert all(v.get("readable") for v in s["columns"].values()), s["columns"]
try:
    pme_verify.verify(f["path"], {k1: sys.argv[3], pii: sys.argv[3]}, None)
    raise SystemExit("the file's key opened the pii column")
except pme_verify.Fail as e:
    print("the file's key does not open the pii column:", e)
EOF
# enc_a's files need their table's identifier as AAD prefix, which they do not store.
check "pme_verify: enc_a's files decrypt with the AAD prefix floe.enc_a only" \
  /usr/bin/python3 - "$here/../parquet" "$work/enc_a.json" "$key_hex" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import pme_verify
f = json.load(open(sys.argv[2]))["files"][0]
keys = {bytes.fromhex(f["key_metadata"]): sys.argv[3]}
s = pme_verify.verify(f["path"], keys, b"floe.enc_a")
assert all(v.get("readable") for v in s["columns"].values()), s["columns"]
for wrong in (None, b"floe.enc_u"):
    try:
        pme_verify.verify(f["path"], keys, wrong)
        raise SystemExit(f"read with AAD prefix {wrong}")
    except pme_verify.Fail as e:
        print(f"AAD prefix {wrong} refused:", e)
EOF

ready=$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")
check "/readyz shows the key provider up" contains "$ready" '"key-provider":{"status":"up"'
check "floe never logs the key" bash -c "! grep -q '$key_b64' '$work/floe.log'"
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0

# Rotation: k2 joins the keyring as current; `floe maintain --reencrypt` rewrites enc-u's files
# to it (enc-c keeps k1).
k2_b64=$(head -c 32 /dev/zero | tr '\0' '\7' | base64)
printf '{"current": "k2", "keys": {"k1": "%s", "k2": "%s"}}' "$key_b64" "$k2_b64" >"$work/keys-rot.json"
chmod 600 "$work/keys-rot.json"
out=$("$FLOE_BIN" maintain --set floe.data-dir="$work/data" --set floe.encryption.provider=keyring \
  --set floe.encryption.keyring-file="$work/keys-rot.json" --table enc-u --reencrypt 2>&1); rc=$?
echo "$out" | tail -3
check "floe maintain --reencrypt succeeds (rc=$rc)" test "$rc" -eq 0
check "... and reports the current key" contains "$out" "current key 'k2'"
files_of enc_u >"$work/enc_u.json"
check "every live enc_u file is now encrypted with k2, every row still there" /usr/bin/python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); fs=d["files"]
assert fs and all(bytes.fromhex(f["key_metadata"])==b"\x01K\x00\x02k2" for f in fs), fs
assert sum(f["records"] for f in fs)==int(sys.argv[2]), fs' "$work/enc_u.json" "$n"

# A keyring without k1: enc-u (re-encrypted) reads; enc-c's files cannot be read, and every
# reader says which file and which key, without crashing and without answering wrong data.
printf '{"current": "k2", "keys": {"k2": "%s"}}' "$k2_b64" >"$work/keys2.json"
chmod 600 "$work/keys2.json"
start_floe "$work" --set floe.encryption.provider=keyring --set floe.encryption.keyring-file="$work/keys2.json" \
  "${tiered[@]}" || exit 1
timeout 20 kcat -C -b 127.0.0.1:$KAFKA_PORT -t enc-u -o beginning -e -q -f '%k|%s\n' >"$work/got-rot" 2>/dev/null
check "enc-u reads back exactly with k2 alone after re-encryption" cmp -s "$work/expected" "$work/got-rot"
code=$(curl -s -o "$work/lookup.json" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/v1/topics/enc-c/partitions/0/records?offset=10&limit=3")
cat "$work/lookup.json"; echo
check "lookup without the key answers 503 (got $code)" test "$code" = 503
check "... naming the key id" grep -qF "key 'k1' of the keyring is not available" "$work/lookup.json"
check "... and the data file" grep -qF "enc_c/data/stream_key=enc-c-0/segment-" "$work/lookup.json"
check "... and no record" bash -c "! grep -q value-10 '$work/lookup.json'"
timeout 5 kcat -C -b 127.0.0.1:$KAFKA_PORT -t enc-c -o 0 -c 1 -e -f '%s\n' >"$work/nokey.out" 2>&1
got=$(grep -c '^value-' "$work/nokey.out")
check "Kafka Fetch without the key returns no records (got $got)" test "$got" -eq 0
for _ in $(seq 1 50); do grep -q "tiered fetch of enc-c-0 .*key 'k1' of the keyring" "$work/floe.log" && break; sleep 0.1; done
check "the broker logged which file and key it could not read" grep -q "tiered fetch of enc-c-0 .*key 'k1' of the keyring" "$work/floe.log"
check "floe is still running" kill -0 "$FLOE_PID"
stop_floe; rc=$?
check "floe stops cleanly without the key (rc=$rc)" test "$rc" -eq 0
finish
