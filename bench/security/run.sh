#!/usr/bin/env bash
# SASL authentication time on one floe: PLAIN next to SCRAM-SHA-256 and SCRAM-SHA-512, over
# SASL_PLAINTEXT and SASL_SSL (the TLS handshake timed apart), same user (8192 iterations).
# Usage: bench/security/run.sh [build/bin/floe] [N]
# Every floe started here answers the schema registry on a free port (its default, 127.0.0.1:8081,
# would collide between tests running in parallel); a test that needs the registry sets its own.
export FLOE_SCHEMA_REGISTRY_LISTEN="${FLOE_SCHEMA_REGISTRY_LISTEN:-127.0.0.1:0}"
set -euo pipefail
FLOE=$(realpath "${1:-build/bin/floe}")
N=${2:-200}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=; trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-ca -keyout ca.key -out ca.pem 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > ext
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr 2>/dev/null
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile ext -out server.pem 2>/dev/null
echo bench-pw | "$FLOE" users add bench --set floe.data-dir="$work/data" >/dev/null
p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
"$FLOE" serve --set floe.data-dir="$work/data" --set floe.http.listen=127.0.0.1:0 \
  --set floe.storage.worker.enabled=false \
  --set floe.kafka.listeners=SASL_PLAINTEXT://127.0.0.1:$p1,SASL_SSL://127.0.0.1:$p2 \
  --set floe.tls.cert-file=server.pem --set floe.tls.key-file=server.key 2>floe.log &
pid=$!
for _ in $(seq 100); do grep -q 'floe is up' floe.log && break; sleep 0.1; done
for m in PLAIN SCRAM-SHA-256 SCRAM-SHA-512; do
  /usr/bin/python3 "$here/scram_handshake.py" "127.0.0.1:$p1" bench bench-pw --mechanism $m -n "$N" | sed 's/^/SASL_PLAINTEXT /'
done
for m in PLAIN SCRAM-SHA-512; do
  /usr/bin/python3 "$here/scram_handshake.py" "127.0.0.1:$p2" bench bench-pw --mechanism $m -n "$N" --ca ca.pem | sed 's/^/SASL_SSL /'
done
