#!/usr/bin/env bash
# Floe's Parquet writer vs DuckDB's on the same generated rows (1M rows, 100 B and 1 KiB values,
# zstd and snappy, one thread each); then the cost of Parquet Modular Encryption (plaintext
# against encrypted, written and read in the same run). Usage: BUILD=build bash bench/parquet/run.sh [--rows N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
"$build/bench/parquet_encryption_bench" "$@"
exec "$build/bench/parquet_vs_duckdb" "$@"
