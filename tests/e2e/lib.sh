# Shared helpers for end-to-end tests: free loopback ports, starting and stopping `floe serve`,
# and a pass/fail tally whose last line is "N passed, N failed".
set -uo pipefail
# Every floe started here answers the schema registry on a free port (its default, 127.0.0.1:8081,
# would collide between tests running in parallel); a test that needs the registry sets its own.
export FLOE_SCHEMA_REGISTRY_LISTEN="${FLOE_SCHEMA_REGISTRY_LISTEN:-127.0.0.1:0}"
e2e_passed=0; e2e_failed=0
check() { # name, command...
  local name="$1"; shift
  if "$@"; then e2e_passed=$((e2e_passed+1)); else echo "FAIL: $name"; e2e_failed=$((e2e_failed+1)); fi
}
contains() { grep -qF -- "$2" <<<"$1"; }
free_port() { # a currently free loopback TCP port
  /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
# start_floe WORKDIR [--set k=v ...]: starts floe serve in the background with free ports
# (and the settings in E2E_EXTRA_SETS, e.g. from with_redis.sh);
# sets FLOE_PID, KAFKA_PORT, HTTP_PORT; logs to WORKDIR/floe.log. Waits (bounded) until up.
start_floe() {
  local work="$1"; shift
  # Only this start's lines count: after a restart the log already holds an earlier "floe is up".
  local seen; seen=$(cat "$work/floe.log" 2>/dev/null | wc -l)
  KAFKA_PORT=$(free_port); HTTP_PORT=$(free_port)
  "$FLOE_BIN" serve --set floe.data-dir="$work/data" --set floe.kafka.listen=127.0.0.1:$KAFKA_PORT \
    --set floe.http.listen=127.0.0.1:$HTTP_PORT ${E2E_EXTRA_SETS:-} $(redis_sets "$work") "$@" >>"$work/floe.out" 2>>"$work/floe.log" &
  FLOE_PID=$!
  for _ in $(seq 1 200); do
    tail -n +$((seen + 1)) "$work/floe.log" 2>/dev/null | grep -q "floe is up" && return 0
    kill -0 "$FLOE_PID" 2>/dev/null || { echo "floe exited during start:"; cat "$work/floe.log"; return 1; }
    sleep 0.05
  done
  echo "floe did not come up in 10s"; cat "$work/floe.log"; return 1
}
# redis_sets WORKDIR: on the Redis tier (with_redis.sh sets E2E_REDIS_PORT and E2E_REDIS_DBS),
# the settings for the floe of that work directory: each directory its own Redis database (0, 1,
# ...), so that separate floes of one test (a source and its mirror) share no topics, as on the
# embedded log. Nothing otherwise.
redis_sets() {
  [ -n "${E2E_REDIS_PORT:-}" ] || return 0
  local dir n; dir=$(realpath -m "$1")
  n=$(grep -nxF -- "$dir" "$E2E_REDIS_DBS" 2>/dev/null | head -1 | cut -d: -f1)
  if [ -z "$n" ]; then echo "$dir" >> "$E2E_REDIS_DBS"; n=$(wc -l < "$E2E_REDIS_DBS"); fi
  echo "--set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$E2E_REDIS_PORT/$((n - 1))"
}
# run_redis DIR PORT [redis-server args...]: a redis-server on loopback PORT with its files in DIR
# (persistence off unless the args turn it on); waits for PONG; its pid in RUN_REDIS_PID.
run_redis() {
  local dir="$1" port="$2"; shift 2
  mkdir -p "$dir"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --logfile "$dir/redis.log" --daemonize no "$@" >/dev/null 2>&1 &
  RUN_REDIS_PID=$!
  for _ in $(seq 1 100); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0; sleep 0.1; done
  echo "redis-server on $port did not start"; cat "$dir/redis.log"; return 1
}
# redis_cluster DIR: a three-master Redis Cluster on loopback (run_redis thrice, files under
# DIR/rc1..rc3, then redis-cli --cluster create), waited for (bounded) until every node reports
# cluster_state:ok. Appends the servers' pids to REDIS_PIDS (the caller's cleanup list); sets
# REDIS_CLUSTER_PORTS (array) and REDIS_CLUSTER_URIS (the seeds, comma-separated). Fails, saying
# why, when the cluster does not form.
redis_cluster() {
  local dir="$1" i p ok
  REDIS_CLUSTER_PORTS=()
  for i in 1 2 3; do
    # The cluster bus listens on port + 10000: both must be free (and a valid port).
    while :; do
      p=$(free_port)
      [ "$p" -lt 55000 ] && /usr/bin/python3 -c 'import socket,sys; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.close()' \
        $((p + 10000)) 2>/dev/null && break
    done
    run_redis "$dir/rc$i" "$p" --cluster-enabled yes --cluster-config-file "$dir/rc$i/nodes.conf" \
      --cluster-node-timeout 2000
    local rc=$?
    REDIS_PIDS+=("$RUN_REDIS_PID")
    [ "$rc" -eq 0 ] || return 1
    REDIS_CLUSTER_PORTS+=("$p")
  done
  redis-cli --cluster create $(printf '127.0.0.1:%s ' "${REDIS_CLUSTER_PORTS[@]}") --cluster-replicas 0 --cluster-yes \
    >"$dir/cluster-create.log" 2>&1 || { echo "redis-cli --cluster create failed"; cat "$dir/cluster-create.log"; return 1; }
  REDIS_CLUSTER_URIS=$(printf 'redis://127.0.0.1:%s,' "${REDIS_CLUSTER_PORTS[@]}"); REDIS_CLUSTER_URIS=${REDIS_CLUSTER_URIS%,}
  for _ in $(seq 1 200); do
    ok=0
    for p in "${REDIS_CLUSTER_PORTS[@]}"; do redis-cli -p "$p" cluster info 2>/dev/null | grep -q cluster_state:ok && ok=$((ok + 1)); done
    [ "$ok" -eq 3 ] && return 0
    sleep 0.1
  done
  echo "Redis Cluster on ports ${REDIS_CLUSTER_PORTS[*]} did not reach cluster_state:ok in 20 s"; return 1
}
# start_redis: run_redis on REDIS_PORT (set by the caller) in $work/redis with AOF on, so a
# restart keeps what was acknowledged; REDIS_PID is its pid. stop_redis: kill -9 (a crash).
start_redis() { run_redis "$work/redis" "$REDIS_PORT" --appendonly yes; local rc=$?; REDIS_PID=$RUN_REDIS_PID; return $rc; }
stop_redis() { [ -n "${REDIS_PID:-}" ] && kill -9 "$REDIS_PID" 2>/dev/null; wait "$REDIS_PID" 2>/dev/null; REDIS_PID=; return 0; }
# wipe_data WORKDIR: a fresh start: removes WORKDIR/data and, on the Redis tier (with_redis.sh
# sets E2E_REDIS_PORT), everything in that Redis (the local tier lives there, not in the data dir).
wipe_data() {
  rm -rf "$1/data"
  if [ -n "${E2E_REDIS_PORT:-}" ]; then redis-cli -p "$E2E_REDIS_PORT" FLUSHALL >/dev/null || return 1; fi
  return 0
}
stop_floe() { # SIGTERM, bounded wait, then SIGKILL; returns floe's exit status
  [ -n "${FLOE_PID:-}" ] || return 0
  kill -TERM "$FLOE_PID" 2>/dev/null
  for _ in $(seq 1 200); do kill -0 "$FLOE_PID" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$FLOE_PID" 2>/dev/null; then kill -9 "$FLOE_PID"; wait "$FLOE_PID" 2>/dev/null; FLOE_PID=; return 99; fi
  wait "$FLOE_PID"; local rc=$?; FLOE_PID=; return $rc
}
finish() {
  echo "$(basename "$0" .sh): $e2e_passed passed, $e2e_failed failed"
  [ "$e2e_failed" -eq 0 ]
}
# start_pg WORKDIR: a throwaway PostgreSQL on loopback (as user postgres when run as root);
# sets PG_PORT and PG_URI. stop_pg stops it at once; start_pg_again restarts it on the same port.
start_pg() {
  PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  [ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL server binaries not found"; return 1; }
  PG_WORK="$1/pg"; mkdir -p "$PG_WORK"; chmod 755 "$1" "$PG_WORK"
  PG_AS=()
  if [ "$(id -u)" = 0 ]; then chown postgres "$PG_WORK"; PG_AS=(runuser -u postgres --); fi
  PG_PORT=$(free_port)
  PG_URI="postgresql://floe@127.0.0.1:$PG_PORT/postgres"
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_WORK/data" -A trust -U floe >/dev/null || return 1
  start_pg_again
}
start_pg_again() {
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_WORK/data" -l "$PG_WORK/log" -w -t 30 \
    -o "-p $PG_PORT -k $PG_WORK -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
}
stop_pg() { [ -n "${PG_WORK:-}" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_WORK/data" -m immediate stop >/dev/null 2>&1; return 0; }
# start_nats STORE_DIR LOG: nats-server with JetStream (a file store in STORE_DIR) on a free
# loopback port, in the background; sets NATS_PORT and NATS_PID and waits (bounded) until it listens.
start_nats() {
  NATS_PORT=$(free_port)
  nats-server -js -sd "$1" -a 127.0.0.1 -p "$NATS_PORT" >>"$2" 2>&1 &
  NATS_PID=$!
  wait_for 10 bash -c "echo > /dev/tcp/127.0.0.1/$NATS_PORT" 2>/dev/null
}
# wait_for SECONDS COMMAND...: polls every 0.2 s until the command succeeds (bounded).
# (Its locals have names no caller uses: bash's dynamic scope shows them to the command.)
wait_for() {
  local wait_for_secs_="$1"; shift
  local wait_for_i_
  for wait_for_i_ in $(seq 1 $((wait_for_secs_ * 5))); do "$@" && return 0; sleep 0.2; done
  return 1
}
# Brokers of one test by name (broker_ids, broker_joins): the script declares `declare -A PID KPORT
# HPORT`, an array `common` of settings every broker takes, and $work.
# launch NAME [--set ...]: floe serve in the background on data dir $work/NAME/data
launch() {
  local n="$1"; shift
  mkdir -p "$work/$n"
  : >"$work/$n/floe.log"
  KPORT[$n]=$(free_port); HPORT[$n]=$(free_port)
  "$FLOE_BIN" serve --set floe.data-dir="$work/$n/data" --set floe.kafka.listen=127.0.0.1:${KPORT[$n]} \
    --set floe.http.listen=127.0.0.1:${HPORT[$n]} "${common[@]}" "$@" >"$work/$n/floe.out" 2>>"$work/$n/floe.log" &
  PID[$n]=$!
}
is_up() { grep -q "floe is up" "$work/$1/floe.log"; }
id_of() { sed -n 's/.*broker \([0-9]*\) joined the cluster.*/\1/p' "$work/$1/floe.log" | tail -1; }
