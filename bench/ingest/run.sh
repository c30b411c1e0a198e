#!/usr/bin/env bash
# Ingest end to end (issues 17, 35), each beside its peer in the same run, 100-byte records:
#  1. Kafka source (a second floe serve, one partition, N records) -> Floe mirror -> Iceberg:
#     records/s from the mirror's start until the table's committed position reaches N, against
#     librdkafka's bare consume of the same partition (before and after; then once more with
#     the prefetch queue settings Floe's source uses); the ratio is to the fastest of the three.
#  2. JetStream (nats-server -js, file store, NJ messages) -> Floe (mode=duplicate, max-age=1s)
#     -> Iceberg, against a bare libnats pull consumer on the same stream (before and after).
#  3. Publish-to-visible-in-Iceberg latency with 1-second thresholds (max-age=1s; a message every
#     20 ms for DURATION s), p50/p99.
# Every figure runs from a cold process: Floe's from the mirror process's launch, the peers' from
# theirs (the peer prints the wall clock at its Nth record).
# usage: bash bench/ingest/run.sh     (N, NJ, DURATION override the sizes; IDLE_SEAL the sources'
#        idle-seal, 100ms unless set, empty: not set)
#        KAFKA_ONLY=1 stops after the Kafka part; KAFKA_SETS: more --set arguments for the mirror
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
N=${N:-1000000}; NJ=${NJ:-300000}; DURATION=${DURATION:-20}; IDLE_SEAL=${IDLE_SEAL-100ms}
idle=(); [ -n "$IDLE_SEAL" ] && idle=(--set "floe.ingest.sources.@.idle-seal=$IDLE_SEAL")
peers="$build/bench/floe-bench-ingest-peers"
floe_bin="${FLOE_BIN:-$build/bin/floe}"
serve() { # name kafka-port http-port [--set ...]: floe serve logging to $work/NAME.log
  local name="$1" kp="$2" hp="$3"; shift 3
  env -u FLOE_BIN "$floe_bin" serve --set floe.data-dir="$work/$name" --set floe.kafka.listen=127.0.0.1:$kp \
    --set floe.http.listen=127.0.0.1:$hp "$@" >"$work/$name.log" 2>&1 &
  bench_pids+=($!); last_pid=$!
  for _ in $(seq 1 200); do grep -q "floe is up" "$work/$name.log" && return 0; sleep 0.1; done
  echo "floe $name did not come up:" >&2; tail -20 "$work/$name.log" >&2; return 1
}
until_committed() { # http-port target t0 -> "secs-local secs-committed": wall time from t0 (taken
  # before the mirror process was launched) until the mirror's local end, then the table's
  # committed position, reach target. One poller process (not a curl and a python start per
  # poll: that took about half a core from the measured mirror).
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys, time, urllib.request
url, target = f"http://127.0.0.1:{sys.argv[1]}/v1/ingest", int(sys.argv[2])
t0, tl = float(sys.argv[3]), None  # wall clock before the mirror process was launched
for _ in range(6000):
    try:
        s = json.load(urllib.request.urlopen(url, timeout=5))["sources"][0]["partitions"]
        l, c = (s[0]["local_position"], s[0]["committed_position"]) if s else (0, 0)
    except Exception:
        l, c = 0, 0
    if tl is None and l >= target: tl = time.time() - t0
    if c >= target:
        print(f"{tl:.3f} {time.time() - t0:.3f}"); sys.exit(0)
    time.sleep(0.02)
print("timeout timeout"); sys.exit(1)
PY
}
cpu() { # pid -> the process's CPU seconds so far and its busiest threads (name:seconds)
  /usr/bin/python3 - "$1" <<'PY'
import os, sys
tck, pid = os.sysconf("SC_CLK_TCK"), sys.argv[1]
def secs(path):
    f = open(path).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tck
threads = []
for t in os.listdir(f"/proc/{pid}/task"):
    name = open(f"/proc/{pid}/task/{t}/comm").read().strip()
    threads.append((secs(f"/proc/{pid}/task/{t}/stat"), name))
threads.sort(reverse=True)
print(f"{secs(f'/proc/{pid}/stat'):.2f} s CPU; threads: " + ", ".join(f"{n}:{c:.2f}" for c, n in threads[:5]))
PY
}
peer() { # label [VAR=value ...] command args...: runs a peer (its environment first) from a cold
  # process and appends its rate to peer_rates.
  local label="$1" t0 n s r end; shift
  t0=$(date +%s.%N)
  read -r n s r end <<<"$(env "$@")"
  local secs rate
  read -r secs rate <<<"$(/usr/bin/python3 -c "print(f'{$end - $t0:.3f}', round($n / ($end - $t0)))")"
  echo "peer $label: $n in $secs s from its process start = $rate/s (after its client was up: $s s = $r/s)"
  peer_rates+=("$rate")
}
best_peer() { printf '%s\n' "${peer_rates[@]}" | sort -n | tail -1; }
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.storage.worker.tick-interval=200ms
  --set floe.auto-create-topics=false)

echo "== Kafka source -> Iceberg, one partition, $N records of 100 bytes"
sk=$(port); sh=$(port)
serve src "$sk" "$sh" --set floe.default-partitions=1 --set floe.auto-create-topics=true
/usr/bin/python3 -c "
import sys
v = 'v' * 92
w = sys.stdout.write
for i in range($N): w(f'{i:08d}{v}\n')" > "$work/records"
kcat -P -b 127.0.0.1:$sk -t src -p 0 -X linger.ms=20 -X batch.num.messages=10000 \
  -z none <"$work/records" 2>"$work/kcat.err" || { cat "$work/kcat.err" >&2; exit 1; }
rm -f "$work/records"
peer_rates=()
peer "librdkafka consume (before)" "$peers" kafka-consume 127.0.0.1:$sk src "$N"
mk=$(port); mh=$(port)
t0=$(date +%s.%N)
serve mirror "$mk" "$mh" "${tiered[@]}" --set floe.topic-defaults.segment.ms=1000 \
  --set floe.ingest.sources.k.type=kafka --set floe.ingest.sources.k.bootstrap-servers=127.0.0.1:$sk \
  --set floe.ingest.sources.k.topics=src --set floe.ingest.sources.k.start=earliest "${idle[@]/@/k}" ${KAFKA_SETS:-}
mirror_pid=$last_pid
read -r lsecs secs <<<"$(until_committed "$mh" "$N" "$t0")"
echo "mirror process: $(cpu "$mirror_pid")"
kafka_rate=$(/usr/bin/python3 -c "print(round($N / $secs))")
echo "Floe Kafka -> Iceberg: $N records committed in $secs s = $kafka_rate records/s (from the mirror's start; all mirrored locally after $lsecs s)"
peer "librdkafka consume (after)" "$peers" kafka-consume 127.0.0.1:$sk src "$N"
peer "librdkafka consume (after, Floe's queue settings)" PEER_FLOE_QUEUE=1 "$peers" kafka-consume 127.0.0.1:$sk src "$N"
/usr/bin/python3 -c "print(f'ratio: {$kafka_rate / $(best_peer):.2f}x of the fastest peer run')"
grep -c "offloaded segment" "$work/mirror.log" | xargs echo "segments offloaded:"
grep -m1 "floe is up" "$work/mirror.log" | cut -c12-23 | xargs echo "mirror up at"
grep -m1 "owns src-0" "$work/mirror.log" | cut -c12-23 | xargs echo "partition assigned (group joined) at"
date -d "@$t0" +%H:%M:%S.%3N | xargs echo "mirror launched at"
{ grep "sealed by" "$work/mirror.log" || true; } | cut -c12-23 | xargs echo "segments sealed by the source at"
grep "offloaded segment" "$work/mirror.log" | sed -E 's/^.{11}(.{12}).*offsets ([0-9.]+).*snapshot [0-9-]+ \((.*)\)$/\1 offsets \2: \3/' || true
[ -n "${KAFKA_ONLY:-}" ] && exit 0

echo "== JetStream -> Iceberg, $NJ messages of 100 bytes"
np=$(port)
nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$np" >"$work/nats.log" 2>&1 &
bench_pids+=($!)
for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$np) 2>/dev/null && break; sleep 0.1; done
nt="$build/src/ingest/ingest_nats_tool"
"$nt" nats://127.0.0.1:$np create BENCH 'bench.>'
t0=$(date +%s.%N)
"$peers" nats-publish nats://127.0.0.1:$np bench.x "$NJ" 100
echo "published in $(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s"
peer_rates=()
peer "libnats pull consumer (before)" "$peers" nats-consume nats://127.0.0.1:$np BENCH 'bench.>' "$NJ"
jk=$(port); jh=$(port)
t0=$(date +%s.%N)
serve jmirror "$jk" "$jh" "${tiered[@]}" \
  --set floe.ingest.sources.j.type=jetstream --set floe.ingest.sources.j.url=nats://127.0.0.1:$np \
  --set floe.ingest.sources.j.stream=BENCH --set floe.ingest.sources.j.topic=bench \
  --set floe.ingest.sources.j.mode=duplicate --set floe.ingest.sources.j.max-age=1s \
  --set floe.ingest.sources.j.max-messages=100000 "${idle[@]/@/j}"
mirror_pid=$last_pid
read -r lsecs secs <<<"$(until_committed "$jh" "$NJ" "$t0")"
echo "mirror process: $(cpu "$mirror_pid")"
js_rate=$(/usr/bin/python3 -c "print(round($NJ / $secs))")
echo "Floe JetStream -> Iceberg: $NJ messages committed in $secs s = $js_rate messages/s (from the mirror's start; all mirrored locally after $lsecs s)"
peer "libnats pull consumer (after)" "$peers" nats-consume nats://127.0.0.1:$np BENCH 'bench.>' "$NJ"
/usr/bin/python3 -c "print(f'ratio: {$js_rate / $(best_peer):.2f}x of the faster peer run')"

echo "== publish-to-visible-in-Iceberg latency, JetStream source, max-age=1s, a message every 20 ms for $DURATION s"
"$nt" nats://127.0.0.1:$np create LAT 'lat.>'
lk=$(port); lh=$(port)
serve lat "$lk" "$lh" "${tiered[@]}" \
  --set floe.ingest.sources.l.type=jetstream --set floe.ingest.sources.l.url=nats://127.0.0.1:$np \
  --set floe.ingest.sources.l.stream=LAT --set floe.ingest.sources.l.topic=lat \
  --set floe.ingest.sources.l.mode=offload --set floe.ingest.sources.l.max-age=1s \
  --set floe.ingest.sources.l.max-messages=1000000 --set floe.ingest.sources.l.max-bytes=64MiB
node "$here/tests/js/bench/ingest_visibility.mjs" nats://127.0.0.1:$np lat.x http://127.0.0.1:$lh l 20 "$DURATION"
