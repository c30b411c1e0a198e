#include "kafka/legacy_versions.h"
#include <string_view>
#include <vector>

namespace floe::kafka {
namespace {

struct topic_parts {
    std::string_view name;
    std::vector<int32_t> partitions;
};

// The topics and partitions of a classic request body positioned at its topic array; each
// partition entry is its i32 index followed by `skip` (what else the entry holds).
template<typename Skip>
result<std::vector<topic_parts>> read_topics(kreader& r, Skip skip) {
    std::vector<topic_parts> topics;
    int32_t nt = FLOE_TRY(r.array_len(6));
    for (int32_t t = 0; t < nt; ++t) {
        auto& tp = topics.emplace_back();
        tp.name = FLOE_TRY(r.str());
        int32_t np = FLOE_TRY(r.array_len(4));
        for (int32_t p = 0; p < np; ++p) {
            tp.partitions.push_back(FLOE_TRY(r.i32()));
            FLOE_TRY(skip(r));
        }
    }
    return topics;
}

} // namespace

legacy_answer answer_legacy_request(const request_header& h, bytes_view body, byte_buffer& out) {
    const bool produce = h.api_key == int16_t(api_key::produce) && h.api_version >= 0 && h.api_version <= 2;
    const bool fetch = h.api_key == int16_t(api_key::fetch) && h.api_version >= 0 && h.api_version <= 3;
    const bool list_offsets = h.api_key == int16_t(api_key::list_offsets) && h.api_version == 0;
    if (!produce && !fetch && !list_offsets) return legacy_answer::not_legacy;
    auto parsed = [&]() -> result<std::pair<std::vector<topic_parts>, bool>> {
        kreader r(body, false);
        (void)FLOE_TRY(r.nstr()); // client_id (request header v1)
        if (produce) {
            int16_t acks = FLOE_TRY(r.i16());
            (void)FLOE_TRY(r.i32()); // timeout
            auto t = FLOE_TRY(read_topics(r, [](kreader& k) -> result<void> {
                (void)FLOE_TRY(k.bytes()); // the message set
                return {};
            }));
            return std::pair{std::move(t), acks != 0};
        }
        if (fetch) {
            (void)FLOE_TRY(r.i32()); // replica_id
            (void)FLOE_TRY(r.i32()); // max_wait_ms
            (void)FLOE_TRY(r.i32()); // min_bytes
            if (h.api_version >= 3) (void)FLOE_TRY(r.i32()); // max_bytes
            auto t = FLOE_TRY(read_topics(r, [](kreader& k) -> result<void> {
                (void)FLOE_TRY(k.i64()); // fetch_offset
                (void)FLOE_TRY(k.i32()); // partition_max_bytes
                return {};
            }));
            return std::pair{std::move(t), true};
        }
        (void)FLOE_TRY(r.i32()); // replica_id
        auto t = FLOE_TRY(read_topics(r, [](kreader& k) -> result<void> {
            (void)FLOE_TRY(k.i64()); // timestamp
            (void)FLOE_TRY(k.i32()); // max_num_offsets
            return {};
        }));
        return std::pair{std::move(t), true};
    }();
    if (!parsed || !parsed->second) return legacy_answer::close;
    const auto& topics = parsed->first;
    const int16_t err = int16_t(kerr::unsupported_version);
    size_t start = begin_response(out, h);
    kwriter w(out, false);
    if (fetch && h.api_version >= 1) w.i32(0); // throttle_time_ms
    w.array_len(topics.size());
    for (auto& t : topics) {
        w.str(t.name);
        w.array_len(t.partitions.size());
        for (int32_t p : t.partitions) {
            w.i32(p);
            w.i16(err);
            if (produce) {
                w.i64(-1);                            // base_offset
                if (h.api_version >= 2) w.i64(-1);    // log_append_time_ms
            } else if (fetch) {
                w.i64(-1);                            // high_watermark
                w.bytes({});                          // records
            } else {
                w.array_len(0);                       // old_style_offsets
            }
        }
    }
    if (produce && h.api_version >= 1) w.i32(0); // throttle_time_ms
    finish_response(out, start);
    return legacy_answer::answered;
}

} // namespace floe::kafka
