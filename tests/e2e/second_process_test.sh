#!/usr/bin/env bash
# One process per data directory: a second `floe serve` on the same floe.data-dir (other
# ports) must refuse to start (exit status 2) and name the holder's pid and listeners, because
# two processes appending to one segment log lose acknowledged records. The lock dies with its
# holder: after kill -9 a new floe takes the directory and every acknowledged record is there.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
second_pid=
trap '[ -n "$second_pid" ] && kill -9 "$second_pid" 2>/dev/null; stop_floe; rm -rf "$work"' EXIT
records=${RECORDS:-2000}
topic=ack.check

start_floe "$work" || exit 1
first_pid=$FLOE_PID; first_kafka=$KAFKA_PORT; first_http=$HTTP_PORT

# The second process, with its own free ports; bounded: today's bug would keep it running.
k2=$(free_port); h2=$(free_port)
"$FLOE_BIN" serve --set floe.data-dir="$work/data" --set floe.kafka.listen=127.0.0.1:$k2 \
  --set floe.http.listen=127.0.0.1:$h2 ${E2E_EXTRA_SETS:-} $(redis_sets "$work") >"$work/second.out" 2>"$work/second.log" &
second_pid=$!
for _ in $(seq 1 100); do kill -0 "$second_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$second_pid" 2>/dev/null; then
  echo "second floe still running after 10 s:"; cat "$work/second.log"
  kill -9 "$second_pid"; wait "$second_pid" 2>/dev/null; rc=running
else
  wait "$second_pid"; rc=$?
fi
second_pid=
msg=$(cat "$work/second.log")
check "second floe on the same data dir exits with status 2 (got $rc)" test "$rc" = 2
check "its message names the holder's pid $first_pid" contains "$msg" "pid=$first_pid"
check "its message names the holder's Kafka listener" contains "$msg" "kafka=127.0.0.1:$first_kafka"
check "its message names the holder's HTTP listener" contains "$msg" "http=127.0.0.1:$first_http"
check "its message names the data dir" contains "$msg" "$work/data"
check "it never came up" bash -c "! grep -q 'floe is up' '$work/second.log'"
check "it never opened the Kafka port" bash -c "! kcat -b 127.0.0.1:$k2 -L -m 2 >/dev/null 2>&1"
echo "second floe said: $(grep -m1 'in use' "$work/second.log")"

# The first one is unharmed: acks=all records, then kill -9 and a new process on the same dir.
seq 1 "$records" | sed 's/^/rec-/' >"$work/sent"
kcat -P -b 127.0.0.1:$first_kafka -t "$topic" -X acks=all -X enable.idempotence=true <"$work/sent" 2>"$work/kcat.err"
rc=$?
check "kcat produced $records records with acks=all (rc=$rc $(head -c 300 "$work/kcat.err"))" test "$rc" -eq 0
kill -9 "$first_pid"; wait "$first_pid" 2>/dev/null; FLOE_PID=

start_floe "$work" || exit 1
check "a new floe takes the directory after kill -9 of the holder" kill -0 "$FLOE_PID"
holder=$(cat "$work/data/floe.lock")
check "the lock file names the new holder ($holder)" contains "$holder" "pid=$FLOE_PID kafka=127.0.0.1:$KAFKA_PORT http=127.0.0.1:$HTTP_PORT"
kcat -C -b 127.0.0.1:$KAFKA_PORT -t "$topic" -o beginning -e -q -f '%s\n' >"$work/got" 2>"$work/kcat-c.err"
check "kcat reads back all $records records after kill -9 ($(wc -l <"$work/got") read)" cmp -s "$work/sent" "$work/got"

# A clean stop releases the lock too.
stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
start_floe "$work" || exit 1
check "a floe starts on the directory after a clean stop" kill -0 "$FLOE_PID"
stop_floe
finish
