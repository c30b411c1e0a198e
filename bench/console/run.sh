#!/usr/bin/env bash
# The console under load (issue 34): produce throughput of one paced librdkafka producer
# (floe-bench-kafka, RATE records/s, 100-byte records, acks=1, one partition) with no console
# open, and with TABS headless-chromium tabs of the console tailing the topic (each a follow=true
# event stream: tests/js/bench/console_tabs.mjs), measured in the same run, alternating (no
# console, console, no console, ...) ROUNDS times each; the medians are compared so machine load
# does not decide it. The goal: with the tabs, within 10% of no console. Exits 1 beyond, or
# when a tab did not receive the records.
#   BUILD=build RATE=100000 RECORDS=1000000 ROUNDS=4 TABS=10 bash bench/console/run.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
rate="${RATE:-100000}"; records="${RECORDS:-1000000}"; rounds="${ROUNDS:-4}"; tabs="${TABS:-10}"
kport=$(port); hport=$(port)
# Each tab holds one search place of this client address while it tails.
start_floe $kport $hport "$work/floe" --set floe.topic-defaults.remote.storage.enable=false \
  --set floe.http.search.max-per-client=$((tabs + 2))
produce() {
  "$build/bench/floe-bench-kafka" --brokers 127.0.0.1:$kport --topic load --records "$records" --value-size 100 \
    --acks 1 --partitions 1 --rate "$rate" --no-consume
}
rate_of() { grep -oE '[0-9]+ records/s' <<<"$1" | head -1 | cut -d' ' -f1; }
produce >/dev/null # creates the topic and warms up (not counted)
echo "rate target ${rate}/s, ${records} records a round, ${tabs} tabs, $(nproc) cores (client, chromium and floe on one machine)"
without=(); with=()
for i in $(seq 1 "$rounds"); do
  line=$(produce); r=$(rate_of "$line"); without+=("$r"); echo "round $i no console: $line"
  rm -f "$work/stop"
  node "$here/tests/js/bench/console_tabs.mjs" "http://127.0.0.1:$hport/console/" load "$tabs" "$work/stop" >"$work/tabs.log" 2>&1 &
  tabs_pid=$!
  for _ in $(seq 1 3000); do grep -q READY "$work/tabs.log" && break; kill -0 $tabs_pid 2>/dev/null || break; sleep 0.1; done
  grep -q READY "$work/tabs.log" || { cat "$work/tabs.log"; echo "FAIL: the tabs did not start tailing"; exit 1; }
  line=$(produce); r=$(rate_of "$line"); with+=("$r"); echo "round $i ${tabs} tabs tailing: $line"
  touch "$work/stop"
  rc=0; wait $tabs_pid || rc=$?
  sed 's/^/  /' "$work/tabs.log" | grep -v READY
  [ $rc = 0 ] || { echo "FAIL: a tab did not tail the records"; exit 1; }
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m0=$(median "${without[@]}"); m1=$(median "${with[@]}")
awk -v a="$m0" -v b="$m1" -v t="$tabs" 'BEGIN {
  d = (a - b) / a * 100
  printf "median produce: %.0f records/s with no console, %.0f records/s with %d tabs tailing: %+.1f%%\n", a, b, t, -d
  if (d > 10) { print "FAIL: more than 10% slower with the console"; exit 1 }
  print "ok: within 10% of no console" }'
