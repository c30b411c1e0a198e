#!/usr/bin/env bash
# Builds the KIP-848 test client (kip848_client.c) against librdkafka 2.15.1 built from source:
# static library only (no examples, no tests), without SSL/SASL/curl/zstd (the tests need none),
# against Debian's zlib. The library is built once per build tree (a stamp under OUT); a changed
# client source only relinks. Usage: build_client.sh OUT CLIENT_SOURCE
set -euo pipefail
mkdir -p "$1"
out="$(cd "$1" && pwd)"
client_src="$(realpath "$2")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
lib="$out/librdkafka-2.15.1"
if [ ! -f "$lib/.built" ]; then
  start=$(date +%s)
  tgz="$("$here/fetch_source.sh")"
  rm -rf "$lib" "$out/package"
  tar -xzf "$tgz" -C "$out" package/deps/librdkafka
  mv "$out/package/deps/librdkafka" "$lib"
  rm -rf "$out/package"
  # ccache (when present) makes the library cheap in a second build tree.
  if command -v ccache >/dev/null 2>&1; then export CC="ccache ${CC:-cc}"; fi
  (cd "$lib" && ./configure --no-download --disable-ssl --disable-gssapi --disable-curl --disable-zstd \
      --disable-lz4-ext --disable-debug-symbols >"$out/configure.log" 2>&1) \
    || { echo "build_client: configure failed, see $out/configure.log" >&2; tail -20 "$out/configure.log" >&2; exit 1; }
  make -C "$lib/src" -j"${KIP848_JOBS:-2}" librdkafka.a >"$out/make.log" 2>&1 \
    || { echo "build_client: make failed, see $out/make.log" >&2; tail -20 "$out/make.log" >&2; exit 1; }
  mkdir -p "$lib/include/librdkafka"
  cp "$lib/src/rdkafka.h" "$lib/include/librdkafka/"
  touch "$lib/.built"
  echo "build_client: librdkafka 2.15.1 built in $(( $(date +%s) - start )) s"
fi
cc -O1 -Wall -I"$lib/include" -o "$out/kip848_client.tmp" "$client_src" "$lib/src/librdkafka.a" \
  -lz -lpthread -lm -ldl -lrt
mv "$out/kip848_client.tmp" "$out/kip848_client"
