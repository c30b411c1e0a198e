#!/usr/bin/env bash
# Fetches librdkafka's source for the KIP-848 test client: the npm package
# @confluentinc/kafka-javascript@1.10.1 carries librdkafka 2.15.1 under deps/librdkafka.
# `npm pack` only downloads the tarball (no install scripts run). Kept in a per-user cache
# shared by every worktree; checked against its sha256. Idempotent: no network when present.
# Prints the tarball's path.
set -euo pipefail
version=1.10.1
sha=ada7d703bb1d3237e2292bfabf438d663b6160c9f1ac2a2406b5dc4257c81b66
cache="${FLOE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/floe}"
tgz="$cache/confluentinc-kafka-javascript-$version.tgz"
if [ -f "$tgz" ] && echo "$sha  $tgz" | sha256sum -c --status; then
  echo "$tgz"
  exit 0
fi
mkdir -p "$cache"
tmp="$(mktemp -d "$cache/fetch.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "@confluentinc/kafka-javascript@$version" --silent >/dev/null)
got="$tmp/confluentinc-kafka-javascript-$version.tgz"
if ! echo "$sha  $got" | sha256sum -c --status; then
  echo "fetch_source: $got does not have the expected sha256 $sha" >&2
  exit 1
fi
mv "$got" "$tgz"
echo "$tgz"
