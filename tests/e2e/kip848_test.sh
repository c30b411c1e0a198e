#!/usr/bin/env bash
# KIP-848 consumer groups (group.protocol=consumer) with a real client: librdkafka 2.15.1 built
# from source (tests/kip848). kip848_driver.py runs the group: 4 members over 16 partitions,
# a clean leave, a kill -9 (session timeout), a topic created later matching the regex, a static
# member restart; each settle measured (< 5 s), every record read once (at-least-once only for
# what the killed member read above its committed offsets); then a classic member of the same
# group id is refused (INCONSISTENT_GROUP_PROTOCOL) and a second group uses the range assignor.
# Usage: kip848_test.sh FLOE_BIN KIP848_CLIENT
FLOE_BIN="$(realpath "$1")"
CLIENT="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT

start_floe "$work" --set floe.default-partitions=16 --set floe.auto-create-topics=true \
  --set floe.kafka.group.consumer.session-timeout=2s \
  --set floe.kafka.group.consumer.heartbeat-interval=250ms || exit 1
check "the KIP-848 group with a librdkafka 2.15.1 client" \
  timeout 240 /usr/bin/python3 "$here/kip848_driver.py" "$CLIENT" "127.0.0.1:$KAFKA_PORT" "$work" "127.0.0.1:$HTTP_PORT"
check "floe logged no error" bash -c "! grep -E '\\[(error|critical)\\]' '$work/floe.log'"
finish
