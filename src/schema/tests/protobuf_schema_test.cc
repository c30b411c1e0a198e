#include "schema/parsed_schema.h"
#include "schema/protobuf_schema.h"

#include <gtest/gtest.h>

namespace floe::schema {
namespace {

TEST(protobuf_schema, compiles_messages_enums_and_nested_types) {
    auto s = protobuf_schema::parse(R"(
        syntax = "proto3";
        package acme.orders;
        import "google/protobuf/timestamp.proto";
        message Order {
          int64 id = 1;
          string customer = 2;
          repeated Line lines = 3;
          google.protobuf.Timestamp created = 4;
          oneof payment { string card = 5; string iban = 6; }
          map<string, int32> counts = 7;
          message Line { string sku = 1; uint32 qty = 2; }
          Status status = 8;
        }
        enum Status { UNKNOWN = 0; PAID = 1; }
        message Refund { int64 order_id = 1; }
    )");
    ASSERT_TRUE(s) << s.error().message();
    auto& f = (*s)->file();
    EXPECT_EQ(f.package(), "acme.orders");
    ASSERT_EQ(f.message_type_count(), 2);
    auto* order = f.message_type(0);
    EXPECT_EQ(order->full_name(), "acme.orders.Order");
    EXPECT_EQ(order->field_count(), 8);
    EXPECT_EQ(order->FindFieldByName("created")->message_type()->full_name(), "google.protobuf.Timestamp");
    EXPECT_EQ(order->FindFieldByName("card")->containing_oneof()->name(), "payment");
    EXPECT_TRUE(order->FindFieldByName("counts")->is_map());
    // Confluent's message indexes: [0] Order, [0,0] Order.Line (map entries count as nested
    // types in the descriptor, so Line's index is its declared position), [1] Refund.
    EXPECT_EQ((*s)->message_at(std::vector<int>{1})->name(), "Refund");
    auto* line = order->FindNestedTypeByName("Line");
    ASSERT_TRUE(line);
    auto path = (*s)->indexes_of(*line);
    EXPECT_EQ((*s)->message_at(path), line);
    EXPECT_EQ((*s)->message_at(std::vector<int>{})->name(), "Order");
    EXPECT_EQ((*s)->message_at(std::vector<int>{5}), nullptr);
    EXPECT_EQ((*s)->find_message("acme.orders.Refund"), (*s)->message_at(std::vector<int>{1}));
    // The normalized form compiles to the same descriptors.
    auto again = protobuf_schema::parse((*s)->normalized());
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_EQ((*again)->normalized(), (*s)->normalized());
}

TEST(protobuf_schema, imports_come_from_references) {
    std::vector<protobuf_schema::dependency> deps{
        {"acme/common.proto", "syntax = \"proto3\"; package acme; message Money { int64 units = 1; }"}};
    auto s = protobuf_schema::parse(
        "syntax = \"proto3\"; package shop; import \"acme/common.proto\"; message Price { acme.Money amount = 1; }", deps);
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ((*s)->file().message_type(0)->field(0)->message_type()->full_name(), "acme.Money");

    auto missing = protobuf_schema::parse("syntax = \"proto3\"; import \"nope.proto\"; message A { int32 x = 1; }");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message().find("nope.proto"), std::string::npos) << missing.error().message();

    // a.proto imports b.proto which imports a.proto.
    std::vector<protobuf_schema::dependency> cyc{
        {"a.proto", "syntax = \"proto3\"; import \"b.proto\"; message A { int32 x = 1; }"},
        {"b.proto", "syntax = \"proto3\"; import \"a.proto\"; message B { int32 x = 1; }"}};
    auto c = protobuf_schema::parse("syntax = \"proto3\"; import \"a.proto\"; message M { A a = 1; }", cyc);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message().find("recursively imports"), std::string::npos) << c.error().message();
}

TEST(protobuf_schema, refuses_malformed_text) {
    for (const char* t : {"message {", "syntax = \"proto3\"; message A { int32 x = 0; }",
                          "syntax = \"proto3\"; message A { Unknown x = 1; }",
                          "syntax = \"proto3\"; message A { int32 x = 1; int32 y = 1; }",
                          "syntax = \"proto4\";", "syntax = \"proto3\"; message A { int32 x = 1; } message A {}"}) {
        auto r = protobuf_schema::parse(t);
        EXPECT_FALSE(r) << t;
        if (!r) {
            EXPECT_EQ(r.error().code(), errc::invalid_argument);
            EXPECT_NE(r.error().message().find("invalid Protobuf schema"), std::string::npos);
        }
    }
    std::string deep = "syntax = \"proto3\"; ";
    for (int i = 0; i < 100; ++i) deep += "message M" + std::to_string(i) + " { ";
    for (int i = 0; i < 100; ++i) deep += "} ";
    auto r = protobuf_schema::parse(deep);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("nested deeper"), std::string::npos);
}

TEST(protobuf_schema, parsed_schema_passes_the_reference_closure) {
    auto money = parsed_schema::parse(schema_type::protobuf,
                                      "syntax = \"proto3\"; package acme; message Money { int64 units = 1; }");
    ASSERT_TRUE(money);
    auto price = parsed_schema::parse(
        schema_type::protobuf,
        "syntax = \"proto3\"; package acme; import \"money.proto\"; message Price { Money m = 1; }",
        {{"money.proto", *money}});
    ASSERT_TRUE(price) << price.error().message();
    // Order imports only price.proto; money.proto comes along through price's reference.
    auto order = parsed_schema::parse(
        schema_type::protobuf,
        "syntax = \"proto3\"; package acme; import \"price.proto\"; message Order { Price p = 1; }",
        {{"price.proto", *price}});
    ASSERT_TRUE(order) << order.error().message();
}

} // namespace
} // namespace floe::schema
