#!/usr/bin/env bash
# Typed decode+write vs raw message rows, one thread each, and DuckDB writing the same typed rows
# from an in-memory table with one thread (the peer the issue names).
# Usage: BUILD=build bash bench/typed/run.sh [--rows N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
rows=1000000
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do [ "${args[$i]}" = "--rows" ] && rows="${args[$((i + 1))]}"; done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$build/bench/typed_decode_bench" "$@" --typed-out "$tmp/typed.parquet"
node "$here/tests/js/bench/typed_duckdb_peer.mjs" "$tmp/typed.parquet" "$rows"
