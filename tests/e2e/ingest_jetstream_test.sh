#!/usr/bin/env bash
# Ingest from NATS JetStream, mode duplicate (issue 17): nats-server -js with a file store, a
# stream created and filled by libnats (tests/nats_tool.c; one message deleted: a sequence gap),
# the mirror floe copies it into topic "events" at offset = sequence - 1 (key = subject, value =
# payload, headers, stored time). Judges: kcat reading the mirror against the stream's own
# messages (also after kill -9 of the mirror mid-stream and a nats-server restart), DuckDB reading the
# Iceberg table (every message once), and the stream still holding everything (duplicate).
# usage: ingest_jetstream_test.sh FLOE_BIN NATS_TOOL
FLOE_BIN="$(realpath "$1")"
NT="$(realpath "$2")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
mkdir -p "$work/mir" "$work/nats"
NATS_PID=; MIR_PID=
cleanup() {
  [ -n "$NATS_PID" ] && kill -9 "$NATS_PID" 2>/dev/null
  [ -n "$MIR_PID" ] && kill -9 "$MIR_PID" 2>/dev/null
  [ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null
  wait 2>/dev/null
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
NATS_PORT=$(free_port); URL="nats://127.0.0.1:$NATS_PORT"
start_nats() {
  nats-server -js -sd "$work/nats" -a 127.0.0.1 -p "$NATS_PORT" >>"$work/nats.log" 2>&1 &
  NATS_PID=$!
  wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$NATS_PORT" 2>/dev/null
}
start_nats
check "stream created" wait_for 10 "$NT" "$URL" create EVENTS "ev.>"
check "published 1..100" "$NT" "$URL" publish ev.a 1 100
check "deleted sequence 50 (a gap)" "$NT" "$URL" delete EVENTS 50
src_dump() { # the stream's messages as kcat would print the mirror: "p offset key value ts headers"
  "$NT" "$URL" dump EVENTS 1 "$1" 2>>"$work/nt.err" | awk '{printf "0 %d %s %s %s %s\n", $1 - 1, $2, $3, $4, $5}'
}
src_dump 100 > "$work/src"
check "source dump has 99 messages" test "$(wc -l <"$work/src")" -eq 99

mirror_args=(--set floe.ingest.sources.nats.type=jetstream --set floe.ingest.sources.nats.url="$URL"
  --set floe.ingest.sources.nats.stream=EVENTS --set floe.ingest.sources.nats.topic=events
  --set floe.ingest.sources.nats.mode=duplicate
  --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=1000
  --set floe.storage.worker.tick-interval=300ms --set floe.auto-create-topics=false)
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
dump() { kcat -C -b "$MIR" -t events -o beginning -e -q -f '%p %o %k %s %T %h\n' 2>>"$work/kcat.err" | sort -k1,1n -k2,2n; }
same() { dump > "$work/mir_dump"; cmp -s "$work/src" "$work/mir_dump"; }
check "mirror holds every message at sequence - 1, the gap kept" wait_for 30 same
ready=$(curl -s "http://127.0.0.1:$MIR_HTTP/readyz")
check "readyz has the source up" contains "$ready" '"ingest-nats":{"status":"up"'

# kill -9 of the mirror mid-stream, then of nats-server, restarts: nothing twice, none missing.
( "$NT" "$URL" publish ev.b 101 1500 ) &
BG_PID=$!
sleep 0.5
kill -9 "$MIR_PID"; wait "$MIR_PID" 2>/dev/null; MIR_PID=
start_floe "$work/mir" "${mirror_args[@]}" || exit 1
MIR_PID=$FLOE_PID; MIR=127.0.0.1:$KAFKA_PORT; MIR_HTTP=$HTTP_PORT; FLOE_PID=
wait "$BG_PID"; BG_PID=
# nats-server is restarted with SIGTERM: its 2.9 file store buffers writes in the process, so a
# kill -9 may take back a delete or a publish it acknowledged, which no mirror can undo.
kill -TERM "$NATS_PID"; wait "$NATS_PID" 2>/dev/null; NATS_PID=
start_nats
check "published 1501..1600 after nats-server restart" "$NT" "$URL" publish ev.c 1501 1600
src_dump 1600 > "$work/src"
check "stream holds 1599 messages (duplicate mode keeps them)" test "$(wc -l <"$work/src")" -eq 1599
check "after kill -9 of the mirror and a nats-server restart: identical messages at identical offsets" wait_for 40 same

table_same() {
  /usr/bin/python3 "$here/iceberg_files.py" "$work/mir/data/catalog.db" floe events > "$work/files.json" 2>"$work/py.err" || return 1
  node "$js/table_dump.mjs" "$work/files.json" > "$work/tab" 2>"$work/node.err" || { cat "$work/node.err"; return 1; }
  cmp -s "$work/src" "$work/tab"
}
check "Iceberg table events: every message once (offset, subject, payload, header, stored time)" wait_for 60 table_same
v1=$(curl -s "http://127.0.0.1:$MIR_HTTP/v1/ingest")
check "/v1/ingest: local position 1600 ($v1)" contains "$v1" '"local_position":1600'
if [ "$e2e_failed" -gt 0 ]; then
  diff "$work/src" "$work/mir_dump" | head -5
  grep -i "ingest\|error" "$work/mir/floe.log" | tail -20
fi
kill -TERM "$MIR_PID"; wait "$MIR_PID"; rc=$?; MIR_PID=
check "mirror stops cleanly (rc $rc)" test "$rc" -eq 0
finish
