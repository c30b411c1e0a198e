#!/usr/bin/env bash
# Issue 33: a pre-0.11 Kafka client (librdkafka with api.version.request=false and
# broker.version.fallback=0.9.0) gets a clear UNSUPPORTED_VERSION for Produce v1 and Fetch v1,
# answered in those versions' own layouts, and the broker says in its log what to change; a
# current client carries on (tests/e2e/old_clients.py).
# usage: old_clients_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
start_floe "$work" || exit 1
out=$(timeout 90 /usr/bin/python3 "$here/old_clients.py" 127.0.0.1:$KAFKA_PORT 2>/dev/null); rc=$?
echo "$out" | sed 's/^/  /'
check "old clients get clear errors, current ones carry on (rc $rc)" test "$rc" -eq 0
check "the broker logs what an old client must change" \
  grep -q "Produce v1 refused with UNSUPPORTED_VERSION.*api.version.request=true" "$work/floe.log"
check "... for its Fetch too" grep -q "Fetch v1 refused with UNSUPPORTED_VERSION" "$work/floe.log"
check "floe is still running" kill -0 "$FLOE_PID"
finish
