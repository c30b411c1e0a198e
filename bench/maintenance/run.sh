#!/usr/bin/env bash
# Table maintenance figures (BENCHMARKS.md, "Table maintenance"): compaction rows/s beside the
# offload's in the same run (floe-bench-offload --compact: the storage worker offloads segments
# of 5,000 records, one small file each, then compaction reads and rewrites them on one thread);
# DuckDB count and filtered scan over 2,000 small files against the compacted table; scan
# planning at 10,000 commits before and after manifest rewrite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$root/build}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
"$build/bench/floe-bench-offload" --records "${RECORDS:-500000}" --value-size 100 --segment-records "${SEGMENT_RECORDS:-5000}" --compact
"$build/bench/floe-bench-maintenance" --dir "$dir" --files "${FILES:-2000}" --rows-per-file 500 \
  --commits "${COMMITS:-10000}" --keep
node "$root/tests/js/bench/maintenance_duckdb.mjs" "$dir/small.json" "$dir/compacted.json"
