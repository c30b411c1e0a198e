#!/usr/bin/env bash
# Schema registry figures: registration rate (1 and CLIENTS clients) and lookup by id
# (GET /schemas/ids/{id}) at CLIENTS concurrent keep-alive clients, p50/p99 and req/s, on the
# embedded tier and on the Redis tier; peers in the same run with the same client: Floe's own
# /healthz on the HTTP plane (the same HTTP server with no registry work: the floor of this
# client and server) and a static file served by python3's http.server.
# Usage: BUILD=build SCHEMAS=500 CLIENTS=32 SECONDS_EACH=5 bash bench/schema_registry/run.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
schemas="${SCHEMAS:-500}"; clients="${CLIENTS:-32}"; secs="${SECONDS_EACH:-5}"
load="$here/tests/js/bench/schema_registry_load.mjs"
echo '{"ok":true}' > "$work/static.json"
sport=$(port)
(cd "$work" && exec /usr/bin/python3 -m http.server "$sport" --bind 127.0.0.1 >/dev/null 2>&1) &
bench_pids+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$sport/static.json" && break; sleep 0.1; done

echo "# embedded tier (schemas in <data-dir>/schemas/schemas.log, fdatasync per registration)"
kport=$(port); hport=$(port); rport=$(port)
start_floe $kport $hport "$work/floe" --set floe.schema-registry.listen=127.0.0.1:$rport --set floe.storage.worker.enabled=false
node "$load" "http://127.0.0.1:$rport" "$schemas" "$clients" "$secs" \
  "registry GET /schemas/ids/{id}=http://127.0.0.1:$rport/schemas/ids/{id}" \
  "registry GET .../versions/latest=http://127.0.0.1:$rport/subjects/bench-seq-1/versions/latest" \
  "peer: floe GET /healthz=http://127.0.0.1:$hport/healthz" \
  "peer: python http.server GET=http://127.0.0.1:$sport/static.json"
kill "${bench_pids[-1]}"; wait "${bench_pids[-1]}" 2>/dev/null || true

echo "# Redis tier (schemas in a Redis list, appendonly off; registrations are one Lua call each)"
redis_port=$(port); start_redis $redis_port
kport=$(port); hport=$(port); rport=$(port)
start_floe $kport $hport "$work/floe-redis" --set floe.local.type=redis --set floe.local.redis.uri=redis://127.0.0.1:$redis_port \
  --set floe.schema-registry.listen=127.0.0.1:$rport --set floe.storage.worker.enabled=false
node "$load" "http://127.0.0.1:$rport" "$schemas" "$clients" "$secs" \
  "registry GET /schemas/ids/{id}=http://127.0.0.1:$rport/schemas/ids/{id}" \
  "registry GET .../versions/latest=http://127.0.0.1:$rport/subjects/bench-seq-1/versions/latest" \
  "peer: floe GET /healthz=http://127.0.0.1:$hport/healthz"
echo "# machine: $(nproc) cores; client and servers share them"
