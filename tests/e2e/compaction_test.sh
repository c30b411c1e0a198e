#!/usr/bin/env bash
# Compacted topics with real clients (kcat/librdkafka, kafkajs):
#  1. repeated keys and a tombstone: after the cleaner ran, a consumer from offset 0 sees the
#     latest record of each key at its original offset, the superseded offsets skipped (gaps);
#  2. a record without a key is refused (INVALID_RECORD; the per-record errors of KIP-467 are in
#     Produce v8+ answers, checked in kafka.it.flexible) and nothing of its batch is appended (a
#     keyed record in the same batch neither);
#  3. a tiered delete,compact topic: below the local start a consumer reads the full history
#     from the Iceberg table (the cleaner only cleans offloaded segments);
#  4. kill -9 at random moments while the cleaner works on a larger log, in a bounded loop:
#     after each restart the log end is what was acknowledged, and at the end the latest value
#     of every key is there.
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
CYCLES="${CYCLES:-12}"

compact=(--set floe.topic-defaults.cleanup.policy=compact
         --set floe.topic-defaults.min.cleanable.dirty.ratio=0.01
         --set floe.topic-defaults.segment.bytes=300
         --set floe.log.cleaner.interval=200ms)
start_floe "$work" "${compact[@]}" || exit 1
broker() { echo 127.0.0.1:$KAFKA_PORT; }
metric() { curl -s "http://127.0.0.1:$HTTP_PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
end_offset() { metric "floe_partition_log_end_offset{topic=\"$1\",partition=\"0\"}"; }

# 1. One record per batch (segments of ~3 batches), keys repeated, b deleted (tombstone).
printf '%s\n' a:a1 b:b1 a:a2 c:c1 b: a:a3 d:d1 c:c2 e:e1 f:f1 g:g1 h:h1 >"$work/sent"
kcat -P -b "$(broker)" -t cmp -K: -Z -X acks=all -X linger.ms=0 -X batch.num.messages=1 \
  <"$work/sent" 2>"$work/kcat.err"
check "kcat produces 12 keyed records to a compacted topic ($(head -c 200 "$work/kcat.err"))" test "$(end_offset cmp)" = 12
check "the cleaner ran on cmp-0" wait_for 20 grep -q "log cleaner cmp-0: cleaned" "$work/floe.log"
cat >"$work/check_cmp.py" <<'EOF'
import json, sys
sent = [l.rstrip('\n').split(':', 1) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
seen = [(m['offset'], m['key'], m['payload']) for m in got]
print('consumed:', seen)
offs = [o for o, _, _ in seen]
assert offs == sorted(set(offs)), 'offsets increase'
# Every record seen is the one produced at that offset (a tombstone reads as a null payload).
for o, k, v in seen:
    pk, pv = sent[o]
    assert (k, v) == (pk, pv if pv else None), (o, k, v, sent[o])
# The latest record of every key is there.
last = {}
for o, (k, v) in enumerate(sent): last[k] = o
for k, o in last.items(): assert o in offs, f'latest of {k} at {o} missing'
# Superseded records below the cleaned range are gone: a1, b1, a2 and c1 (offsets 0-3).
assert not any(o < 4 for o in offs), 'superseded offsets 0-3 are skipped'
assert offs[0] == 4 and seen[0][2] is None, "b's tombstone kept (delete.retention.ms)"
EOF
consumed_compacted() { # the cleaner may need a second pass if it ran while records arrived
  kcat -C -b "$(broker)" -t cmp -o beginning -e -J >"$work/got.json" 2>/dev/null
  /usr/bin/python3 "$work/check_cmp.py" "$work/sent" "$work/got.json" >"$work/check_cmp.out" 2>&1
}
check "a consumer from 0 sees the latest per key at the original offsets, the rest skipped" \
  wait_for 20 consumed_compacted
cat "$work/check_cmp.out"

# 2. Keyless records are refused (INVALID_RECORD); nothing of the batch lands.
before=$(end_offset cmp)
echo "no-key" | timeout 30 kcat -P -b "$(broker)" -t cmp -X acks=all -X message.timeout.ms=5000 \
  -X retries=0 >"$work/nokey.out" 2>&1
rc=$?
cat "$work/nokey.out"
check "kcat's keyless produce fails (rc=$rc)" test "$rc" -ne 0
# librdkafka 2.0 and kafkajs send Produce v7, whose answer has no per-record errors: they get
# INVALID_RECORD (87; librdkafka words it "failed to validate record"). The KIP-467 record
# errors of Produce v8+ are checked over a raw socket in kafka.it.flexible.
check "librdkafka reports INVALID_RECORD" grep -qi "failed to validate record" "$work/nokey.out"
check "and nothing was appended (log end $(end_offset cmp), was $before)" test "$(end_offset cmp)" = "$before"
printf 'k9:keyed\nkeyless-line\n' | timeout 30 kcat -P -b "$(broker)" -t cmp -K: -X acks=all \
  -X linger.ms=100 -X message.timeout.ms=5000 -X retries=0 >"$work/mixed.out" 2>&1
cat "$work/mixed.out"
check "a batch holding a keyless record is refused whole (log end $(end_offset cmp), was $before)" \
  test "$(end_offset cmp)" = "$before"
node "$here/../js/e2e/produce_keyless.mjs" "$(broker)" cmp >"$work/js.out" 2>&1
cat "$work/js.out"
check "kafkajs gets INVALID_RECORD for a keyless record" grep -q "^refused INVALID_RECORD" "$work/js.out"
check "and the log end did not move" test "$(end_offset cmp)" = "$before"
check "floe_log_cleaner metrics exported" test -n "$(metric floe_log_cleaner_runs_total)"
stop_floe
check "clean shutdown after cleaning" true

# 3. A tiered delete,compact topic: the cleaner only cleans offloaded segments, so the table
# holds every record; once local retention removed offloaded segments, a consumer from 0 reads
# the full history from the table below the local start (superseded values included), and the
# compacted local log above it.
tiered=(--set floe.topic-defaults.cleanup.policy=delete,compact
        --set floe.topic-defaults.min.cleanable.dirty.ratio=0.01
        --set floe.topic-defaults.remote.storage.enable=true
        --set floe.topic-defaults.retention.ms=-1
        --set floe.topic-defaults.local.retention.ms=3000
        --set floe.topic-defaults.segment.ms=500
        --set floe.storage.worker.tick-interval=300ms
        --set floe.log.cleaner.interval=200ms)
start_floe "$work" "${tiered[@]}" || exit 1
: >"$work/hist.sent"
for round in 1 2 3 4 5 6; do
  for k in 1 2 3 4 5; do echo "k$k:r$round-v$k"; done >>"$work/hist.sent"
  tail -5 "$work/hist.sent" | kcat -P -b "$(broker)" -t hist -K: -X acks=all 2>>"$work/kcat.err"
  sleep 0.7
done
local_start() { metric "floe_partition_local_start_offset{topic=\"hist\",partition=\"0\"}"; }
local_start_at_least() { local v; v=$(local_start); [ -n "$v" ] && [ "${v%.*}" -ge "$1" ]; }
check "local retention removed offloaded segments of hist" wait_for 30 local_start_at_least 10
check "the cleaner cleaned hist-0 (offloaded segments only)" grep -q "log cleaner hist-0: cleaned" "$work/floe.log"
ls_start=$(local_start)
kcat -C -b "$(broker)" -t hist -o beginning -e -J >"$work/hist.json" 2>/dev/null
check "below the local start ($ls_start) a consumer from 0 gets the full history from the table" \
  /usr/bin/python3 - "$work/hist.sent" "$work/hist.json" "$ls_start" <<'EOF'
import json, sys
sent = [l.rstrip('\n').split(':', 1) for l in open(sys.argv[1])]
got = {m['offset']: [m['key'], m['payload']] for m in (json.loads(l) for l in open(sys.argv[2]) if l.strip())}
start = int(float(sys.argv[3]))
below = [o for o in range(start)]
missing = [o for o in below if o not in got]
assert not missing, f'offsets below the local start missing: {missing[:10]}'
for o in below: assert got[o] == sent[o], (o, got[o], sent[o])
print(f'{start} records below the local start, all of them (superseded ones included) read back')
EOF
stop_floe

# 4. kill -9 during cleaning. Each cycle produces 30000 more records over 500 keys (acks=all,
# so all of them are durable once kcat returns), then kills floe at a random moment while the
# cleaner (every 100 ms) rewrites the segments. After each restart: the log end and the latest
# value of every key are what was produced.
big=(--set floe.topic-defaults.cleanup.policy=compact
     --set floe.topic-defaults.min.cleanable.dirty.ratio=0.01
     --set floe.topic-defaults.segment.bytes=262144
     --set floe.log.cleaner.interval=100ms)
: >"$work/expected"
produced=0
mid_clean=0
for cycle in $(seq 1 "$CYCLES"); do
  start_floe "$work" "${big[@]}" || exit 1
  if [ "$produced" -gt 0 ]; then
    check "restart $cycle: the log end is every record acknowledged ($(end_offset big) of $produced)" \
      test "$(end_offset big)" = "$produced"
  fi
  /usr/bin/python3 -c '
import random, sys
c = int(sys.argv[1])
for i in range(30000):
    k = random.randrange(500)
    print(f"key-{k}:cycle{c}-{i}-" + "x" * 60)' "$cycle" >"$work/batch"
  kcat -P -b "$(broker)" -t big -K: -X acks=all <"$work/batch" 2>>"$work/kcat.err" || echo "kcat failed in cycle $cycle"
  cat "$work/batch" >>"$work/expected"
  produced=$((produced + 30000))
  sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
  kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=
  ls "$work"/data/log/big-0.*/ 2>/dev/null | grep -q "cleaning.tmp" && mid_clean=$((mid_clean + 1))
done
echo "killed $CYCLES times; $mid_clean kill(s) left a segment half-cleaned (a .cleaning.tmp file)"
start_floe "$work" "${big[@]}" || exit 1
check "log end after $CYCLES kills is every record produced ($(end_offset big) of $produced)" test "$(end_offset big)" = "$produced"
# Let the cleaner finish a pass over the recovered log, then read everything.
sleep 2
timeout 120 kcat -C -b "$(broker)" -t big -o beginning -e -J -X fetch.message.max.bytes=1048576 >"$work/big.json" 2>/dev/null
check "the latest value of every key survived every kill; offsets increase with gaps" \
  /usr/bin/python3 - "$work/expected" "$work/big.json" <<'EOF'
import json, sys
sent = [l.rstrip('\n').split(':', 1) for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
offs = [m['offset'] for m in got]
assert offs == sorted(set(offs)), 'offsets increase'
for m in got:
    assert [m['key'], m['payload']] == sent[m['offset']], ('record differs from what was produced', m)
last = {}
for o, (k, v) in enumerate(sent): last[k] = o
have = set(offs)
missing = [k for k, o in last.items() if o not in have]
assert not missing, f'latest values lost: {missing[:5]}'
print(f'{len(got)} of {len(sent)} records left after compaction, {len(last)} keys, all latest values present')
assert len(got) < len(sent) // 2, 'the cleaner compacted the log'
EOF
stop_floe
finish
