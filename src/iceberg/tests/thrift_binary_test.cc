// The Thrift binary protocol codec the Hive catalog speaks: round trips of every type, a
// message's bytes checked against the protocol's layout written out by hand, and hostile input
// (every truncation, bad type ids, negative and huge sizes, deep nesting) refused, not crashing.
#include "iceberg/hive_catalog.h"
#include "iceberg/hive_metastore.h"
#include "iceberg/thrift_binary.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

using namespace floe;
using namespace floe::iceberg;
using namespace floe::iceberg::thrift;

namespace {

message sample() {
    tvalue all = tvalue::strct(
        {{1, tvalue::boolean(true)},
         {2, tvalue::i16(-2)},
         {3, tvalue::i32(-70000)},
         {4, tvalue::i64(int64_t{1} << 40)},
         {5, tvalue::str(std::string("bytes\0with nul", 14))},
         {7, tvalue::list(ttype::string, {tvalue::str("a"), tvalue::str("")})},
         {9, tvalue::string_map({{"k", "v"}, {"metadata_location", "s3://b/t/metadata/1.json"}})},
         {-3, tvalue::strct({{1, tvalue::strct()}})}});
    tvalue d;
    d.type = ttype::dbl;
    d.d = -1.5;
    all.set(6, d);
    tvalue b;
    b.type = ttype::byte;
    b.i = -1;
    all.set(8, b);
    tvalue set = tvalue::list(ttype::i64, {tvalue::i64(1), tvalue::i64(-1)});
    set.type = ttype::set;
    all.set(10, set);
    return message{"alter_table_with_environment_context", message_kind::call, 7,
                   tvalue::strct({{1, all}})};
}

} // namespace

TEST(thrift_binary, message_round_trip_of_every_type) {
    auto m = sample();
    auto bytes = encode_message(m);
    auto d = decode_message(bytes);
    ASSERT_TRUE(d) << d.error();
    ASSERT_TRUE(d->has_value());
    EXPECT_EQ((*d)->consumed, bytes.size());
    EXPECT_EQ((*d)->msg, m);
    // Two messages back to back: the first is taken, the rest stays for the next read.
    auto two = bytes + bytes;
    auto first = decode_message(two);
    ASSERT_TRUE(first && first->has_value());
    EXPECT_EQ((*first)->consumed, bytes.size());
}

TEST(thrift_binary, bytes_follow_the_protocol_layout) {
    // get_table("db", "t") as call #1: strict header 0x80010001, name, seqid, then two string
    // fields (type 11, big-endian id, big-endian length) and the stop byte.
    message m{"get_table", message_kind::call, 1,
              tvalue::strct({{1, tvalue::str("db")}, {2, tvalue::str("t")}})};
    std::string want =
        std::string("\x80\x01\x00\x01", 4) + std::string("\x00\x00\x00\x09", 4) + "get_table"
        + std::string("\x00\x00\x00\x01", 4) + std::string("\x0b\x00\x01\x00\x00\x00\x02", 7) + "db"
        + std::string("\x0b\x00\x02\x00\x00\x00\x01", 7) + "t" + std::string("\x00", 1);
    EXPECT_EQ(encode_message(m), want);
    // A map<string,string> with one entry and an i64: key and value type bytes, count, entries.
    std::string out;
    encode_value(out, tvalue::strct({{9, tvalue::string_map({{"a", "b"}})}, {1, tvalue::i64(-2)}}));
    std::string map_want = std::string("\x0d\x00\x09\x0b\x0b\x00\x00\x00\x01", 9)
                           + std::string("\x00\x00\x00\x01", 4) + "a"
                           + std::string("\x00\x00\x00\x01", 4) + "b"
                           + std::string("\x0a\x00\x01\xff\xff\xff\xff\xff\xff\xff\xfe\x00", 12);
    EXPECT_EQ(out, map_want);
}

TEST(thrift_binary, every_truncation_asks_for_more_and_never_decodes) {
    auto bytes = encode_message(sample());
    for (size_t n = 0; n < bytes.size(); ++n) {
        auto d = decode_message(std::string_view(bytes).substr(0, n));
        ASSERT_TRUE(d) << "prefix " << n << ": " << d.error();
        EXPECT_FALSE(d->has_value()) << "prefix " << n;
        // A bare value cut short is refused outright.
        auto v = decode_value(std::string_view(bytes).substr(0, n), ttype::strct);
        EXPECT_FALSE(v) << "prefix " << n;
    }
    // With a limit below the message's size, a truncated message is corrupt, not "need more".
    limits small;
    small.max_message_bytes = 16;
    auto d = decode_message(std::string_view(bytes).substr(0, 40), small);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code(), errc::corrupt);
}

TEST(thrift_binary, hostile_input_is_refused) {
    auto corrupt = [](std::string bytes) {
        auto d = decode_message(bytes);
        return !d && d.error().code() == errc::corrupt;
    };
    std::string head = std::string("\x80\x01\x00\x02", 4) + std::string("\x00\x00\x00\x01", 4) + "x"
                       + std::string("\x00\x00\x00\x01", 4);
    // Not strict (old unversioned messages), wrong version, unknown message type.
    EXPECT_TRUE(corrupt(std::string("\x00\x00\x00\x01xx", 6) + std::string(20, '\0')));
    EXPECT_TRUE(corrupt(std::string("\x80\x02\x00\x01", 4) + std::string(20, '\0')));
    EXPECT_TRUE(corrupt(std::string("\x80\x01\x00\x07", 4) + std::string(20, '\0')));
    // Unknown field type id 5, bool byte 7, negative string length, list of unknown type.
    EXPECT_TRUE(corrupt(head + std::string("\x05\x00\x01\x00", 4)));
    EXPECT_TRUE(corrupt(head + std::string("\x02\x00\x01\x07\x00", 5)));
    EXPECT_TRUE(corrupt(head + std::string("\x0b\x00\x01\xff\xff\xff\xff", 7)));
    EXPECT_TRUE(corrupt(head + std::string("\x0f\x00\x01\x09\x00\x00\x00\x01", 8)));
    // A list claiming 2^31-1 strings and a string claiming 1 GiB: over the limit, refused at
    // once instead of waiting for bytes or allocating.
    EXPECT_TRUE(corrupt(head + std::string("\x0f\x00\x01\x0b\x7f\xff\xff\xff", 8)));
    EXPECT_TRUE(corrupt(head + std::string("\x0b\x00\x01\x40\x00\x00\x00", 7)));
    // Nesting deeper than the limit: struct in struct in ...
    std::string deep = head;
    for (int k = 0; k < 100; ++k)
        deep += std::string("\x0c\x00\x01", 3);
    deep += std::string(101, '\0');
    EXPECT_TRUE(corrupt(deep));
    // Trailing bytes after a bare value.
    EXPECT_FALSE(decode_value(std::string("\x00\x00\x00\x01\x00", 5), ttype::i32));
}

TEST(hive_metastore, parse_uri) {
    auto o = hms::parse_uri("thrift://metastore.internal:9083");
    ASSERT_TRUE(o) << o.error();
    EXPECT_EQ(o->host, "metastore.internal");
    EXPECT_EQ(o->port, 9083);
    EXPECT_EQ(hms::parse_uri("thrift://hms")->port, 9083);
    EXPECT_EQ(hms::parse_uri("thrift://a:1,thrift://b:2")->host, "a");
    EXPECT_EQ(hms::parse_uri("thrift://[::1]:19083")->host, "::1");
    EXPECT_FALSE(hms::parse_uri("http://hms:9083"));
    EXPECT_FALSE(hms::parse_uri("thrift://hms:0"));
    EXPECT_FALSE(hms::parse_uri("thrift://hms:90x"));
    EXPECT_FALSE(hms::parse_uri("thrift://:9083"));
}

TEST(hive_metastore, unreachable_metastore_is_unavailable_and_named) {
    // A port nothing listens on (bound, then closed).
    hms::client c({.host = "127.0.0.1", .port = 1, .timeout = std::chrono::milliseconds(2000)});
    auto r = c.get_all_databases();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::unavailable);
    EXPECT_NE(r.error().message().find("thrift://127.0.0.1:1"), std::string::npos) << r.error();
}

TEST(hive_metastore, silent_metastore_times_out_and_is_named) {
    // A listening socket that never answers (the kernel accepts the connection into the backlog).
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    auto port = ntohs(a.sin_port);
    hms::client c({.host = "127.0.0.1", .port = port, .timeout = std::chrono::milliseconds(300)});
    auto started = std::chrono::steady_clock::now();
    auto r = c.get_table("floe", "t");
    auto took = std::chrono::steady_clock::now() - started;
    ::close(fd);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::timeout) << r.error();
    EXPECT_NE(r.error().message().find(fmt::format("thrift://127.0.0.1:{}", port)),
              std::string::npos)
        << r.error();
    EXPECT_GE(took, std::chrono::milliseconds(250));
    EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(hive_catalog, table_struct_as_iceberg_keeps_it) {
    table_ident t{"floe", "orders"};
    auto table =
        hive_catalog::new_table(t, "s3://b/wh/floe/orders/metadata/00001-a.metadata.json", "floe");
    EXPECT_EQ(table.string_field(hms::table_f::table_type), "EXTERNAL_TABLE");
    auto params = table.field(hms::table_f::parameters)->as_string_map();
    EXPECT_EQ(params["table_type"], "ICEBERG");
    EXPECT_EQ(params["EXTERNAL"], "TRUE");
    EXPECT_FALSE(params.contains("previous_metadata_location"));
    EXPECT_EQ(table.field(hms::table_f::sd)->string_field(hms::sd_f::location),
              "s3://b/wh/floe/orders");
    // A field Floe does not know (from a newer metastore) and a user's parameter survive a move.
    table.set(17, tvalue::str("catalog-name"));
    auto p = table.field(hms::table_f::parameters)->as_string_map();
    p["owner_team"] = "data";
    table.set(hms::table_f::parameters, tvalue::string_map(p));
    auto moved =
        hive_catalog::moved_table(table, "s3://b/wh/floe/orders/metadata/00002-b.metadata.json",
                                  "s3://b/wh/floe/orders/metadata/00001-a.metadata.json");
    EXPECT_EQ(moved.string_field(17), "catalog-name");
    auto mp = moved.field(hms::table_f::parameters)->as_string_map();
    EXPECT_EQ(mp["owner_team"], "data");
    EXPECT_EQ(mp["metadata_location"], "s3://b/wh/floe/orders/metadata/00002-b.metadata.json");
    EXPECT_EQ(mp["previous_metadata_location"],
              "s3://b/wh/floe/orders/metadata/00001-a.metadata.json");
    EXPECT_EQ(*hive_catalog::location_of(t, moved),
              "s3://b/wh/floe/orders/metadata/00002-b.metadata.json");
    // A plain Hive table is named as not Iceberg.
    auto plain = hive_catalog::new_table(t, "x", "floe");
    plain.set(hms::table_f::parameters, tvalue::string_map({{"EXTERNAL", "TRUE"}}));
    auto err = hive_catalog::location_of(t, plain);
    ASSERT_FALSE(err);
    EXPECT_NE(err.error().message().find("not an Iceberg table"), std::string::npos);
    // Round trip through the codec keeps the struct as it was.
    std::string bytes;
    encode_value(bytes, moved);
    EXPECT_EQ(*decode_value(bytes, ttype::strct), moved);
}
