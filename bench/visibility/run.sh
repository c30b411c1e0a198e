#!/usr/bin/env bash
# Produce-to-visible-in-Iceberg latency (issue 6): floe serve with segment.ms=1000 and a 1 s
# storage-worker tick; one record every 50 ms for 20 s (kafkajs, acks=all); a record counts as
# visible when the Iceberg commit holding it has landed (offloaded-up-to marker).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
kport=$(port); hport=$(port)
start_floe $kport $hport "$work/data" --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval="${TICK:-1s}"
echo "segment.ms=1000, storage worker tick ${TICK:-1s}"
node "$here/tests/js/bench/visibility.mjs" 127.0.0.1:$kport http://127.0.0.1:$hport visibility 50 "${DURATION:-20}"
