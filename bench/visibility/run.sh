#!/usr/bin/env bash
# Produce-to-visible-in-Iceberg latency (issue 6): floe serve with segment.ms=1000 and a 1 s
# storage-worker tick; one record every 50 ms for 20 s (kafkajs, acks=all); a record counts as
# visible when the Iceberg commit holding it has landed (offloaded-up-to marker).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
work="$(mktemp -d)"
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kport=$(port); hport=$(port)
"$build/bin/floe" serve --set floe.data-dir="$work/data" --set floe.kafka.listen=127.0.0.1:$kport \
  --set floe.http.listen=127.0.0.1:$hport --set floe.topic-defaults.remote.storage.enable=true \
  --set floe.topic-defaults.segment.ms=1000 --set floe.storage.worker.tick-interval="${TICK:-1s}" \
  >"$work/floe.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do grep -q "floe is up" "$work/floe.log" && break; sleep 0.1; done
echo "segment.ms=1000, storage worker tick ${TICK:-1s}"
node "$here/tests/js/bench/visibility.mjs" 127.0.0.1:$kport http://127.0.0.1:$hport visibility 50 "${DURATION:-20}"
