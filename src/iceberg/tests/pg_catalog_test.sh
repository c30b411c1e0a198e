#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on loopback (as user postgres when run as root), runs
# iceberg_pg_check against it, and stops it. Usage: pg_catalog_test.sh <iceberg_pg_check>
set -euo pipefail
check_bin="$1"
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
[ -x "$pgbin/initdb" ] || { echo "PostgreSQL server binaries not found" >&2; exit 1; }
work="$(mktemp -d /tmp/floe-pg-XXXXXX)"
chmod 755 "$work"
data="$work/data"
port=$((20000 + RANDOM % 20000))
as_pg=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as_pg=(runuser -u postgres --); fi
cleanup() {
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"${as_pg[@]}" "$pgbin/initdb" -D "$data" -A trust -U floe >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$data" -l "$work/log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
mkdir -p "$work/wh"
"$check_bin" "postgresql://floe@127.0.0.1:$port/postgres" "$work/wh"
