#!/usr/bin/env bash
# The web console (issue 34) in a real browser against a real floe: Debian's chromium driven by
# puppeteer-core (tests/js/e2e/console_browser.mjs). Records are produced with kcat, offloaded to
# Iceberg and deleted locally, then more are produced that stay local; a consumer group
# (confluent-kafka, librdkafka) commits part of the way. The browser signs in with the bearer
# token (a wrong one first: refused), renders every page in light and dark mode with no console
# error or failed request, runs axe-core on each, saves screenshots under SCREENSHOTS (the build
# folder), and checks the timeline against /v1/topics, a key search that only Iceberg can answer,
# the live tail, and the group's lag against what the Kafka client and kcat report. The endpoints
# under the console (search, series, groups, configs) and the asset headers are checked with curl.
# FAILS (never skips) when chromium is missing.
FLOE_BIN="$(realpath "$1")"
SCREENSHOTS="${2:-$(pwd)/console-screenshots}"
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/lib.sh"
js="$here/../js/e2e"
work="$(mktemp -d)"
trap 'stop_floe; rm -rf "$work"' EXIT
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  echo "FAIL: $CHROMIUM is missing (scripts/bootstrap installs Debian's chromium)"; exit 1
fi
mkdir -p "$SCREENSHOTS"

admin=tok-admin-3b9e0c6d2a7f41e8
alice=tok-alice-5e1d9a0b7c2f4d36 # DESCRIBE on the cluster (an ACL added below)
bob=tok-bob-0c8e2a6f1b9d4e57     # no ACL at all
digest() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
printf 'User:admin sha256:%s\nUser:alice sha256:%s\nUser:bob sha256:%s\n' "$(digest $admin)" "$(digest $alice)" \
  "$(digest $bob)" >"$work/tokens"
SR_PORT=$(free_port)
common=(--set floe.http.tokens-file="$work/tokens" --set floe.security.super-users=User:admin
        --set floe.topic-defaults.remote.storage.enable=true --set floe.topic-defaults.segment.ms=500
        --set floe.topic-defaults.local.retention.ms=500 --set floe.schema-registry.listen=127.0.0.1:$SR_PORT)
start_floe "$work" "${common[@]}" --set floe.storage.worker.tick-interval=200ms || exit 1
api="http://127.0.0.1:$HTTP_PORT"
broker=127.0.0.1:$KAFKA_PORT
auth=(-H "Authorization: Bearer $admin")
jq_() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# 2000 JSON records (keys key-0..key-1999), offloaded to Iceberg and deleted from the local log.
seq 0 1999 | sed 's/.*/key-&:{"user":{"id":&},"n":&}/' | kcat -P -b $broker -t clicks -K: -H src=e2e
# Paged searches from the oldest record while the storage worker offloads segments and local
# retention deletes them: every offset exactly once, none lost between the tiers.
paged=$(/usr/bin/python3 - "$api" "$admin" <<'PY'
import json, sys, time, urllib.request
api, tok = sys.argv[1], sys.argv[2]
def get(q):
    req = urllib.request.Request(f"{api}/v1/topics/clicks/search?{q}", headers={"Authorization": f"Bearer {tok}"})
    return json.load(urllib.request.urlopen(req))
rounds, bad = 0, []
end = time.time() + 8
while time.time() < end:
    seen, r = [], get("from=oldest&limit=97&budget=300")
    for _ in range(500):
        seen += [x["offset"] for x in r["records"]]
        if r["done"]: break
        r = get(f"cursor={r['cursor']}&limit=97&budget=300")
    rounds += 1
    if seen != list(range(2000)): bad.append((len(seen), len(set(seen))))
print(rounds, len(bad), bad[:3])
PY
)
echo "paged searches during offload (rounds, rounds with a wrong answer, examples): $paged"
check "paged searches during offload see every offset once (rounds, bad: $paged)" test "$(cut -d' ' -f2 <<<"$paged")" = 0
for _ in $(seq 1 150); do
  start=$(curl -s "${auth[@]}" "$api/v1/topics" | jq_ '[t for t in d["topics"] if t["name"]=="clicks"][0]["partitions"][0]["local_start"]' 2>/dev/null)
  [ "${start:-0}" -ge 2000 ] 2>/dev/null && break; sleep 0.2
done
check "offloaded and deleted locally (local_start ${start:-none})" test "${start:-0}" -ge 2000
# A typed topic whose table has two schemas (v2 adds a column), for the Lake page's schema history.
check "typed topic with two schema versions offloaded" \
  timeout 70 node "$js/console_typed.mjs" "http://127.0.0.1:$SR_PORT" "$api" "$admin" "$broker" visits
r=$(curl -s "${auth[@]}" "$api/iceberg/v1/namespaces/floe/tables/visits")
# The table's schemas: the one it was created with, then each version's data struct (v1: id and
# name; v2: and channel), the last one current.
check "the typed table's schemas: data {id, name}, then data {id, name, channel} current" test "$(jq_ "[(s['schema-id']==d['metadata']['current-schema-id'], [f['name'] for x in s['fields'] if x['name']=='data' for f in x['type']['fields']]) for s in sorted(d['metadata']['schemas'], key=lambda s: s['schema-id'])][-2:]" <<<"$r")" = "[(False, ['id', 'name']), (True, ['id', 'name', 'channel'])]"
# The embedded tier: one broker; its storage worker holds the lease file.
r=$(curl -s "${auth[@]}" "$api/v1/cluster")
check "/v1/cluster: embedded, single broker, the worker's lease held" test "$(jq_ "(d['tier'], d['single_broker'], d['storage_worker_lease']['held'], d['storage_worker_lease']['holder'].startswith('broker-0@'))" <<<"$r")" = "('embedded', True, True, True)"
# The same floe without its storage worker: what is produced now stays in the local tier only.
stop_floe
start_floe "$work" "${common[@]}" --set floe.storage.worker.enabled=false || exit 1
api="http://127.0.0.1:$HTTP_PORT"
broker=127.0.0.1:$KAFKA_PORT
seq 2000 2099 | sed 's/.*/key-&:{"user":{"id":&},"n":&}/' | kcat -P -b $broker -t clicks -K:

# A consumer group that read and committed 1500 records (librdkafka through confluent-kafka).
group_out=$(/usr/bin/python3 - "$broker" <<'PY'
import sys, time
from confluent_kafka import Consumer, TopicPartition
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": "console-readers", "auto.offset.reset": "earliest",
              "enable.auto.commit": False})
c.assign([TopicPartition("clicks", 0, 0)])
got, deadline = 0, time.time() + 30
while got < 1500 and time.time() < deadline:
    m = c.poll(0.5)
    if m is not None and not m.error(): got += 1
c.commit(offsets=[TopicPartition("clicks", 0, 1500)], asynchronous=False)
committed = c.committed([TopicPartition("clicks", 0)], timeout=10)[0].offset
low, high = c.get_watermark_offsets(TopicPartition("clicks", 0), timeout=10)
c.close()
print(committed, high)
PY
)
read -r committed high <<<"$group_out"
check "group committed 1500 (got ${committed:-none}, high watermark ${high:-none})" test "${committed:-0}" = 1500
# The timestamp of the record at the committed offset, as kcat reads it (from the lake).
committed_ts=$(kcat -C -b $broker -t clicks -p 0 -o "$committed" -c 1 -e -f '%T\n' 2>/dev/null)
check "kcat read the committed record's timestamp ($committed_ts)" test -n "$committed_ts"

# A SCRAM user and an ACL, written by the CLI beside the running broker.
printf 'carol-secret-pw\n' >"$work/carol.pw"
"$FLOE_BIN" users add carol --password-file "$work/carol.pw" --set floe.data-dir="$work/data" >/dev/null
"$FLOE_BIN" acls add --allow User:alice --operation DESCRIBE --cluster --set floe.data-dir="$work/data" >/dev/null
sleep 0.3 # the broker re-reads acls.json within 100 ms

# --- the endpoints under the console (curl) ------------------------------------------------------
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
check "/v1 needs the token" test "$(code "$api/v1/topics")" = 401
check "/console/ is served without a token" test "$(code "$api/console/")" = 200
heads=$(curl -s -D - -o /dev/null -H 'Accept-Encoding: gzip' "$api/console/app.js")
check "app.js is text/javascript" contains "$heads" "Content-Type: text/javascript"
check "gzip when accepted" contains "$heads" "Content-Encoding: gzip"
check "strict CSP" contains "$heads" "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'"
etag=$(sed -n 's/^ETag: *//p' <<<"$heads" | tr -d '\r')
check "ETag revalidates (304)" test "$(code -H "If-None-Match: $etag" "$api/console/app.js")" = 304
r=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?key=key-77")
check "search by key finds the lake-only record" test "$(jq_ "[(x['offset'], x['tier']) for x in d['records']]" <<<"$r")" = "[(77, 'remote')]"
r=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?from=oldest&json=/user/id&json-op=gt&json-value=1995&limit=10")
check "JSON pointer > across both tiers, oldest first" test "$(jq_ "[x['offset'] for x in d['records']]" <<<"$r")" = "[1996, 1997, 1998, 1999, 2000, 2001, 2002, 2003, 2004, 2005]"
r=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?from=newest&contains=%22n%22&budget=50&limit=1000")
check "a budget bounds the scan and gives a cursor" test "$(jq_ "(d['scanned'], len(d['records']), d['done'], d['cursor'])" <<<"$r")" = "(50, 50, False, 'b:0.2050')"
r2=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?cursor=b:0.2050&contains=%22n%22&budget=50&limit=1000")
check "the cursor goes on where it stopped" test "$(jq_ "[x['offset'] for x in d['records']][0]" <<<"$r2")" = 2049
lines=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?from=oldest&limit=20&format=ndjson" | wc -l)
check "NDJSON export" test "$lines" = 20
csv=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/search?from=oldest&limit=2&format=csv")
check "CSV export" contains "$csv" 'partition,offset,timestamp,tier,key,value'
check "a malformed JSON test is a 400" test "$(code "${auth[@]}" "$api/v1/topics/clicks/search?json=x")" = 400
r=$(curl -s "${auth[@]}" "$api/v1/groups")
check "/v1/groups: lag in records" test "$(jq_ "[(p['committed_offset'], p['lag_records'], p['committed_record_timestamp']) for g in d['groups'] if g['group_id']=='console-readers' for p in g['partitions']]" <<<"$r")" = "[(1500, $((high - committed)), $committed_ts)]"
r=$(curl -s "${auth[@]}" "$api/v1/topics")
check "/v1/topics: the table is 100 records and some seconds behind" test "$(jq_ "[(p['offload_lag_records'], p['offload_lag_seconds'] > 0) for t in d['topics'] if t['name']=='clicks' for p in t['partitions']]" <<<"$r")" = "[(100, True)]"
r=$(curl -s "${auth[@]}" "$api/v1/brokers")
check "/v1/brokers lists this broker" test "$(jq_ "[(b['port'], b['self']) for b in d['brokers']]" <<<"$r")" = "[($KAFKA_PORT, True)]"
r=$(curl -s "${auth[@]}" "$api/v1/security/users")
check "/v1/security/users: names and mechanisms" test "$(jq_ "[(u['name'], u['mechanisms']) for u in d['users']]" <<<"$r")" = "[('carol', ['SCRAM-SHA-256', 'SCRAM-SHA-512'])]"
check "/v1/security/users: no secret" test "$(grep -ci 'salt\|key\|iteration' <<<"$r")" = 0
r=$(curl -s -H "Authorization: Bearer $alice" "$api/v1/security/acls")
check "/v1/security/acls for alice (DESCRIBE on the cluster)" test "$(jq_ "(d['strict'], d['super_users'], [(a['principal'], a['operation'], a['permission'], a['resource_type'], a['resource_name'], a['pattern'], a['host']) for a in d['acls']])" <<<"$r")" = "(True, ['User:admin'], [('User:alice', 'DESCRIBE', 'ALLOW', 'CLUSTER', 'kafka-cluster', 'LITERAL', '*')])"
for path in /v1/cluster /v1/security/users /v1/security/acls; do
  check "$path: bob (no ACL) is refused" test "$(code -H "Authorization: Bearer $bob" "$api$path")" = 403
  check "$path: alice may read it" test "$(code -H "Authorization: Bearer $alice" "$api$path")" = 200
  check "$path: needs a token" test "$(code "$api$path")" = 401
done
check "/metrics: the group's lag" contains "$(curl -s "$api/metrics")" "floe_group_lag_records{group=\"console-readers\"} $((high - committed))"
r=$(curl -s "${auth[@]}" "$api/v1/metrics/series?name=floe_kafka_records_in_total")
check "/v1/metrics/series" test "$(jq_ "(d['interval_ms'], d['series'][0]['fn'])" <<<"$r")" = "(10000, 'rate')"
r=$(curl -s "${auth[@]}" "$api/v1/topics/clicks/configs")
check "/v1/topics/{t}/configs shows sources" test "$(jq_ "[c['source'] for c in d['configs'] if c['name']=='remote.storage.enable']" <<<"$r")" = "['broker']"

# --- the browser --------------------------------------------------------------------------------
CONSOLE_URL="$api/console/" TOKEN="$admin" CHROMIUM="$CHROMIUM" SCREENSHOTS="$SCREENSHOTS" \
  GROUP=console-readers COMMITTED="$committed" HIGH="$high" COMMITTED_TS="$committed_ts" \
  BROKER="$broker" TOPIC=clicks TYPED=visits \
  timeout 240 node "$js/console_browser.mjs" >"$work/browser.log" 2>&1
rc=$?
cat "$work/browser.log"
check "browser checks (console_browser.mjs exit $rc)" test "$rc" = 0

# --- stream=sse: the same search as events, a live tail, the per-client limit -----------------------
cat >"$work/sse.py" <<'PY'
import json, subprocess, sys, threading, time, urllib.error, urllib.request
api, tok, broker = sys.argv[1:4]
H = {"Authorization": f"Bearer {tok}"}
fails = []
def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f" ({detail})" if detail else ""), flush=True)
    if not ok: fails.append(what)
def events(query, limit_s=30):
    """(name, data) for every event of a stream=sse search, read to its end."""
    req = urllib.request.Request(f"{api}/v1/topics/clicks/search?{query}&stream=sse", headers=H)
    out, name = [], None
    with urllib.request.urlopen(req, timeout=limit_s) as r:
        check(f"{query}: text/event-stream", r.headers["Content-Type"] == "text/event-stream", r.headers["Content-Type"])
        for line in r:
            line = line.decode().rstrip("\n")
            if line.startswith("event: "): name = line[7:]
            elif line.startswith("data: "): out.append((name, json.loads(line[6:])))
    return out
def plain(query):
    with urllib.request.urlopen(urllib.request.Request(f"{api}/v1/topics/clicks/search?{query}", headers=H), timeout=30) as r:
        return json.load(r)
# 1. The same search, as a stream: the same records (in slices of 2,000 read), the same end.
for q in ("from=oldest&json=/user/id&json-op=gt&json-value=1500&budget=5000&limit=1000",
          "from=newest&json=/user/id&json-op=lt&json-value=300&budget=4500&limit=1000"):
    ev, j = events(q), plain(q)
    got = [(r["partition"], r["offset"]) for n, d in ev if n == "records" for r in d["records"]]
    want = [(r["partition"], r["offset"]) for r in j["records"]]
    end = [d for n, d in ev if n == "end"]
    check(f"{q}: the stream's records are the JSON answer's", sorted(got) == sorted(want) and len(got) == len(set(got)),
          f"{len(got)} vs {len(want)}")
    check(f"{q}: progress in slices before the end", len([n for n, _ in ev if n in ("records", "progress")]) >= 2
          and [n for n, _ in ev][-1] == "end", [n for n, _ in ev])
    check(f"{q}: the end event has the JSON answer's scanned, done and cursor", end and
          (end[0]["scanned"], end[0]["done"], end[0]["cursor"]) == (j["scanned"], j["done"], j["cursor"]),
          f"{end and end[0]} vs {(j['scanned'], j['done'], j['cursor'])}")
# 2. A live tail (follow=true) from the tail cursor sees a record produced after it opened.
tail_cursor = plain("from=newest&limit=1")["tail_cursor"]
seen, ready = [], threading.Event()
def tail():
    req = urllib.request.Request(f"{api}/v1/topics/clicks/search?cursor={tail_cursor}&stream=sse&follow=true&follow-seconds=8", headers=H)
    with urllib.request.urlopen(req, timeout=30) as r:
        ready.set()
        for line in r:
            line = line.decode()
            if line.startswith("data: "): seen.append(json.loads(line[6:]))
t = threading.Thread(target=tail); t.start()
ready.wait(10); time.sleep(0.5)
marker = f"sse-{time.time_ns()}"
subprocess.run(["kcat", "-P", "-b", broker, "-t", "clicks", "-K:"], input=f"sse-key:{marker}\n", text=True, check=True)
deadline = time.time() + 15
while time.time() < deadline and not any(marker == r.get("value") for d in seen for r in d.get("records", [])):
    time.sleep(0.1)
check("the live tail streams a record produced after it opened",
      any(marker == r.get("value") for d in seen for r in d.get("records", [])))
t.join(20)
check("the tail ends after follow-seconds with an end event and its cursor", not t.is_alive() and seen and "cursor" in seen[-1]
      and seen[-1].get("done") is True, seen[-1:] )
# 3. Two open tails hold this client's two places: a third search is 429 until one leaves.
procs = [subprocess.Popen(["curl", "-sN", "-H", f"Authorization: Bearer {tok}",
                           f"{api}/v1/topics/clicks/search?from=oldest&budget=10&stream=sse&follow=true&follow-seconds=60"],
                          stdout=subprocess.DEVNULL) for _ in range(2)]
time.sleep(1.5)
try:
    plain("key=key-1"); code = 200
except urllib.error.HTTPError as e:
    code = e.code
check("a third search while two tails run: 429", code == 429, code)
for p in procs: p.kill(); p.wait()
t0, code = time.time(), None
while time.time() < t0 + 15:
    try:
        plain("key=key-1"); code = 200; break
    except urllib.error.HTTPError as e:
        code = e.code; time.sleep(0.2)
check("the places come back once the tails' clients have gone", code == 200, f"{code} after {time.time() - t0:.1f} s")
print(f"place given back after {time.time() - t0:.1f} s")
sys.exit(1 if fails else 0)
PY
timeout 120 /usr/bin/python3 "$work/sse.py" "$api" "$admin" "$broker"
check "stream=sse searches, the live tail and the 429 limit (sse.py)" test $? = 0

# --- the produce rate per topic in the metric ring: non-zero after producing, = the counter's delta --
cat >"$work/rate.py" <<'PY'
import json, subprocess, sys, time, urllib.parse, urllib.request
api, tok, broker = sys.argv[1:4]
H = {"Authorization": f"Bearer {tok}"}
name = 'floe_kafka_records_in_total{topic="clicks"}'
def series(fn):
    q = urllib.parse.urlencode({"name": name, "fn": fn})
    with urllib.request.urlopen(urllib.request.Request(f"{api}/v1/metrics/series?{q}", headers=H), timeout=10) as r:
        return [tuple(p) for p in json.load(r)["series"][0]["points"]]
t0 = int(time.time() * 1000)
subprocess.run(["kcat", "-P", "-b", broker, "-t", "clicks", "-K:"], check=True, text=True,
               input="".join(f"rate-{i}:{{\"n\":{i}}}\n" for i in range(500)))
rate, sums = [], []
for _ in range(150):  # the ring samples every 10 s: at most ~10 s until a sample holds them
    rate, sums = series("rate"), series("sum")
    if any(at > t0 and v > 0 for at, v in rate): break
    time.sleep(0.2)
fresh = [(at, v) for at, v in rate if at > t0 and v > 0]
print("rate points after producing:", fresh)
ok = bool(fresh)
by = dict(sums)
prev = {b: a for a, b in zip(sums, sums[1:])}  # sample -> the one before it
for at, v in rate:
    (pa, pv) = prev[(at, by[at])]
    want = (by[at] - pv) * 1000.0 / (at - pa)
    if abs(v - want) > 1e-3 * max(1, want): ok = False; print("rate", v, "!= delta", want, "at", at)
metrics = urllib.request.urlopen(f"{api}/metrics", timeout=10).read().decode()
counter = [float(l.split()[-1]) for l in metrics.splitlines() if l.startswith(name + " ")]
print("counter", counter, "last sampled sum", sums[-1][1] if sums else None)
ok = ok and bool(counter) and bool(sums) and sums[-1][1] == counter[0]
sys.exit(0 if ok else 1)
PY
timeout 60 /usr/bin/python3 "$work/rate.py" "$api" "$admin" "$broker"
check "the produce rate of clicks is non-zero after producing and equals the counter's delta (rate.py)" test $? = 0

# --- floe.http.console.enabled=false: no console; 12 searches per client: 10 tails at once -------
stop_floe
start_floe "$work" "${common[@]}" --set floe.storage.worker.enabled=false --set floe.http.console.enabled=false \
  --set floe.http.console.export=false --set floe.http.search.max-per-client=12 || exit 1
cat >"$work/tails.py" <<'PY'
import json, subprocess, sys, threading, time, urllib.request
api, tok, broker = sys.argv[1:4]
H = {"Authorization": f"Bearer {tok}"}
with urllib.request.urlopen(urllib.request.Request(f"{api}/v1/topics/clicks/search?from=newest&limit=1", headers=H), timeout=10) as r:
    start = json.load(r)["tail_cursor"]
N, K = 10, 2000
got = [set() for _ in range(N)]
ready = [threading.Event() for _ in range(N)]
def tail(i):
    req = urllib.request.Request(f"{api}/v1/topics/clicks/search?cursor={start}&stream=sse&follow=true&follow-seconds=25", headers=H)
    with urllib.request.urlopen(req, timeout=40) as r:
        ready[i].set()
        for line in r:
            if line.startswith(b"data: "):
                for rec in json.loads(line[6:]).get("records", []):
                    if rec["key"].startswith("tail10-"): got[i].add(rec["offset"])
            if len(got[i]) == K: return
# And one follow=newest tail (the console's): with no filter it reads only the newest `limit`
# (50) records at each step; what it skips it counts, so received + skipped = produced.
newest = {"offsets": [], "skipped": 0}
newest_ready = threading.Event()
def tail_newest():
    req = urllib.request.Request(f"{api}/v1/topics/clicks/search?cursor={start}&stream=sse&follow=newest&limit=50&follow-seconds=25", headers=H)
    with urllib.request.urlopen(req, timeout=40) as r:
        newest_ready.set()
        for line in r:
            if line.startswith(b"data: "):
                d = json.loads(line[6:])
                newest["offsets"] += [rec["offset"] for rec in d.get("records", []) if rec["key"].startswith("tail10-")]
                newest["skipped"] = d.get("skipped", newest["skipped"])
            if newest["offsets"] and len(newest["offsets"]) + newest["skipped"] >= K: return
ts = [threading.Thread(target=tail, args=(i,), daemon=True) for i in range(N)] + [threading.Thread(target=tail_newest, daemon=True)]
for t in ts: t.start()
for e in ready + [newest_ready]: e.wait(10)
subprocess.run(["kcat", "-P", "-b", broker, "-t", "clicks", "-K:"], check=True, text=True,
               input="".join(f"tail10-{i}:{{\"n\":{i}}}\n" for i in range(K)))
for t in ts: t.join(30)
counts = [len(g) for g in got]
print("records received per tail:", counts)
o = newest["offsets"]
print(f"follow=newest: {len(o)} received, {newest['skipped']} skipped, last offset {o[-1] if o else None}, every tail's last {max(got[0]) if got[0] else None}")
newest_ok = bool(o) and o == sorted(set(o)) and len(o) + newest["skipped"] == K and o[-1] == max(got[0])
sys.exit(0 if counts == [K] * N and all(g == got[0] for g in got) and newest_ok else 1)
PY
timeout 90 /usr/bin/python3 "$work/tails.py" "http://127.0.0.1:$HTTP_PORT" "$admin" "127.0.0.1:$KAFKA_PORT"
check "10 live tails at once all receive the 2000 records produced; a follow=newest tail skips and counts (tails.py)" test $? = 0
check "console off: 404" test "$(code "http://127.0.0.1:$HTTP_PORT/console/")" = 404
check "export off: 403" test "$(code "${auth[@]}" "http://127.0.0.1:$HTTP_PORT/v1/topics/clicks/search?format=csv")" = 403
check "export off: searches still answer" test "$(code "${auth[@]}" "http://127.0.0.1:$HTTP_PORT/v1/topics/clicks/search?key=key-1")" = 200
# A stop while tails are open: their streams outlive the lookup service (they go with the HTTP
# server's io_context) and must not touch it (this was a double free, exit 134).
tails=()
for _ in 1 2 3; do
  curl -sN "${auth[@]}" "http://127.0.0.1:$HTTP_PORT/v1/topics/clicks/search?from=oldest&budget=10&stream=sse&follow=true&follow-seconds=60" >/dev/null &
  tails+=($!)
done
sleep 1.5
stop_floe; rc=$?
check "floe stops cleanly while three live tails are open (exit $rc)" test "$rc" = 0
for p in "${tails[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
finish
