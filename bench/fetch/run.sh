#!/usr/bin/env bash
# Consumer throughput by fetch size: a librdkafka consumer reads the same records from `floe
# serve` with max.partition.fetch.bytes (= fetch.max.bytes) of 1, 4, 16 and 64 MiB, in turns,
# median of ROUNDS. No Kafka broker is installed on this machine, so the named peer is the same
# consumer at 1 MiB (librdkafka's default max.partition.fetch.bytes) in the same run; a second
# series lifts librdkafka's pre-fetch queue limits (queued.min.messages=10000000,
# queued.max.messages.kbytes=2097151), so it shows what the client does when it never pauses.
#   BUILD=build RECORDS=2000000 ROUNDS=3 bash bench/fetch/run.sh
# FLOE_BIN=path/to/floe measures another build (e.g. one before the Fetch answer caps).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
records="${RECORDS:-2000000}"
rounds="${ROUNDS:-3}"
kport=$(port); hport=$(port)
start_floe $kport $hport "$work/floe" --set floe.topic-defaults.remote.storage.enable=false

echo "records=$records value=100B, 1 partition, client and server on the same $(nproc)-core machine," \
  "librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?')"
"$build/bench/floe-bench-kafka" --brokers 127.0.0.1:$kport --topic fetch-bench --records "$records" \
  --value-size 100 --acks 1 --partitions 1 --no-consume
"$build/bench/floe-bench-fetch" --brokers 127.0.0.1:$kport --topic fetch-bench --records "$records" \
  --fetch-mib 1,4,16,64 --rounds "$rounds" --label "default client"
"$build/bench/floe-bench-fetch" --brokers 127.0.0.1:$kport --topic fetch-bench --records "$records" \
  --fetch-mib 1,4,16,64 --rounds "$rounds" --label "no client queue limits" \
  -X queued.min.messages=10000000 -X queued.max.messages.kbytes=2097151
