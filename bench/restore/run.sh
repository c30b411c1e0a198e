#!/usr/bin/env bash
# floe restore (issue 32), each target beside a bare publisher in the same run, 100-byte values:
#  1. A JetStream stream of NJ messages lands in Iceberg through a Floe JetStream source (not
#     measured here: bench/ingest measures it), then `floe restore` replays the table into an
#     empty stream on a second nats-server; against restore_peers nats-publish (same server, async
#     publishes with the same two headers, 4,096 in flight) before and after.
#  2. The same table into a Kafka topic on a floe serve; against restore_peers kafka-produce (the
#     same producer settings: idempotent, acks=all, linger.ms=5) before and after.
# Floe's figure is the restore's own summary: from the first row read to the last acknowledgement
# (catalog, planning and the target's resume probe before it; the process start is printed too).
# usage: bash bench/restore/run.sh     (NJ overrides the size)
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
NJ=${NJ:-300000}
peers="$build/bench/floe-bench-restore-peers"
floe_bin="${FLOE_BIN:-$build/bin/floe}"
nt="$build/src/ingest/ingest_nats_tool"
admin="$build/src/kafka/kafka_rdkafka_admin"
nats() { # name -> port; nats-server -js (file store) in $work/<name>
  local p; p=$(port)
  nats-server -js -sd "$work/$1" -a 127.0.0.1 -p "$p" >"$work/$1.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 100); do (echo > /dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.1; done
  echo "$p"
}
n1=$(nats nats1); n2=$(nats nats2)
"$nt" nats://127.0.0.1:$n1 create ORDERS 'bench.>' >/dev/null
"$build/bench/floe-bench-ingest-peers" nats-publish nats://127.0.0.1:$n1 bench.x "$NJ" 100
kp=$(port); hp=$(port)
start_floe "$kp" "$hp" "$work/f" --set floe.storage.worker.tick-interval=200ms --set floe.auto-create-topics=false \
  --set floe.ingest.sources.j.type=jetstream --set floe.ingest.sources.j.url=nats://127.0.0.1:$n1 \
  --set floe.ingest.sources.j.stream=ORDERS --set floe.ingest.sources.j.topic=orders \
  --set floe.ingest.sources.j.max-age=1s --set floe.ingest.sources.j.max-messages=100000
for _ in $(seq 1 600); do
  c=$(curl -s "http://127.0.0.1:$hp/v1/ingest" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['sources'][0]['partitions'][0]['committed_position'])" 2>/dev/null || echo 0)
  [ "$c" = "$NJ" ] && break; sleep 0.2
done
echo "table orders holds $c rows"
restore() { env -u FLOE_BIN "$floe_bin" restore --set floe.data-dir="$work/f" --table orders "$@" 2>"$work/restore.err"; }
summary_rate() { sed -n 's/.* in \([0-9.]*\) s (\([0-9]*\) msg\/s).*/\1 \2/p'; }

echo "== floe restore -> JetStream, $NJ messages"
"$nt" nats://127.0.0.1:$n2 create R 'bench.>' >/dev/null
"$nt" nats://127.0.0.1:$n2 create P1 'peer1.>' >/dev/null
"$nt" nats://127.0.0.1:$n2 create P2 'peer2.>' >/dev/null
read -r n s j1 <<<"$("$peers" nats-publish nats://127.0.0.1:$n2 peer1.x "$NJ" 100)"
echo "peer libnats async publish (before): $n messages in $s s = $j1 messages/s"
t0=$(date +%s.%N)
out=$(restore --to nats://127.0.0.1:$n2 --stream R) || { cat "$work/restore.err" >&2; exit 1; }
echo "$out"
wall=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")
read -r secs rate <<<"$(summary_rate <<<"$out")"
echo "floe restore -> JetStream: $rate messages/s ($secs s; $wall s from process start)"
read -r n s j2 <<<"$("$peers" nats-publish nats://127.0.0.1:$n2 peer2.x "$NJ" 100)"
echo "peer libnats async publish (after): $n messages in $s s = $j2 messages/s"
/usr/bin/python3 -c "print(f'ratio: {$rate / max($j1, $j2):.2f}x of the faster peer run')"

echo "== floe restore -> Kafka (floe serve), $NJ records"
"$admin" 127.0.0.1:$kp create-topic restored 1 >/dev/null
"$admin" 127.0.0.1:$kp create-topic peer1 1 >/dev/null
"$admin" 127.0.0.1:$kp create-topic peer2 1 >/dev/null
read -r n s k1 <<<"$("$peers" kafka-produce 127.0.0.1:$kp peer1 "$NJ" 100)"
echo "peer librdkafka idempotent produce (before): $n records in $s s = $k1 records/s"
t0=$(date +%s.%N)
out=$(restore --to kafka://127.0.0.1:$kp --topic restored) || { cat "$work/restore.err" >&2; exit 1; }
echo "$out"
wall=$(/usr/bin/python3 -c "print(f'{$(date +%s.%N) - $t0:.2f}')")
read -r secs rate <<<"$(summary_rate <<<"$out")"
echo "floe restore -> Kafka: $rate records/s ($secs s; $wall s from process start)"
read -r n s k2 <<<"$("$peers" kafka-produce 127.0.0.1:$kp peer2 "$NJ" 100)"
echo "peer librdkafka idempotent produce (after): $n records in $s s = $k2 records/s"
/usr/bin/python3 -c "print(f'ratio: {$rate / max($k1, $k2):.2f}x of the faster peer run')"
