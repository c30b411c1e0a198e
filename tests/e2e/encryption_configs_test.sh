#!/usr/bin/env bash
# Issue 30: the encryption topic configs from a Kafka client. Without a key provider a topic
# asking for encryption is refused (CreateTopics and AlterConfigs answer INVALID_CONFIG naming
# floe.encryption.provider) and DescribeConfigs reports the defaults; with a keyring provider
# (an owner-only key file) they are accepted (the lake encrypts: tests/e2e/encryption_test.sh)
# and DescribeConfigs reports them; bad values are still refused naming the config.
FLOE_BIN="$(realpath "$1")"
ADMIN="$(realpath "$2")"   # librdkafka's Admin API client (src/kafka/tests/rdkafka_admin.c)
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT

line() { grep -F -- "$1" "$work/out" | head -1; }

start_floe "$work" || exit 1
node "$js/encryption_configs.mjs" 127.0.0.1:$KAFKA_PORT none >"$work/out" 2>&1
cat "$work/out"
check "no provider: CreateTopics uniform is INVALID_CONFIG" contains "$(line 'create none-uniform')" "create none-uniform 40"
# kafkajs drops the broker's error message; librdkafka shows it.
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT create-topic none-rd 1 floe.iceberg.encryption=uniform 2>&1); rc=$?
echo "$out"
check "librdkafka CreateTopics refused (rc=$rc)" test "$rc" -eq 1
check "the refusal names floe.encryption.provider" contains "$out" "floe.encryption.provider"
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT alter-config topic none-plain floe.iceberg.encryption=uniform 2>&1); rc=$?
echo "$out"
check "librdkafka AlterConfigs refused (rc=$rc)" test "$rc" -eq 1
check "the AlterConfigs refusal names floe.encryption.provider" contains "$out" "floe.encryption.provider"
check "an unknown mode is INVALID_CONFIG" contains "$(line 'create none-bad')" "create none-bad 40"
check "a plain topic is created" contains "$(line 'create none-plain')" "create none-plain 0"
check "DescribeConfigs reports floe.iceberg.encryption=none" contains "$(cat "$work/out")" "describe none-plain floe.iceberg.encryption=none"
check "DescribeConfigs reports the footer default" contains "$(cat "$work/out")" "describe none-plain floe.iceberg.encryption.footer=encrypted"
check "DescribeConfigs reports the algorithm default" contains "$(cat "$work/out")" "describe none-plain floe.iceberg.encryption.algorithm=AES_GCM_V1"
check "no provider: AlterConfigs to columns is INVALID_CONFIG" contains "$(line 'alter none-plain')" "alter none-plain 40"
check "the plain topic stays unencrypted" test "$(grep -c 'describe none-plain floe.iceberg.encryption=none' "$work/out")" -eq 2
stop_floe

printf '{"current": "k1", "keys": {"k1": "AAECAwQFBgcICQoLDA0ODwABAgMEBQYHCAkKCwwNDg8="}}' >"$work/keys.json"
chmod 600 "$work/keys.json"
start_floe "$work" --set floe.encryption.provider=keyring --set floe.encryption.keyring-file="$work/keys.json" || exit 1
node "$js/encryption_configs.mjs" 127.0.0.1:$KAFKA_PORT kr >"$work/out" 2>&1
cat "$work/out"
check "keyring: CreateTopics uniform is accepted (the lake encrypts)" contains "$(line 'create kr-uniform')" "create kr-uniform 0"
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT create-topic kr-rd 1 floe.iceberg.encryption=uniform 2>&1); rc=$?
echo "$out"
check "librdkafka CreateTopics with encryption accepted with a keyring (rc=$rc)" test "$rc" -eq 0
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT describe-config topic kr-rd floe.iceberg.encryption 2>&1)
check "DescribeConfigs reports the topic's encryption ($out)" contains "$out" "uniform"
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT create-topic kr-cols 1 floe.iceberg.encryption=columns 2>&1); rc=$?
check "columns mode without floe.iceberg.encryption.columns is refused (rc=$rc)" test "$rc" -eq 1
check "... naming the missing config" contains "$out" "floe.iceberg.encryption.columns"
check "keyring: an unknown mode is still INVALID_CONFIG" contains "$(line 'create kr-bad')" "create kr-bad 40"
check "keyring: AlterConfigs to columns is accepted" contains "$(line 'alter kr-plain')" "alter kr-plain 0"
check "DescribeConfigs reports the columns mode after AlterConfigs" contains "$(cat "$work/out")" "describe kr-plain floe.iceberg.encryption=columns"
check "... and its columns" contains "$(cat "$work/out")" "describe kr-plain floe.iceberg.encryption.columns=key,value"
out=$("$ADMIN" 127.0.0.1:$KAFKA_PORT alter-config topic kr-plain floe.iceberg.encryption.algorithm=AES_GCM_CTR_V1 2>&1); rc=$?
check "the other encryption configs can be altered (rc=$rc: $out)" test "$rc" -eq 0
check "/readyz shows the key provider" contains "$(curl -s "http://127.0.0.1:$HTTP_PORT/readyz")" "key-provider"
check "floe logs the keyring, not the key" bash -c "grep -q \"current key 'k1'\" '$work/floe.log' && ! grep -q AAECAwQF '$work/floe.log'"
stop_floe
check "floe stops cleanly" test $? -eq 0
finish
