#!/usr/bin/env bash
# HTTP lookup latency, hot and cold, by offset and by key, against `floe serve` loaded through
# Kafka; peers in the same run: redis-server GET (hot) and DuckDB over the same Parquet files
# (cold by key). Usage: BUILD=build COLD=10000000 HOT=1000000 REQUESTS=10000 bash bench/lookups/run.sh
# ROW_GROUP_SIZE=8MB sets floe.storage.remote.iceberg.row-group-size (default: floe's, 128MB): a
# cold key lookup decodes the `key` column of each row group its bloom filter cannot rule out.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
cold="${COLD:-10000000}"; hot="${HOT:-1000000}"; requests="${REQUESTS:-10000}"
kport=$(port); hport=$(port); rport=$(port)
start_floe $kport $hport "$work/floe" --set floe.storage.worker.tick-interval=500ms \
  ${ROW_GROUP_SIZE:+--set floe.storage.remote.iceberg.row-group-size=$ROW_GROUP_SIZE}
start_redis $rport

"$build/bench/floe-bench-lookups" --brokers 127.0.0.1:$kport --http 127.0.0.1:$hport \
  --cold-records "$cold" --hot-records "$hot" --requests "$requests" --redis-port "$rport" \
  --keys-out "$work/keys.txt" ${ONLY:+--only "$ONLY"} || { tail -20 "$work/floe.log"; exit 1; }
[ "${ONLY:-}" = hot ] || node "$here/tests/js/bench/lookups_duckdb.mjs" "$work/floe/warehouse/floe/lookup_cold/data" "$work/keys.txt" \
  "${DUCKDB_REQUESTS:-300}"
du -sh "$work/floe/warehouse/floe/lookup_cold/data" | awk '{print "# cold table data files: " $1}'
echo "# row-group-size: ${ROW_GROUP_SIZE:-128MB (default)}"
if [ -n "${KEEP:-}" ]; then cp -r "$work/floe/warehouse/floe/lookup_cold/data" "$KEEP"; fi
