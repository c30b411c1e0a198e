#!/usr/bin/env bash
# Consumer throughput by fetch size: a librdkafka consumer reads the same records from `floe
# serve` with max.partition.fetch.bytes (= fetch.max.bytes) of 1, 4, 16 and 64 MiB, in turns,
# median of ROUNDS. No Kafka broker is installed on this machine, so the named peer is the same
# consumer at 1 MiB (librdkafka's default max.partition.fetch.bytes) in the same run; a second
# series lifts librdkafka's pre-fetch queue limits (queued.min.messages=10000000,
# queued.max.messages.kbytes=2097151), so it shows what the client does when it never pauses;
# a third reads 1000-byte records (RECORDS/10 of them), where the byte limits matter more.
# librdkafka pauses for about a second whenever its queue fills, also when the consumer thread
# merely falls behind for a moment on a busy machine: "client pauses" on a line say how often.
#   BUILD=build RECORDS=2000000 ROUNDS=5 bash bench/fetch/run.sh
# FLOE_BENCH_BROKER=path/to/floe measures another build (e.g. one without the Fetch answer caps).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
records="${RECORDS:-2000000}"
rounds="${ROUNDS:-5}"
FLOE_BIN="${FLOE_BENCH_BROKER:-${FLOE_BIN:-}}"
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
"$build/bench/floe-bench-kafka" --brokers 127.0.0.1:$kport --topic fetch-bench-1k --records $((records / 10)) \
  --value-size 1000 --acks 1 --partitions 1 --no-consume
"$build/bench/floe-bench-fetch" --brokers 127.0.0.1:$kport --topic fetch-bench-1k --records $((records / 10)) \
  --fetch-mib 1,4,16,64 --rounds "$rounds" --label "default client, 1000-byte records"
