#!/usr/bin/env bash
# End-to-end produce/fetch benchmark: a librdkafka producer and consumer against `floe serve`
# (100-byte records; acks=1 and acks=all; 1 and 4 partitions), and in the same run the same
# records pushed into redis-server with pipelined XADD. Prints each figure and the ratio.
#   BUILD=build RECORDS=1000000 bash bench/e2e/run.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
records="${RECORDS:-1000000}"
value_size="${VALUE_SIZE:-100}"
FLOE_BIN="${FLOE_BENCH_BROKER:-${FLOE_BIN:-}}"
kport=$(port); hport=$(port); rport=$(port)
start_floe $kport $hport "$work/floe" --set floe.topic-defaults.remote.storage.enable=false
start_redis $rport

echo "records=$records value=${value_size}B, client and server on the same $(nproc)-core machine"
out=()
for parts in 1 4; do
  for acks in 1 all; do
    line=$("$build/bench/floe-bench-kafka" --brokers 127.0.0.1:$kport --topic "bench-$parts-$acks" \
      --records "$records" --value-size "$value_size" --acks "$acks" --partitions "$parts")
    echo "$line"; out+=("$line")
  done
done
peer=$("$build/bench/floe-bench-redis-xadd" --port "$rport" --records "$records" --value-size "$value_size" --pipeline 1000)
echo "$peer"
peer_rate=$(grep -oE '[0-9]+ records/s' <<<"$peer" | head -1 | cut -d' ' -f1)
for line in "${out[@]}"; do
  rate=$(grep -oE '[0-9]+ records/s' <<<"$line" | head -1 | cut -d' ' -f1)
  what=$(cut -d: -f1 <<<"$line" | head -1)
  awk -v r="$rate" -v p="$peer_rate" -v w="$what" 'BEGIN { printf "ratio %-45s %.2fx redis XADD\n", w, r / p }'
done
