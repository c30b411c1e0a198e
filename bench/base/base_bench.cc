// Micro benchmarks for base: CRC-32C (Floe's, hardware and portable) beside zlib's crc32, the
// checksum most peers use for the same job, and varint encoding; plus the data generator.
#include "base/crc32c.h"
#include "base/varint.h"
#include "testkit/datagen.h"

#include <benchmark/benchmark.h>
#include <zlib.h>

#include <random>

namespace {

floe::byte_buffer random_bytes(size_t n) {
    std::mt19937_64 rng(1);
    floe::byte_buffer b(n);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    return b;
}

void crc32c_floe(benchmark::State& st) {
    auto b = random_bytes(st.range(0));
    for (auto _ : st) benchmark::DoNotOptimize(floe::crc32c(b));
    st.SetBytesProcessed(int64_t(st.iterations()) * st.range(0));
}
BENCHMARK(crc32c_floe)->Arg(1024)->Arg(64 * 1024)->Arg(1 << 20);

void crc32c_floe_portable(benchmark::State& st) {
    auto b = random_bytes(st.range(0));
    for (auto _ : st) benchmark::DoNotOptimize(floe::crc32c_portable(0, b));
    st.SetBytesProcessed(int64_t(st.iterations()) * st.range(0));
}
BENCHMARK(crc32c_floe_portable)->Arg(1024)->Arg(64 * 1024)->Arg(1 << 20);

void crc32_peer_zlib(benchmark::State& st) {
    auto b = random_bytes(st.range(0));
    for (auto _ : st) benchmark::DoNotOptimize(crc32(0, b.data(), static_cast<uInt>(b.size())));
    st.SetBytesProcessed(int64_t(st.iterations()) * st.range(0));
}
BENCHMARK(crc32_peer_zlib)->Arg(1024)->Arg(64 * 1024)->Arg(1 << 20);

void varint_encode(benchmark::State& st) {
    std::mt19937_64 rng(2);
    std::vector<int64_t> v(4096);
    for (auto& x : v) x = static_cast<int64_t>(rng() >> (rng() % 60)) * ((rng() & 1) ? 1 : -1);
    floe::byte_buffer out;
    out.reserve(v.size() * 10);
    for (auto _ : st) {
        out.clear();
        for (auto x : v) floe::put_varint(out, x);
        benchmark::DoNotOptimize(out.data());
    }
    st.SetItemsProcessed(int64_t(st.iterations()) * int64_t(v.size()));
}
BENCHMARK(varint_encode);

void datagen_records(benchmark::State& st) {
    floe::testkit::datagen g({.value_size = static_cast<size_t>(st.range(0))});
    for (auto _ : st) benchmark::DoNotOptimize(g.next());
    st.SetItemsProcessed(int64_t(st.iterations()));
}
BENCHMARK(datagen_records)->Arg(100)->Arg(1024);

} // namespace

BENCHMARK_MAIN();
