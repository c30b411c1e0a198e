#include "log/testing/batch_builder.h"
#include <fstream>
// Regenerates the seed corpus of log_segment_fuzz (not built; run by hand:
//   g++ -std=c++23 -Isrc src/log/fuzz/gen_seeds.cc src/log/record_batch_header.cc
//       src/base/crc32c.cc src/base/error.cc -lfmt -o /tmp/gen_seeds && /tmp/gen_seeds)
using namespace floe; using namespace floe::log; using namespace floe::log::testing;
static void save(const char* name, const byte_buffer& b) {
    std::ofstream(std::string("/work/main/src/log/fuzz/corpus/log_segment_fuzz/") + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
int main() {
    byte_buffer seg; int64_t off = 0;
    for (int i = 0; i < 4; ++i) {
        auto b = make_batch(size_t(1 + i), 12, 1000 + i);
        patch_base_offset(b, off); off += 1 + i;
        seg.insert(seg.end(), b.begin(), b.end());
    }
    save("segment_4_batches", seg);
    save("segment_torn", byte_buffer(seg.begin(), seg.end() - 7));
    auto idem = make_batch(3, 8, 5, {.base_offset = 0, .producer_id = 77, .producer_epoch = 2, .base_sequence = 10});
    save("idempotent_batch", idem);
    auto lat = make_batch(2, 8, 5);
    patch_log_append_time(lat, 1700000000000);
    save("log_append_time_batch", lat);
    std::vector<test_record> rs(2);
    rs[0].key = std::nullopt; rs[0].value = "v"; rs[0].headers = {{"h", "x"}, {"n", std::nullopt}};
    rs[1].key = "k"; rs[1].value = std::nullopt; rs[1].timestamp_ms = 3;
    byte_buffer hb; append_batch(hb, rs, {.base_offset = 0});
    save("headers_and_nulls", hb);
}
