#!/usr/bin/env bash
# 1,000 appends of one small data file each to one table, with manifest merging (Floe's
# default) and without it (the manifest list grows by one per commit) as the comparison.
# Usage: BUILD=build bash bench/iceberg/run.sh [--commits N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD:-$here/build}"
exec "$build/bench/iceberg_commit_bench" "$@"
