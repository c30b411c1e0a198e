#!/usr/bin/env bash
# The REST catalog client signing with AWS SigV4, and the Nessie catalog (a REST prefix per
# reference), against tests/e2e/rest_standin.py:
# - SigV4: the stand-in verifies every request with botocore's own signer. Floe offloads through
#   it (every request verified, none refused; DuckDB finds each record once); a probe shows the
#   stand-in refuses a wrong secret, a stale date and a tampered signed header; Floe with a
#   wrong secret stops at start-up naming the refusal.
# - Nessie: a stand-in serving branches main and dev. Floe with ref=dev commits to dev only,
#   Floe with ref=main to main only; each branch's table holds its records once (DuckDB).
#   usage: rest_sigv4_nessie_test.sh FLOE_BIN
FLOE_BIN="$(realpath "$1")"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
STANDIN_PID=
trap 'stop_floe; [ -n "$STANDIN_PID" ] && kill "$STANDIN_PID" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
key_id=AKIDFLOETEST
secret=floe-sigv4-secret
tiered=(--set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=300
        --set floe.storage.worker.tick-interval=100ms)
standin_state() { curl -s "http://127.0.0.1:$sp/standin/state"; }
field() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# --- SigV4 ---
python3 "$here/rest_standin.py" "$work/sigv4.port" --sigv4 "$key_id:$secret:eu-west-1:glue" >"$work/standin.log" 2>&1 &
STANDIN_PID=$!
wait_for 30 test -s "$work/sigv4.port"
sp=$(cat "$work/sigv4.port")
sig=(--set floe.storage.remote.catalog.type=rest --set "floe.storage.remote.catalog.uri=http://127.0.0.1:$sp"
     --set floe.storage.remote.catalog.rest.sigv4.enabled=true --set floe.storage.remote.catalog.rest.sigv4.signing-name=glue
     --set floe.storage.remote.catalog.rest.sigv4.region=eu-west-1 --set "floe.storage.remote.s3.access-key-id=$key_id"
     --set "floe.storage.remote.path=file://$work/sigwh")
start_floe "$work" "${sig[@]}" "${tiered[@]}" --set "floe.storage.remote.s3.secret-access-key=$secret" || exit 1
check "floe says it signs with SigV4" grep -q "SigV4 for glue in eu-west-1" "$work/floe.log"
check "produced 500 records" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT sig.events 0 500
applied() { [ "$(field "$(standin_state)" applied)" -ge 1 ] && /usr/bin/python3 "$here/iceberg_files.py" "path:$work/sigwh" floe sig_events |
  /usr/bin/python3 -c 'import json,sys; sys.exit(0 if sum(f["records"] for f in json.load(sys.stdin)["files"])>=500 else 1)'; }
check "the records land through the SigV4-signed catalog" wait_for 40 applied
st=$(standin_state)
check "every request was verified by botocore's signer ($(field "$st" sigv4_verified) of $(field "$st" requests))" \
  test "$(field "$st" sigv4_verified)" -eq "$(field "$st" requests)" -a "$(field "$st" sigv4_refused)" -eq 0
stop_floe
/usr/bin/python3 "$here/iceberg_files.py" "path:$work/sigwh" floe sig_events > "$work/sig.json"
check "each record once (DuckDB)" node "$js/check_table.mjs" "$work/sig.json" 0 500 1 sig.events
check "the stand-in refuses a wrong secret, a stale date and a tampered signed header (botocore probe)" \
  python3 "$here/sigv4_probe.py" "http://127.0.0.1:$sp" "$key_id" "$secret" eu-west-1 glue
"$FLOE_BIN" serve --set floe.data-dir="$work/bad" --set floe.kafka.listen=127.0.0.1:$(free_port) \
  --set floe.http.listen=127.0.0.1:$(free_port) "${sig[@]}" --set floe.storage.remote.s3.secret-access-key=wrong \
  >"$work/bad.out" 2>"$work/bad.log" &
bad=$!
for _ in $(seq 1 100); do kill -0 $bad 2>/dev/null || break; sleep 0.1; done
kill -0 $bad 2>/dev/null && { kill -9 $bad; echo "floe with a wrong secret did not stop"; }
wait $bad; rc=$?
check "a wrong secret stops start-up (rc=$rc)" test "$rc" -ne 0
check "naming the catalog's refusal" grep -q "403 ForbiddenException: SigV4: signature does not match" "$work/bad.log"
check "the secret is in no log" bash -c "! grep -qF -- '$secret' '$work/floe.log' '$work/bad.log'"
kill "$STANDIN_PID"; wait "$STANDIN_PID" 2>/dev/null; STANDIN_PID=

# --- Nessie: branches main and dev ---
/usr/bin/python3 "$here/rest_standin.py" "$work/nessie.port" --branches main,dev --expires 60 >"$work/nessie.log" 2>&1 &
STANDIN_PID=$!
wait_for 30 test -s "$work/nessie.port"
sp=$(cat "$work/nessie.port")
nessie=(--set floe.storage.remote.catalog.type=nessie --set "floe.storage.remote.catalog.uri=http://127.0.0.1:$sp"
        --set floe.storage.remote.catalog.credential=floe:s3cret --set "floe.storage.remote.path=file://$work/nwh")
tables_on() { # BRANCH: the table names of namespace floe on that branch
  /usr/bin/python3 - "$sp" "$1" <<'PY'
import json, sys, urllib.request, urllib.parse
port, ref = sys.argv[1:3]
tok = json.load(urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/v1/oauth/tokens",
      data=b"grant_type=client_credentials&client_id=floe&client_secret=s3cret")))["access_token"]
def get(path):
    return json.load(urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                     headers={"Authorization": f"Bearer {tok}"})))
try:
    ids = get(f"/v1/{urllib.parse.quote(ref)}/namespaces/floe/tables")["identifiers"]
except Exception:
    ids = []
for i in ids:
    print(i["name"], get(f"/v1/{urllib.parse.quote(ref)}/namespaces/floe/tables/{i['name']}")["metadata-location"])
PY
}
lands_on() { tables_on "$1" | grep -q "^$2 "; }
holds_on() { # BRANCH TABLE N: the branch's table commits at least N records
  local meta; meta=$(tables_on "$1" | awk -v t="$2" '$1==t{print $2}')
  [ -n "$meta" ] && /usr/bin/python3 "$here/iceberg_files.py" "meta:$meta" floe "$2" |
    /usr/bin/python3 -c 'import json,sys; sys.exit(0 if sum(f["records"] for f in json.load(sys.stdin)["files"])>='"$3"' else 1)'; }
mkdir -p "$work/dev" "$work/main"
start_floe "$work/dev" "${nessie[@]}" "${tiered[@]}" --set floe.storage.remote.catalog.ref=dev || exit 1
check "floe uses the dev reference as the REST prefix" grep -q "path /v1/dev" "$work/dev/floe.log"
check "produced 300 records (dev)" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT on.dev 0 300
check "the table appears on dev" wait_for 30 lands_on dev on_dev
check "dev's table commits the 300 records" wait_for 40 holds_on dev on_dev 300
stop_floe
start_floe "$work/main" "${nessie[@]}" "${tiered[@]}" || exit 1
check "floe uses main by default" grep -q "path /v1/main" "$work/main/floe.log"
check "produced 200 records (main)" node "$js/produce.mjs" 127.0.0.1:$KAFKA_PORT on.main 0 200
check "the table appears on main" wait_for 30 lands_on main on_main
check "main's table commits the 200 records" wait_for 40 holds_on main on_main 200
stop_floe
main_tables=$(tables_on main | cut -d' ' -f1 | tr '\n' ' ')
dev_tables=$(tables_on dev | cut -d' ' -f1 | tr '\n' ' ')
check "main holds only on_main ($main_tables), dev only on_dev ($dev_tables)" test "$main_tables" = "on_main " -a "$dev_tables" = "on_dev "
meta=$(tables_on dev | awk '$1=="on_dev"{print $2}')
/usr/bin/python3 "$here/iceberg_files.py" "meta:$meta" floe on_dev > "$work/dev.json"
check "dev's table holds its 300 records once (DuckDB)" node "$js/check_table.mjs" "$work/dev.json" 0 300 1 on.dev
meta=$(tables_on main | awk '$1=="on_main"{print $2}')
/usr/bin/python3 "$here/iceberg_files.py" "meta:$meta" floe on_main > "$work/main.json"
check "main's table holds its 200 records once (DuckDB)" node "$js/check_table.mjs" "$work/main.json" 0 200 1 on.main
finish
