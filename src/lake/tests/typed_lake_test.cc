// Typed tables in the lake: a real registry (in-memory log), real SQLite catalog and Parquet
// files; Avro values encoded here by hand from the specification's binary encoding.
#include "lake/iceberg_lake.h"
#include "lake/tests/test_lake.h"

#include "format/parquet/reader.h"
#include "format/parquet/tests/typed_rows.h"
#include "schema/registry.h"
#include "schema/store.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

namespace floe::lake {
namespace {

namespace fs = std::filesystem;

// Avro binary: zig-zag varint longs, length-prefixed strings.
void put_long(std::string& out, int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
        out += static_cast<char>((z & 0x7f) | 0x80);
        z >>= 7;
    }
    out += static_cast<char>(z);
}
void put_string(std::string& out, std::string_view s) {
    put_long(out, static_cast<int64_t>(s.size()));
    out += s;
}
std::string framed(int32_t id, std::string_view payload) {
    std::string out(1, '\0');
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((id >> shift) & 0xff);
    return out + std::string(payload);
}

constexpr auto v1 = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"country","type":"string"}]})";
constexpr auto v2 = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"country","type":"string"},{"name":"qty","type":["null","int"],"default":null}]})";
constexpr auto bad = R"({"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"country","type":"string"}]})";

class TypedLakeTest : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = testing::fresh_test_dir("floe-typed-lake");
        _lake = testing::open_test_lake(_dir);
        ASSERT_TRUE(_lake);
        _registry = std::make_shared<schema::registry>(std::shared_ptr<schema::registry_log>(schema::make_memory_log()));
        _lake->set_registry(_registry);
        _typed.how = value_decoding::mode::schema_id;
        _typed.subject = "orders-value";
    }
    void TearDown() override { fs::remove_all(_dir); }

    int32_t register_schema(const char* text, const std::string& subject = "orders-value") {
        schema::schema_request req;
        req.schema = text;
        auto id = _registry->register_schema(subject, req);
        EXPECT_TRUE(id) << (id ? "" : id.error().message);
        return id ? *id : -1;
    }

    /// Appends `values` at offsets [from, from + n) of orders-0 and commits position from + n.
    result<commit_result> append_values(const std::vector<std::optional<std::string>>& values, int64_t from,
                                        bool commit = true) {
        auto t = FLOE_TRY(_lake->table_for_topic("orders"));
        auto app = FLOE_TRY(t->begin_append(_typed));
        for (size_t i = 0; i < values.size(); ++i) {
            int64_t o = from + static_cast<int64_t>(i);
            auto id = std::to_string(o);
            parquet::message_row row;
            row.stream_key = "orders-0";
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = 1000 + o;
            row.kafka_timestamp = 1000 + o;
            row.key = id;
            if (values[i]) row.value = *values[i];
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        if (!commit) return commit_result{};
        return app->commit({{"orders-0", from + static_cast<int64_t>(values.size())}});
    }

    /// Offsets held by a table's live files, read back with the message reader (Floe's columns).
    std::multiset<int64_t> offsets(const std::string& table) {
        std::multiset<int64_t> out;
        auto files = current_data_files(_lake->catalog(), _lake->io(), {"floe", table});
        if (!files) return out;
        for (auto& f : files->files) {
            auto src = parquet::open_file_source(readable_path(f.file_path));
            auto r = parquet::message_reader::open(std::move(*src));
            EXPECT_TRUE(r) << r.error();
            std::vector<parquet::message_record> got;
            while (r) {
                auto more = r->next_row_group(got);
                if (!more || !*more) break;
            }
            for (auto& row : got) out.insert(row.offset);
        }
        return out;
    }

    /// The dead-letter table's (error_reason, error_detail) by offset, read with Floe's reader.
    std::map<int64_t, std::pair<std::string, std::string>> dlq_reasons() {
        std::map<int64_t, std::pair<std::string, std::string>> out;
        auto files = current_data_files(_lake->catalog(), _lake->io(), {"floe", "orders_dlq"});
        if (!files) return out;
        for (auto& f : files->files) {
            auto r = parquet::file_reader::open_file(readable_path(f.file_path));
            EXPECT_TRUE(r) << r.error();
            auto& cols = (*r)->file_schema().columns();
            size_t off = cols.size(), reason = off, detail = off;
            for (size_t c = 0; c < cols.size(); ++c) {
                if (cols[c].dotted_path() == "offset") off = c;
                if (cols[c].dotted_path() == "error_reason") reason = c;
                if (cols[c].dotted_path() == "error_detail") detail = c;
            }
            for (size_t rg = 0; rg < (*r)->num_row_groups(); ++rg) {
                auto o = (*r)->read_column(rg, off);
                auto re = (*r)->read_column(rg, reason);
                auto de = (*r)->read_column(rg, detail);
                EXPECT_TRUE(o && re && de);
                auto oe = parquet::testing::entries_of(cols[off], *o);
                auto ree = parquet::testing::entries_of(cols[reason], *re);
                auto dee = parquet::testing::entries_of(cols[detail], *de);
                for (size_t i = 0; i < oe.values.size(); ++i) {
                    int64_t v;
                    std::memcpy(&v, oe.values[i].data(), 8);
                    out[v] = {ree.values[i], i < dee.values.size() ? dee.values[i] : ""};
                }
            }
        }
        return out;
    }

    std::vector<std::string> data_fields() {
        auto t = iceberg::load_table(_lake->catalog(), _lake->io(), {"floe", "orders"});
        EXPECT_TRUE(t) << t.error();
        std::vector<std::string> out;
        if (auto* d = t->metadata.current_schema()->find("data"))
            for (auto& f : d->field_type->fields) out.push_back(f.name);
        return out;
    }

    std::string order(int32_t id, int64_t n, std::string_view country, std::optional<int32_t> qty = {},
                      bool with_qty = false) {
        std::string p;
        put_long(p, n);
        put_string(p, country);
        if (with_qty) {
            put_long(p, qty ? 1 : 0); // union branch
            if (qty) put_long(p, *qty);
        }
        return framed(id, p);
    }

    fs::path _dir;
    std::unique_ptr<iceberg_lake> _lake;
    std::shared_ptr<schema::registry> _registry;
    value_decoding _typed;
};

TEST_F(TypedLakeTest, ValuesBecomeTypedRowsAndBadOnesDeadLettersExactlyOnce) {
    auto id1 = register_schema(v1);
    std::vector<std::optional<std::string>> values = {
        order(id1, 1, "FR"), std::string("\x07garbage", 8), order(id1 + 1000, 2, "DE"),
        order(id1, 3, "JP").substr(0, 7), std::nullopt, order(id1, 5, "BR")};
    auto r = append_values(values, 0);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 3); // 0, 4 (tombstone), 5
    EXPECT_EQ(r->dead_letter_rows, 3);
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 4, 5}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{1, 2, 3}));
    EXPECT_EQ(data_fields(), (std::vector<std::string>{"id", "country"}));
    auto n = dead_letter_records(*_lake, "orders");
    ASSERT_TRUE(n) << n.error();
    EXPECT_EQ(*n, 3);
}

TEST_F(TypedLakeTest, NewVersionAddsAnOptionalColumnAndIncompatibleGoesToTheDeadLetters) {
    auto id1 = register_schema(v1);
    ASSERT_TRUE(append_values({order(id1, 1, "FR")}, 0));
    auto id2 = register_schema(v2);
    // string -> int for `id`: the registry would refuse it at BACKWARD; registered elsewhere.
    auto id3 = register_schema(bad, "other-value");
    std::string bad_payload;
    put_string(bad_payload, "x");
    put_string(bad_payload, "FR");
    auto r = append_values({order(id2, 2, "DE", 7, true), framed(id3, bad_payload), order(id1, 3, "JP")}, 1);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 2);
    EXPECT_EQ(r->dead_letter_rows, 1);
    EXPECT_EQ(data_fields(), (std::vector<std::string>{"id", "country", "qty"}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{2}));
}

TEST_F(TypedLakeTest, RetryAfterTheMainCommitWasLostAddsNothingTwice) {
    auto id1 = register_schema(v1);
    ASSERT_TRUE(append_values({order(id1, 0, "FR"), std::string("\x09xx", 3)}, 0)); // both tables at 2
    // The state a crash leaves between the two commits of offsets 2..3: the dead-letter table
    // (committed first) holds them and is at 4, the main table is still at 2. Built by appending
    // to the dead-letter table directly (its table name is also a topic's table name).
    {
        auto dlq = _lake->table_for_topic("orders_dlq");
        ASSERT_TRUE(dlq);
        auto app = (*dlq)->begin_append();
        ASSERT_TRUE(app);
        for (int64_t o : {2, 3}) {
            auto id = std::to_string(o);
            std::string v("\x0b", 1);
            parquet::message_row row;
            row.stream_key = "orders-0";
            row.message_id = id;
            row.value = v;
            row.offset = o;
            ASSERT_TRUE((*app)->add(row));
        }
        ASSERT_TRUE((*app)->commit({{"orders-0", 4}}));
    }
    // The retry reads offsets 2..4 again; offset 3 decodes now (as if its schema had been
    // registered meanwhile): it must not land in the main table too.
    auto r = append_values({std::string("\x0b", 1), order(id1, 3, "JP"), order(id1, 4, "BR")}, 2);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 1);
    EXPECT_EQ(r->dead_letter_rows, 0);
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 4}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{1, 2, 3}));
    auto pos = (*_lake->table_for_topic("orders"))->committed_positions();
    ASSERT_TRUE(pos);
    EXPECT_EQ(pos->at("orders-0"), 5);
}

TEST_F(TypedLakeTest, LatestSchemaDecodesPlainAvroAndSchemaIdDecodesProtobufAndJson) {
    // latest-schema: values are plain Avro (no header), decoded with the subject's newest version.
    _typed.how = value_decoding::mode::latest_schema;
    auto r0 = append_values({std::string("\x02\x02FR", 4)}, 0);
    ASSERT_TRUE(r0) << r0.error();
    EXPECT_EQ(r0->dead_letter_rows, 1); // no version yet: unknown-subject
    register_schema(v1);
    std::string plain;
    put_long(plain, 7);
    put_string(plain, "JP");
    auto r1 = append_values({plain}, 1);
    ASSERT_TRUE(r1) << r1.error();
    EXPECT_EQ(r1->added_rows, 1);
    EXPECT_EQ(data_fields(), (std::vector<std::string>{"id", "country"}));
    // schema-id with a Protobuf schema: the message-index path picks the message; its fields
    // join `data` by name (`id` is the same column, `s` and `n` are new).
    _typed.how = value_decoding::mode::schema_id;
    schema::schema_request proto;
    proto.schema = "syntax = \"proto3\"; message Skip { bool b = 1; } message M { int64 id = 1; string s = 2; "
                   "message N { int32 n = 1; } N nested = 3; }";
    proto.type = schema::schema_type::protobuf;
    auto pid = _registry->register_schema("proto-value", proto);
    ASSERT_TRUE(pid) << pid.error().message;
    // [1] (count 1, index 1): M{id 5, s "x", nested {n 3}}; [1, 0]: M.N{n 4} (another message of
    // the schema: its field n joins `data` by name too); [3]: no such message; a cut message.
    std::string m = std::string("\x02\x02", 2) + std::string("\x08\x05\x12\x01x\x1a\x02\x08\x03", 9);
    std::string nested = std::string("\x04\x02\x00", 3) + std::string("\x08\x04", 2);
    std::string nowhere = std::string("\x02\x06", 2) + std::string("\x08\x05", 2);
    std::string cut = std::string("\x02\x02", 2) + std::string("\x12\x05" "ab", 4);
    // JSON Schema: the value after the header is JSON text.
    schema::schema_request json;
    json.schema = R"({"type":"object","properties":{"id":{"type":"integer"},"country":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}}})";
    json.type = schema::schema_type::json;
    auto jid = _registry->register_schema("json-value", json);
    ASSERT_TRUE(jid) << jid.error().message;
    // A Protobuf schema with a proto2 group: genuinely unsupported.
    schema::schema_request group;
    group.schema = "syntax = \"proto2\"; message G { optional group Inner = 1 { optional int32 a = 2; } }";
    group.type = schema::schema_type::protobuf;
    auto gid = _registry->register_schema("group-value", group);
    ASSERT_TRUE(gid) << gid.error().message;
    auto r2 = append_values({framed(*pid, m), framed(*pid, nested), framed(*pid, nowhere), framed(*pid, cut),
                             framed(*jid, R"({"id": 9, "country": "DE", "tags": ["a", "b"]})"),
                             framed(*jid, R"({"id": "nine"})"), framed(*gid, std::string("\x00", 1))},
                            2);
    ASSERT_TRUE(r2) << r2.error();
    EXPECT_EQ(r2->added_rows, 3);
    EXPECT_EQ(r2->dead_letter_rows, 4);
    EXPECT_EQ(data_fields(), (std::vector<std::string>{"id", "country", "s", "nested", "n", "tags"}));
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{1, 2, 3, 6}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{0, 4, 5, 7, 8}));
    auto reasons = dlq_reasons();
    EXPECT_EQ(reasons[4].first, "decode-error") << reasons[4].second;
    EXPECT_NE(reasons[4].second.find("message indexes [3] name no message"), std::string::npos) << reasons[4].second;
    EXPECT_EQ(reasons[5].first, "decode-error") << reasons[5].second;
    EXPECT_NE(reasons[5].second.find("length 5 with 2 bytes left"), std::string::npos) << reasons[5].second;
    EXPECT_EQ(reasons[7].first, "decode-error") << reasons[7].second;
    EXPECT_NE(reasons[7].second.find("field `id`: expected integer, got string"), std::string::npos) << reasons[7].second;
    EXPECT_EQ(reasons[8].first, "unsupported-schema-type") << reasons[8].second;

    // latest-schema with Protobuf: plain message bytes, the message named by the topic config.
    _typed.how = value_decoding::mode::latest_schema;
    _typed.subject = "proto-value";
    _typed.protobuf_message = "M";
    auto r3 = append_values({std::string("\x08\x0b\x12\x02yz", 6)}, 9);
    ASSERT_TRUE(r3) << r3.error();
    EXPECT_EQ(r3->added_rows, 1);
    _typed.protobuf_message = "Nope";
    auto r4 = append_values({std::string("\x08\x0b", 2)}, 10);
    ASSERT_TRUE(r4) << r4.error();
    EXPECT_EQ(r4->dead_letter_rows, 1);
    EXPECT_NE(dlq_reasons()[10].second.find("has no message Nope"), std::string::npos) << dlq_reasons()[10].second;
    // latest-schema with JSON Schema: the value is JSON text, no header.
    _typed.subject = "json-value";
    auto r5 = append_values({std::string(R"({"id": 12, "tags": []})"), std::string(R"({"tags": 5})")}, 11);
    ASSERT_TRUE(r5) << r5.error();
    EXPECT_EQ(r5->added_rows, 1);
    EXPECT_EQ(r5->dead_letter_rows, 1);
    EXPECT_NE(dlq_reasons()[12].second.find("field `tags`: expected array, got number"), std::string::npos)
        << dlq_reasons()[12].second;
}

TEST_F(TypedLakeTest, ReplayMovesWhatDecodesNowAndKeepsTheRest) {
    auto id1 = register_schema(v1);
    const int32_t later = id1 + 50;
    ASSERT_TRUE(append_values({order(id1, 0, "FR"), order(later, 1, "DE"), std::string("\x07zz", 3)}, 0));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{1, 2}));
    // The missing id is registered (IMPORT mode keeps another registry's ids).
    auto m = _registry->set_mode("imported", "IMPORT", true);
    ASSERT_TRUE(m) << m.error().message;
    schema::schema_request req;
    req.schema = v1;
    req.id = later;
    req.version = 1;
    auto got = _registry->register_schema("imported", req);
    ASSERT_TRUE(got) << got.error().message;
    auto rep = replay_dead_letters(*_lake, "orders", _typed);
    ASSERT_TRUE(rep) << rep.error();
    EXPECT_EQ(rep->replayed, 1);
    EXPECT_EQ(rep->still_dead, 1);
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 1}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{2}));
    auto again = replay_dead_letters(*_lake, "orders", _typed);
    ASSERT_TRUE(again) << again.error();
    EXPECT_EQ(again->replayed, 0);
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 1}));
    // Later offloads go on from the same positions.
    ASSERT_TRUE(append_values({order(id1, 3, "JP")}, 3));
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 1, 3}));
}

constexpr auto key1 = R"({"type":"record","name":"Key","fields":[{"name":"tenant","type":"string"}]})";
constexpr auto key2 = R"({"type":"record","name":"Key","fields":[{"name":"tenant","type":"string"},{"name":"shard","type":["null","int"],"default":null}]})";

/// The leaf at `path` of a table's live files, by offset: "def" or "def=value" (flat leaves;
/// ints as numbers, byte arrays as text).
std::map<int64_t, std::string> leaf_by_offset(iceberg_lake& lake, const std::string& table, const std::string& path) {
    std::map<int64_t, std::string> out;
    auto files = current_data_files(lake.catalog(), lake.io(), {"floe", table});
    EXPECT_TRUE(files) << files.error();
    if (!files) return out;
    for (auto& f : files->files) {
        auto r = parquet::file_reader::open_file(readable_path(f.file_path));
        EXPECT_TRUE(r) << r.error();
        auto& sch = (*r)->file_schema();
        auto col = sch.column_by_path(path);
        for (size_t rg = 0; rg < (*r)->num_row_groups(); ++rg) {
            auto offs = (*r)->read_column(rg, parquet::message_col::offset);
            EXPECT_TRUE(offs) << offs.error();
            if (!col) { // a file from before the column existed
                for (auto o : offs->i64) out[o] = "absent";
                continue;
            }
            auto c = (*r)->read_column(rg, *col);
            EXPECT_TRUE(c) << c.error();
            auto e = parquet::testing::entries_of(sch.columns()[*col], *c);
            EXPECT_EQ(e.def.size(), offs->i64.size()) << path << ": a flat leaf has one entry per row";
            size_t vi = 0;
            for (size_t i = 0; i < e.def.size() && i < offs->i64.size(); ++i) {
                std::string v = fmt::format("{}", e.def[i]);
                if (e.def[i] == sch.columns()[*col].max_def) {
                    auto& raw = e.values[vi++];
                    if (sch.columns()[*col].type == parquet::physical_type::int32) {
                        int32_t x;
                        std::memcpy(&x, raw.data(), 4);
                        v += fmt::format("={}", x);
                    } else if (sch.columns()[*col].type == parquet::physical_type::int64) {
                        int64_t x;
                        std::memcpy(&x, raw.data(), 8);
                        v += fmt::format("={}", x);
                    } else {
                        v.append("=").append(raw);
                    }
                }
                out[offs->i64[i]] = v;
            }
        }
    }
    return out;
}

TEST_F(TypedLakeTest, KeysDecodeIntoKeyDataBesideDataAndBadKeysAreDeadLetters) {
    auto vid1 = register_schema(v1);
    auto kid1 = register_schema(key1, "orders-key");
    _typed.key_how = value_decoding::mode::schema_id;
    auto key_of = [](int32_t id, std::string_view tenant, std::optional<int32_t> shard = {}, bool v2 = false) {
        std::string p;
        put_string(p, tenant);
        if (v2) {
            put_long(p, shard ? 1 : 0);
            if (shard) put_long(p, *shard);
        }
        return framed(id, p);
    };
    // Rows with chosen keys: append_values writes the offset as the key, so this test builds
    // its own rows.
    auto append = [&](const std::vector<std::pair<std::optional<std::string>, std::string>>& rows,
                      int64_t from) -> result<commit_result> {
        auto t = FLOE_TRY(_lake->table_for_topic("orders"));
        auto app = FLOE_TRY(t->begin_append(_typed));
        for (size_t i = 0; i < rows.size(); ++i) {
            int64_t o = from + static_cast<int64_t>(i);
            auto id = std::to_string(o);
            parquet::message_row row;
            row.stream_key = "orders-0";
            row.segment_id = from;
            row.message_id = id;
            row.message_ts = 1000 + o;
            row.kafka_timestamp = 1000 + o;
            if (rows[i].first) row.key = *rows[i].first;
            row.value = rows[i].second;
            row.offset = o;
            FLOE_TRY(app->add(row));
        }
        return app->commit({{"orders-0", from + static_cast<int64_t>(rows.size())}});
    };
    auto r = append({{key_of(kid1, "acme"), order(vid1, 0, "FR")},
                     {std::nullopt, order(vid1, 1, "DE")},
                     {std::string("\x07" "bad", 4), order(vid1, 2, "JP")},
                     {key_of(kid1 + 500, "ghost"), order(vid1, 3, "BR")}},
                    0);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 2);
    EXPECT_EQ(r->dead_letter_rows, 2);
    auto dead = dlq_reasons();
    ASSERT_EQ(dead.size(), 2u);
    EXPECT_EQ(dead[2].first, "bad-magic-byte");
    EXPECT_TRUE(dead[2].second.starts_with("key: ")) << dead[2].second;
    EXPECT_EQ(dead[3].first, "unknown-schema-id");
    EXPECT_TRUE(dead[3].second.starts_with("key: ")) << dead[3].second;

    // New versions of both: the value's `data` gains qty (so the leaves of `key_data`, which
    // come after it, move), the key gains shard.
    auto vid2 = register_schema(v2);
    auto kid2 = register_schema(key2, "orders-key");
    r = append({{key_of(kid2, "beta", 3, true), order(vid2, 4, "IT", 7, true)},
                {key_of(kid1, "gamma"), order(vid1, 5, "ES")}},
               4);
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 2);
    EXPECT_EQ(offsets("orders"), (std::multiset<int64_t>{0, 1, 4, 5}));
    EXPECT_EQ(offsets("orders_dlq"), (std::multiset<int64_t>{2, 3}));
    auto loaded = iceberg::load_table(_lake->catalog(), _lake->io(), {"floe", "orders"});
    ASSERT_TRUE(loaded) << loaded.error();
    const auto* kd = loaded->metadata.current_schema()->find("key_data");
    ASSERT_NE(kd, nullptr);
    std::vector<std::string> names;
    for (auto& f : kd->field_type->fields) names.push_back(f.name);
    EXPECT_EQ(names, (std::vector<std::string>{"tenant", "shard"}));
    EXPECT_EQ(data_fields(), (std::vector<std::string>{"id", "country", "qty"}));

    auto tenant = leaf_by_offset(*_lake, "orders", "key_data.tenant");
    EXPECT_EQ(tenant, (std::map<int64_t, std::string>{{0, "2=acme"}, {1, "0"}, {4, "2=beta"}, {5, "2=gamma"}}));
    auto shard = leaf_by_offset(*_lake, "orders", "key_data.shard");
    EXPECT_EQ(shard, (std::map<int64_t, std::string>{{0, "absent"}, {1, "absent"}, {4, "2=3"}, {5, "1"}}));
    auto country = leaf_by_offset(*_lake, "orders", "data.country");
    EXPECT_EQ(country, (std::map<int64_t, std::string>{{0, "2=FR"}, {1, "2=DE"}, {4, "2=IT"}, {5, "2=ES"}}));
    auto qty = leaf_by_offset(*_lake, "orders", "data.qty");
    EXPECT_EQ(qty[4], "2=7");
    EXPECT_EQ(qty[5], "1");
    // The raw key stays: Kafka reads get the bytes produced.
    auto raw = leaf_by_offset(*_lake, "orders", "key");
    EXPECT_EQ(raw[0], "1=" + key_of(kid1, "acme"));
    EXPECT_EQ(raw[1], "0");
}

TEST_F(TypedLakeTest, KeyModeAloneMakesATypedTableWithOnlyKeyData) {
    auto kid1 = register_schema(key1, "ids");
    value_decoding d;
    d.key_how = value_decoding::mode::latest_schema;
    d.key_subject = "ids";
    ASSERT_TRUE(d.typed());
    auto t = _lake->table_for_topic("orders");
    ASSERT_TRUE(t) << t.error();
    auto app = (*t)->begin_append(d);
    ASSERT_TRUE(app) << app.error();
    std::string k;
    put_string(k, "acme");
    for (int64_t o = 0; o < 3; ++o) {
        const std::string id = std::to_string(o); // the row holds views: the string outlives add()
        parquet::message_row row;
        row.stream_key = "orders-0";
        row.message_id = id;
        if (o != 1) row.key = o == 2 ? std::string_view("\x05") : std::string_view(k); // 2: truncated
        row.value = "not decoded";
        row.offset = o;
        ASSERT_TRUE((*app)->add(row));
    }
    auto r = (*app)->commit({{"orders-0", 3}});
    ASSERT_TRUE(r) << r.error();
    EXPECT_EQ(r->added_rows, 2);
    EXPECT_EQ(r->dead_letter_rows, 1);
    EXPECT_TRUE(data_fields().empty());
    EXPECT_EQ(leaf_by_offset(*_lake, "orders", "key_data.tenant"), (std::map<int64_t, std::string>{{0, "2=acme"}, {1, "0"}}));
    EXPECT_EQ(dlq_reasons()[2].first, "decode-error");
    (void)kid1;
}

} // namespace
} // namespace floe::lake
