#!/usr/bin/env bash
# End-to-end checks of the floe command line: version, config precedence and sources, every
# kind of settings error (exit 2 naming the key and source), and `floe serve` starting, logging
# its paths and ports, and stopping cleanly on SIGTERM and SIGINT (text and JSON logs).
# Every floe started here answers the schema registry on a free port (its default, 127.0.0.1:8081,
# would collide between tests running in parallel); a test that needs the registry sets its own.
export FLOE_SCHEMA_REGISTRY_LISTEN="${FLOE_SCHEMA_REGISTRY_LISTEN:-127.0.0.1:0}"
set -uo pipefail
floe="$(realpath "$1")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0; passed=0
check() { # name, condition command...
  local name="$1"; shift
  if "$@"; then passed=$((passed+1)); else echo "FAIL: $name"; failures=$((failures+1)); fi
}
contains() { grep -qF -- "$2" <<<"$1"; }
lacks() { ! grep -qF -- "$2" <<<"$1"; }

out=$("$floe" version); check "version" contains "$out" "floe 0."
out=$("$floe" --help); check "help lists settings" contains "$out" "floe.storage.worker.tick-interval"
check "help lists env names" contains "$out" "FLOE_STORAGE_REMOTE_PATH"
check "help lists topic defaults" contains "$out" "floe.topic-defaults.remote.storage.enable"

cat > floe.yaml <<'YAML'
floe:
  namespace: from_file
  kafka:
    listen: 127.0.0.1:19092
YAML
out=$(FLOE_NAMESPACE=from_env "$floe" config --set floe.http.listen=127.0.0.1:18080)
check "file value and source" contains "$out" "127.0.0.1:19092"
check "file source line" contains "$out" "file floe.yaml:4"
check "env beats file" contains "$out" "# env FLOE_NAMESPACE"
check "set value" contains "$(grep floe.http.listen <<<"$out")" "--set"
out=$(FLOE_NAMESPACE=from_env "$floe" config --set floe.namespace=from_set)
check "set beats env" contains "$(grep 'floe.namespace ' <<<"$out")" "from_set"
out=$("$floe" config --set floe.storage.remote.s3.secret-access-key=hunter2)
check "secret redacted" bash -c "! grep -q hunter2 <<<'$out'"

expect_usage_error() { # name, expected text, args...
  local name="$1" text="$2"; shift 2
  local err rc
  err=$("$@" 2>&1 >/dev/null); rc=$?
  check "$name exits 2 (got $rc)" test "$rc" -eq 2
  check "$name says '$text'" contains "$err" "$text"
}
expect_usage_error "unknown key" "unknown setting 'floe.nope'" "$floe" config --set floe.nope=1
expect_usage_error "bad bool" "floe.storage.worker.enabled" "$floe" config --set floe.storage.worker.enabled=perhaps
expect_usage_error "bad size" "unknown unit" "$floe" serve --set floe.storage.remote.iceberg.target-file-size=3parsecs
expect_usage_error "bad duration" "needs a unit" "$floe" serve --set floe.storage.worker.tick-interval=10
expect_usage_error "unknown env" "FLOE_BOGUS" env FLOE_BOGUS=1 "$floe" config
expect_usage_error "missing --config" "does not exist" "$floe" config --config "$work/none.yaml"
printf 'floe:\n  kafka:\n    listn: x\n' > bad.yaml
expect_usage_error "unknown key in file" "bad.yaml:3" "$floe" config --config bad.yaml
expect_usage_error "bad log format" "--log-format" "$floe" --log-format xml version
rm floe.yaml

# serve: starts, logs where things are, stops cleanly on SIGTERM.
run_serve() { # signal, extra args...
  local sig="$1"; shift
  "$floe" "$@" serve --set floe.data-dir="$work/data" --set floe.kafka.listen=127.0.0.1:0 \
      --set floe.http.listen=127.0.0.1:0 > serve.out 2> serve.log &
  local pid=$!
  for _ in $(seq 1 100); do grep -q "floe is up" serve.log && break; sleep 0.1; done
  kill -s "$sig" "$pid"
  local rc=0
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; rc=99; else wait "$pid"; rc=$?; fi
  echo "$rc"
}
rc=$(run_serve TERM)
log=$(cat serve.log)
check "serve exits 0 on SIGTERM (got $rc)" test "$rc" -eq 0
check "serve logs data dir" contains "$log" "data directory: $work/data"
check "serve logs catalog" contains "$log" "sqlite://$work/data/catalog.db"
check "serve logs warehouse" contains "$log" "file://$work/data/warehouse"
check "serve logs stop" contains "$log" "floe stopped cleanly"
check "data dir created" test -d "$work/data"
rc=$(run_serve INT --log-format json)
check "serve exits 0 on SIGINT (got $rc)" test "$rc" -eq 0
check "json logs are JSON lines" /usr/bin/python3 -c '
import json,sys
lines=[l for l in open("serve.log") if l.strip()]
assert lines, "no log lines"
for l in lines:
    o=json.loads(l); assert {"ts","level","msg"} <= o.keys(), o
'

# --- encryption keys (issue 30): the keyring is checked before anything starts ---------------------
keyring="$work/keys.json"
printf '{"current": "k1", "keys": {"k1": "AAECAwQFBgcICQoLDA0ODw=="}}' > "$keyring"
chmod 644 "$keyring"
enc=(--set floe.data-dir="$work/enc" --set floe.kafka.listen=127.0.0.1:0 --set floe.http.listen=127.0.0.1:0
     --set floe.encryption.provider=keyring --set floe.encryption.keyring-file="$keyring")
expect_usage_error "world-readable keyring" "mode 0644" "$floe" serve "${enc[@]}"
expect_usage_error "world-readable keyring names the setting" "floe.encryption.keyring-file" "$floe" serve "${enc[@]}"
expect_usage_error "keyring provider without a file" "floe.encryption.keyring-file" \
  "$floe" serve --set floe.encryption.provider=keyring
expect_usage_error "encrypting topic default without a provider" "floe.encryption.provider" \
  "$floe" serve --set floe.topic-defaults.floe.iceberg.encryption=uniform
chmod 600 "$keyring"
# With a provider the lake encrypts: an encrypting topic default is accepted.
"$floe" serve "${enc[@]}" --set floe.topic-defaults.floe.iceberg.encryption=uniform > serve.out 2> serve.log &
pid=$!
for _ in $(seq 1 100); do grep -q "floe is up" serve.log && break; sleep 0.1; done
check "serve with an owner-only keyring and an encrypting topic default starts" grep -q "floe is up" serve.log
check "it logs the keyring and its current key" grep -q "current key 'k1'" serve.log
check "the key is not logged" bash -c "! grep -q AAECAwQFBgcICQoLDA0ODw serve.log"
# Rotation: k2 added and made current, SIGHUP re-reads the keyring.
printf '{"current": "k2", "keys": {"k1": "AAECAwQFBgcICQoLDA0ODw==", "k2": "DwAODQwLCgkIBwYFBAMCAQ=="}}' > "$keyring"
kill -HUP "$pid"
for _ in $(seq 1 100); do grep -q "SIGHUP: keyring" serve.log && break; sleep 0.1; done
check "SIGHUP re-reads the keyring (current k2, 2 keys)" grep -q "SIGHUP: keyring .*current key 'k2', 2 key(s)" serve.log
kill -TERM "$pid"
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
wait "$pid" 2>/dev/null

# --- what a new user hit (issue 25) ------------------------------------------------------------------
# A command's --help shows its own options and points to `floe --help` for the settings.
out=$("$floe" serve --help)
check "serve --help is short ($(wc -l <<<"$out") lines)" test "$(wc -l <<<"$out")" -lt 40
check "serve --help shows --set" contains "$out" "--set"
check "serve --help points to floe --help" contains "$out" "floe --help"
check "serve --help does not list every setting" lacks "$out" floe.storage.worker.tick-interval
out=$("$floe" users add --help)
check "users add --help shows --force" contains "$out" "--force"
check "users add --help does not list every setting" lacks "$out" floe.storage.worker.tick-interval
out=$("$floe" --help)
check "floe --help still lists every setting" contains "$out" "floe.storage.worker.tick-interval"
# An unknown setting names the nearest one.
expect_usage_error "mistyped setting" "did you mean 'floe.storage.worker.tick-interval'?" \
  "$floe" config --set floe.storage.worker.tick-intervall=1s
expect_usage_error "mistyped env" "did you mean 'FLOE_KAFKA_LISTEN'?" env FLOE_KAFKA_LISTN=x "$floe" config
# floe users add does not silently replace a user.
pw() { printf '%s\n' "$1"; }
users_dir=(--set floe.data-dir="$work/users")
pw first | "$floe" users add carol "${users_dir[@]}" >/dev/null 2>&1
store=$(cat "$work/users/security/users.json")
err=$(pw second | "$floe" users add carol "${users_dir[@]}" 2>&1 >/dev/null); rc=$?
check "users add of an existing user is refused (rc=$rc)" test "$rc" -eq 3
check "it says --force" contains "$err" "--force"
check "the store is unchanged" test "$(cat "$work/users/security/users.json")" = "$store"
pw second | "$floe" users add carol --force "${users_dir[@]}" >/dev/null 2>&1; rc=$?
check "users add --force replaces it (rc=$rc)" test "$rc" -eq 0 -a "$(cat "$work/users/security/users.json")" != "$store"
# floe maintain --table of a table that is not there: its error only, no empty result table.
out=$("$floe" maintain --table no.such --set floe.data-dir="$work/m" 2>"$work/maintain.err"); rc=$?
check "maintain --table no.such fails (rc=$rc)" test "$rc" -eq 1
check "maintain --table no.such says which table" grep -q "floe.no_such" "$work/maintain.err"
check "maintain --table no.such prints no empty table ('$out')" test -z "$out"
# make run takes settings: ARGS goes to floe serve as is (FLOE_* variables pass through make).
repo="$(cd "$(dirname "$0")/../../.." && pwd)"
out=$(make -s -n -C "$repo" run BUILD=build ARGS='--set floe.kafka.listen=127.0.0.1:19092' 2>&1)
check "make run passes ARGS to floe serve" contains "$out" "bin/floe serve --set floe.kafka.listen=127.0.0.1:19092"

echo "cli: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
