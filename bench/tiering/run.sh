#!/usr/bin/env bash
# Offload and tiered-read throughput (see offload_bench.cc).
set -euo pipefail
build="${BUILD:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
"$build/bench/floe-bench-offload" --records "${RECORDS:-1000000}" --value-size 100
# The same offload to a local S3 server (moto, signature checking on), same run.
python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tests/s3/moto_env.py" floe-bench -- \
  "$build/bench/floe-bench-offload" --records "${RECORDS:-1000000}" --value-size 100 --s3
