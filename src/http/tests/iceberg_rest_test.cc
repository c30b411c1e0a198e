#include "http/iceberg_rest.h"
#include "http/server.h"

#include <gtest/gtest.h>

namespace floe::http {
namespace {

/// A Floe table whose current snapshot 42 carries committed positions.
iceberg::table_metadata floe_table() {
    auto t = iceberg::new_floe_table("file:///wh/floe/t", "9c12d441-03fe-4693-9a96-a0705ddf69c1", 1000);
    iceberg::snapshot s;
    s.snapshot_id = 42;
    s.sequence_number = 1;
    s.timestamp_ms = 1000;
    s.manifest_list = "file:///wh/floe/t/metadata/snap-42.avro";
    s.summary = {{"operation", "append"}, {"floe.committed-positions", R"({"t-0":10,"t-1":5})"}};
    t.snapshots.push_back(s);
    t.current_snapshot_id = 42;
    t.last_sequence_number = 1;
    t.refs["main"] = iceberg::snapshot_ref{42, "branch", {}, {}, {}};
    return t;
}

std::string snapshot_commit(int64_t id, std::string_view positions_json, int64_t parent = 42,
                            std::string_view operation = "append") {
    std::string summary = fmt::format(R"({{"operation":"{}")", operation);
    if (!positions_json.empty()) summary += fmt::format(R"(,"floe.committed-positions":"{}")", positions_json);
    summary += "}";
    return fmt::format(
        R"({{"requirements":[{{"type":"assert-table-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"}},)"
        R"({{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":{}}}],)"
        R"("updates":[{{"action":"add-snapshot","snapshot":{{"snapshot-id":{},"parent-snapshot-id":42,)"
        R"("sequence-number":2,"timestamp-ms":1500,"manifest-list":"m","summary":{}}}}},)"
        R"({{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":{}}}]}})",
        parent, id, summary, id);
}

TEST(iceberg_rest, commit_carrying_positions_forward_is_applied) {
    auto m = apply_commit(floe_table(), snapshot_commit(43, R"({\"t-0\":10,\"t-1\":7})"), 2000);
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->current_snapshot_id, 43);
    EXPECT_EQ(m->last_sequence_number, 2);
    EXPECT_EQ(m->refs.at("main").snapshot_id, 43);
    EXPECT_TRUE(iceberg::parse_metadata(iceberg::to_json_text(*m)));
}

TEST(iceberg_rest, commit_dropping_or_moving_back_positions_is_refused) {
    // A compaction that does not know the entry gets its parent's positions.
    auto compacted = apply_commit(floe_table(), snapshot_commit(43, "", 42, "replace"), 2000);
    ASSERT_TRUE(compacted) << compacted.error().message();
    EXPECT_EQ(compacted->current_snapshot()->summary.at("floe.committed-positions"), R"({"t-0":10,"t-1":5})");
    auto dropped = apply_commit(floe_table(), snapshot_commit(43, ""), 2000);
    ASSERT_FALSE(dropped);
    EXPECT_EQ(dropped.error().code(), errc::invalid_argument);
    EXPECT_NE(dropped.error().message().find("floe.committed-positions"), std::string::npos);
    auto missing_stream = apply_commit(floe_table(), snapshot_commit(43, R"({\"t-0\":10})"), 2000);
    ASSERT_FALSE(missing_stream);
    EXPECT_NE(missing_stream.error().message().find("'t-1'"), std::string::npos);
    auto back = apply_commit(floe_table(), snapshot_commit(43, R"({\"t-0\":9,\"t-1\":5})"), 2000);
    ASSERT_FALSE(back);
    EXPECT_NE(back.error().message().find("back from 10 to 9"), std::string::npos);
    // Removing the main branch leaves no current snapshot: refused as well.
    auto no_main = apply_commit(floe_table(), R"({"requirements":[],"updates":[{"action":"remove-snapshot-ref","ref-name":"main"}]})", 2000);
    ASSERT_FALSE(no_main);
}

TEST(iceberg_rest, failed_requirements_are_conflicts) {
    auto stale = apply_commit(floe_table(), snapshot_commit(43, R"({\"t-0\":10,\"t-1\":5})", 41), 2000);
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), errc::conflict);
    for (auto body : {R"({"requirements":[{"type":"assert-current-schema-id","current-schema-id":3}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-last-assigned-field-id","last-assigned-field-id":1}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-default-spec-id","default-spec-id":1}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-default-sort-order-id","default-sort-order-id":0}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-last-assigned-partition-id","last-assigned-partition-id":1}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}],"updates":[]})",
                      R"({"requirements":[{"type":"assert-create"}],"updates":[]})"}) {
        auto r = apply_commit(floe_table(), body, 2000);
        ASSERT_FALSE(r) << body;
        EXPECT_EQ(r.error().code(), errc::conflict) << body;
    }
    auto ok = apply_commit(floe_table(),
                           R"({"requirements":[{"type":"assert-current-schema-id","current-schema-id":0},)"
                           R"({"type":"assert-last-assigned-field-id","last-assigned-field-id":13}],)"
                           R"("updates":[{"action":"set-properties","updates":{"a":"b"}}]})",
                           2000);
    ASSERT_TRUE(ok) << ok.error().message();
    EXPECT_EQ(ok->properties.at("a"), "b");
}

TEST(iceberg_rest, bad_bodies_are_refused_not_thrown) {
    for (auto body : {"", "[]", "{", R"({"requirements":{},"updates":[]})", R"({"requirements":[1],"updates":[]})",
                      R"({"requirements":[],"updates":[{"action":"set-properties","updates":{"a":1}}]})",
                      R"({"requirements":[],"updates":[{"action":"add-encryption-key"}]})",
                      R"({"requirements":[],"updates":[{"action":"set-snapshot-ref","ref-name":"x","type":"branch","snapshot-id":"s"}]})"}) {
        auto r = apply_commit(floe_table(), body, 2000);
        EXPECT_FALSE(r) << body;
    }
    std::string deep(100, '[');
    auto r = apply_commit(floe_table(), R"({"requirements":)" + deep, 2000);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("nested"), std::string::npos);
}

TEST(http_head, bounds_headers_and_refuses_two_framings) {
    std::string head = "GET / HTTP/1.1\r\n";
    for (size_t i = 0; i <= max_request_headers; ++i) head += fmt::format("X-{}: v\r\n", i);
    auto many = parse_request_head(head);
    ASSERT_FALSE(many);
    EXPECT_EQ(many.error().code(), errc::out_of_range);
    EXPECT_FALSE(parse_request_head("POST / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 2\r\n"));
    EXPECT_FALSE(parse_request_head("GET / HTTP/1.1\r\n: empty name\r\n"));
    EXPECT_TRUE(parse_request_head("GET /a?b=c HTTP/1.1\r\nHost: x\r\n"));
}

} // namespace
} // namespace floe::http
