#!/usr/bin/env bash
# HTTP lookup latency, hot and cold, by offset and by key, against `floe serve` loaded through
# Kafka; peers in the same run: redis-server GET (hot) and DuckDB over the same Parquet files
# (cold by key). Usage: BUILD=build COLD=10000000 HOT=1000000 REQUESTS=10000 bash bench/lookups/run.sh
# ROW_GROUP_SIZE=8MB sets floe.storage.remote.iceberg.row-group-size (default: floe's, 128MB): a
# cold key lookup decodes the `key` column of each row group its bloom filter cannot rule out.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
cold="${COLD:-10000000}"; hot="${HOT:-1000000}"; requests="${REQUESTS:-10000}"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

kport=$(port); hport=$(port); rport=$(port)
"$build/bin/floe" serve --set floe.data-dir="$work/floe" --set floe.kafka.listen=127.0.0.1:$kport \
  --set floe.http.listen=127.0.0.1:$hport --set floe.storage.worker.tick-interval=500ms \
  ${ROW_GROUP_SIZE:+--set floe.storage.remote.iceberg.row-group-size=$ROW_GROUP_SIZE} \
  >"$work/floe.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$hport) 2>/dev/null && break; sleep 0.1; done
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done

"$build/bench/floe-bench-lookups" --brokers 127.0.0.1:$kport --http 127.0.0.1:$hport \
  --cold-records "$cold" --hot-records "$hot" --requests "$requests" --redis-port "$rport" \
  --keys-out "$work/keys.txt" ${ONLY:+--only "$ONLY"} || { tail -20 "$work/floe.log"; exit 1; }
[ "${ONLY:-}" = hot ] || node "$here/tests/js/bench/lookups_duckdb.mjs" "$work/floe/warehouse/floe/lookup_cold/data" "$work/keys.txt" \
  "${DUCKDB_REQUESTS:-300}"
du -sh "$work/floe/warehouse/floe/lookup_cold/data" | awk '{print "# cold table data files: " $1}'
echo "# row-group-size: ${ROW_GROUP_SIZE:-128MB (default)}"
if [ -n "${KEEP:-}" ]; then cp -r "$work/floe/warehouse/floe/lookup_cold/data" "$KEEP"; fi
