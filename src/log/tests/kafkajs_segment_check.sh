#!/bin/sh
# Integration test: batches encoded by kafkajs -> Floe's partition log -> segment file decoded
# by kafkajs. Arguments: <log_batch_tool> <kafkajs_segment_check.mjs>
set -eu
tool="$1"
script="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$script" gen "$work/batches.bin" "$work/expected.json"
seg=$("$tool" "$work/create" "$work/batches.bin")
node "$script" verify "$seg" "$work/expected.json"
seg=$("$tool" "$work/lat" "$work/batches.bin" log-append-time)
node "$script" verify "$seg" "$work/expected.json" log-append-time
