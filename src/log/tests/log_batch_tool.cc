// Test helper for the kafkajs format check (tests/js/log/kafkajs_segment_check.mjs):
//   log_batch_tool <dir> <batches.bin> [log-append-time]
// Appends every batch of <batches.bin> (as a client sent them) to a fresh partition log in
// <dir>, one append per batch, closes it, reopens it (recovery must find nothing to cut), and
// prints the path of the segment file for the verifier to decode.
#include "log/fs_util.h"
#include "log/partition_log.h"

#include <fmt/format.h>

using namespace floe;
using namespace floe::log;

int main(int argc, char** argv) {
    if (argc < 3) {
        fmt::print(stderr, "usage: log_batch_tool <dir> <batches.bin> [log-append-time]\n");
        return 2;
    }
    std::filesystem::remove_all(argv[1]);
    topic_config cfg;
    if (argc > 3 && std::string_view(argv[3]) == "log-append-time")
        cfg.message_timestamp_type = timestamp_type::log_append_time;
    partition_log_options o;
    o.dir = argv[1];
    o.tp = {"kafkajs", 0};
    o.config = cfg;
    auto input = read_file(argv[2]);
    if (!input) {
        fmt::print(stderr, "{}\n", input.error());
        return 1;
    }
    {
        auto l = partition_log::open(o);
        if (!l) {
            fmt::print(stderr, "{}\n", l.error());
            return 1;
        }
        size_t pos = 0, n = 0;
        while (pos < input->size()) {
            auto pre = parse_batch_prefix(bytes_view(input->data() + pos, input->size() - pos));
            if (!pre) break;
            size_t size = 12 + size_t(pre->batch_length);
            if (pos + size > input->size()) break;
            auto r = (*l)->append(std::span<uint8_t>(input->data() + pos, size));
            if (!r || r->status != append_status::ok) {
                fmt::print(stderr, "append of batch {} failed: {}\n", n,
                           r ? r->message : r.error().to_string());
                return 1;
            }
            pos += size;
            ++n;
        }
        if (auto c = (*l)->close(); !c) {
            fmt::print(stderr, "{}\n", c.error());
            return 1;
        }
    }
    auto l = partition_log::open(o);
    if (!l || (*l)->last_recovery().truncated_bytes != 0) {
        fmt::print(stderr, "reopen failed or cut bytes\n");
        return 1;
    }
    fmt::print("{}\n", (*l)->segments().front().path.string());
    return 0;
}
