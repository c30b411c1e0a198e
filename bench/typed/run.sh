#!/usr/bin/env bash
# Typed decode+write vs raw message rows, one thread each. Usage: BUILD=build bash bench/typed/run.sh [--rows N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
exec "$build/bench/typed_decode_bench" "$@"
