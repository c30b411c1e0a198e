// libFuzzer target for what the HTTP plane takes from outside clients. The first byte picks:
//  even: the bytes are a request head (request line and headers) for parse_request_head;
//  odd:  the bytes are a REST catalog commit body (CommitTableRequest) applied to a Floe table
//        with a snapshot carrying floe.committed-positions (apply_commit). Whatever it accepts
//        must serialise to metadata that parse_metadata reads back.
#include "http/iceberg_rest.h"
#include "http/server.h"
#include "iceberg/metadata.h"

#include <cstdio>
#include <cstdlib>

namespace {

const floe::iceberg::table_metadata& base_table() {
    static const floe::iceberg::table_metadata m = [] {
        auto t = floe::iceberg::new_floe_table("file:///wh/floe/t", "9c12d441-03fe-4693-9a96-a0705ddf69c1", 1000);
        floe::iceberg::snapshot s;
        s.snapshot_id = 42;
        s.sequence_number = 1;
        s.timestamp_ms = 1000;
        s.manifest_list = "file:///wh/floe/t/metadata/snap-42-1-a.avro";
        s.summary = {{"operation", "append"}, {"floe.committed-positions", R"({"t-0":10,"t-1":5})"}};
        s.schema_id = 0;
        t.snapshots.push_back(s);
        t.current_snapshot_id = 42;
        t.last_sequence_number = 1;
        t.refs["main"] = floe::iceberg::snapshot_ref{42, "branch", {}, {}, {}};
        t.snapshot_log.push_back({1000, 42});
        return t;
    }();
    return m;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] % 2 == 0) {
        (void)floe::http::parse_request_head(text);
        return 0;
    }
    auto m = floe::http::apply_commit(base_table(), text, 2000);
    if (!m) return 0;
    auto json = floe::iceberg::to_json_text(*m);
    auto back = floe::iceberg::parse_metadata(json);
    if (!back) {
        std::fprintf(stderr, "accepted commit made unreadable metadata: %s\n%s\n", back.error().message().c_str(),
                     json.c_str());
        std::abort();
    }
    return 0;
}
