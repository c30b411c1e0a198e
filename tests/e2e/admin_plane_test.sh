#!/usr/bin/env bash
# The admin plane of a running floe: /healthz, /readyz, /metrics accepted by promtool, and a
# real Prometheus server scraping floe and answering a query for a floe series.
FLOE_BIN="$(realpath "$1")"
source "$(dirname "$0")/lib.sh"
work="$(mktemp -d)"
prom_pid=
cleanup() { stop_floe; if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null; wait "$prom_pid" 2>/dev/null; fi; rm -rf "$work"; }
trap cleanup EXIT

start_floe "$work" || exit 1
base="http://127.0.0.1:$HTTP_PORT"
out=$(curl -s -w ' %{http_code}' "$base/healthz"); check "healthz 200" contains "$out" '{"status":"alive"} 200'
out=$(curl -s -w ' %{http_code}' "$base/readyz"); check "readyz 200" contains "$out" ' 200'
for c in kafka-listener local-log catalog storage-worker; do
  check "readyz has $c up" contains "$out" "\"$c\":{\"status\":\"up\""
done
check "readyz is JSON" /usr/bin/python3 -c "import json,sys; json.loads(sys.argv[1].rsplit(' ',1)[0])" "$out"
out=$(curl -s -w ' %{http_code}' "$base/nope"); check "unknown path 404" contains "$out" ' 404'
check "unknown path JSON error" contains "$out" '"error":{"status":404'

seq 1 10 | kcat -P -b 127.0.0.1:$KAFKA_PORT -t admin-topic
kcat -C -b 127.0.0.1:$KAFKA_PORT -t admin-topic -o beginning -e -q > /dev/null
# The scrape is taken under load: a producer and a consumer run while it is read.
seq 1 300000 | kcat -P -b 127.0.0.1:$KAFKA_PORT -t load-topic &
load_pid=$!
sleep 0.3
curl -s "$base/metrics" > "$work/metrics.txt"
wait "$load_pid"
check "metrics count records in by topic" grep -q '^floe_kafka_records_in_total{topic="admin-topic"} 10$' "$work/metrics.txt"
check "metrics count records out by topic" grep -q '^floe_kafka_records_out_total{topic="admin-topic"} 10$' "$work/metrics.txt"
check "metrics count catalog calls" grep -qE '^floe_catalog_requests_total\{operation="[a-z_]+"\} [1-9]' "$work/metrics.txt"
check "metrics declare catalog errors" grep -q '^# TYPE floe_catalog_errors_total counter' "$work/metrics.txt"
check "metrics count Kafka requests by API" grep -q '^floe_kafka_requests_total{api="Produce"} ' "$work/metrics.txt"
check "metrics have request latency histograms" grep -q '^floe_kafka_request_duration_seconds_bucket{api="Fetch",le="+Inf"} ' "$work/metrics.txt"
check "metrics count bytes in" grep -qE '^floe_kafka_bytes_in_total [1-9]' "$work/metrics.txt"
check "metrics count connections" grep -qE '^floe_kafka_connections_accepted_total [1-9]' "$work/metrics.txt"
check "metrics show partition offsets" grep -q '^floe_partition_log_end_offset{topic="admin-topic",partition="0"} 10' "$work/metrics.txt"
check "metrics has process series" grep -q '^process_resident_memory_bytes ' "$work/metrics.txt"
check "metrics has floe_up" grep -q '^floe_up 1' "$work/metrics.txt"
lint=$(promtool check metrics < "$work/metrics.txt" 2>&1); rc=$?
check "promtool accepts metrics without warnings (rc=$rc: $lint)" test "$rc" -eq 0 -a -z "$lint"

# A real Prometheus scrapes floe; its query API returns floe's series.
prom_port=$(free_port)
cat > "$work/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: floe
    static_configs: [{targets: ["127.0.0.1:$HTTP_PORT"]}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address=127.0.0.1:$prom_port >"$work/prom.log" 2>&1 &
prom_pid=$!
found=""
for _ in $(seq 1 60); do
  q=$(curl -s "http://127.0.0.1:$prom_port/api/v1/query?query=floe_up" 2>/dev/null)
  if contains "$q" '"job":"floe"' && contains "$q" '"1"]'; then found=1; break; fi
  sleep 0.5
done
check "prometheus scraped floe_up" test -n "$found"
q=$(curl -s "http://127.0.0.1:$prom_port/api/v1/query?query=up%7Bjob%3D%22floe%22%7D")
check "prometheus target is up" contains "$q" '"1"]'

stop_floe; rc=$?
check "floe stops cleanly (rc=$rc)" test "$rc" -eq 0
finish
