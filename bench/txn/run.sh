#!/usr/bin/env bash
# Transactional vs idempotent produce throughput (librdkafka, acks=all, 100-byte records, one
# partition each, same run; transactions of 100, 1,000 and 10,000 records). Usage: RECORDS=200000 bash bench/txn/run.sh
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
source "$here/tests/e2e/lib.sh"
FLOE_BIN="$build/bin/floe"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
start_floe "$work" >/dev/null
echo "records: ${RECORDS:-200000} x 100 bytes, acks=all"
"$build/bench/floe-bench-txn" "127.0.0.1:$KAFKA_PORT" "${RECORDS:-200000}"
