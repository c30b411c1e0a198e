// Floe's snappy-format compressor beside the snappy library's on the page bytes Floe's Parquet
// writer compresses: 1 MiB PLAIN pages (4-byte length + value) of generated event values,
// 100 B and 1 KiB. Reports bytes/s and the compressed size as a fraction of the input.
#include "format/parquet/snappy_compress.h"
#include "format/parquet/tests/message_rows.h"

#include <benchmark/benchmark.h>
#include <snappy.h>

#include <string>
#include <vector>

namespace {

constexpr size_t page_bytes = 1u << 20;
constexpr size_t pages = 32;

/// `pages` PLAIN pages of generated values of about `value_size` bytes.
const std::vector<std::string>& event_pages(size_t value_size) {
    static std::vector<std::string> cache[2];
    auto& out = cache[value_size > 100 ? 1 : 0];
    if (!out.empty()) return out;
    floe::testkit::datagen g({.seed = 42, .value_size = value_size});
    for (size_t p = 0; p < pages; ++p)
        out.push_back(floe::parquet::testing::plain_value_page(g, page_bytes));
    return out;
}

template<typename Compress> void run(benchmark::State& st, Compress compress) {
    const auto& in = event_pages(static_cast<size_t>(st.range(0)));
    std::vector<char> out(floe::parquet::snappy_compressor::max_compressed_size(2 * page_bytes));
    size_t in_bytes = 0, out_bytes = 0, i = 0;
    for (auto _ : st) {
        const std::string& page = in[i++ % in.size()];
        size_t n = compress(page, out.data());
        benchmark::DoNotOptimize(out.data());
        in_bytes += page.size();
        out_bytes += n;
    }
    st.SetBytesProcessed(static_cast<int64_t>(in_bytes));
    st.counters["ratio"] = static_cast<double>(out_bytes) / static_cast<double>(in_bytes);
}

void snappy_floe(benchmark::State& st) {
    floe::parquet::snappy_compressor z;
    run(st, [&](const std::string& page, char* out) {
        return z.compress(reinterpret_cast<const uint8_t*>(page.data()), page.size(),
                          reinterpret_cast<uint8_t*>(out));
    });
}
BENCHMARK(snappy_floe)->Arg(100)->Arg(1024);

void snappy_library(benchmark::State& st) {
    run(st, [](const std::string& page, char* out) {
        size_t n = 0;
        snappy::RawCompress(page.data(), page.size(), out, &n);
        return n;
    });
}
BENCHMARK(snappy_library)->Arg(100)->Arg(1024);

} // namespace

BENCHMARK_MAIN();
