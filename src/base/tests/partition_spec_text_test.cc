#include "base/partition_spec_text.h"

#include <gtest/gtest.h>

using namespace floe;

TEST(partition_spec_text, parses_every_form) {
    auto t = parse_partition_spec_text(" day(message_ts), bucket[16](key),stream_key , truncate[ 4 ](message_id),"
                                       "identity(data.customer.country), void(offset)");
    ASSERT_TRUE(t) << t.error();
    ASSERT_EQ(t->size(), 6u);
    EXPECT_EQ((*t)[0].transform, "day");
    EXPECT_EQ((*t)[0].source, "message_ts");
    EXPECT_EQ((*t)[1].iceberg_transform(), "bucket[16]");
    EXPECT_EQ((*t)[1].param, 16);
    EXPECT_EQ((*t)[2].transform, "identity");
    EXPECT_EQ((*t)[2].source, "stream_key");
    EXPECT_EQ((*t)[3].iceberg_transform(), "truncate[4]");
    EXPECT_EQ((*t)[4].source, "data.customer.country");
    EXPECT_EQ((*t)[5].transform, "void");
    EXPECT_EQ(partition_spec_text(*t), "day(message_ts), bucket[16](key), identity(stream_key), truncate[4](message_id), "
                                       "identity(data.customer.country), void(offset)");
    // Written two ways, the same canonical text.
    EXPECT_EQ(partition_spec_text(*parse_partition_spec_text("stream_key")),
              partition_spec_text(*parse_partition_spec_text("identity( stream_key )")));
}

TEST(partition_spec_text, errors_name_the_bad_term) {
    struct bad_case {
        const char* text;
        const char* names;
    };
    for (auto [text, names] : {bad_case{"", "empty"}, {"day(message_ts),", "empty term"},
                               {"weekly(message_ts)", "'weekly(message_ts)'"},
                               {"bucket(key)", "bucket[N]"}, {"bucket[0](key)", "positive"},
                               {"bucket[x](key)", "positive"}, {"day[3](message_ts)", "does not take"},
                               {"day(message_ts", "'day(message_ts'"}, {"day()", "one column"},
                               {"day(a b)", "one column"}, {"day(message_ts), day(message_ts)", "twice"},
                               {"key;value", "'key;value'"}, {"hour(.x)", "one column"}}) {
        auto r = parse_partition_spec_text(text);
        ASSERT_FALSE(r) << text;
        EXPECT_NE(r.error().message().find(names), std::string::npos) << text << ": " << r.error().message();
    }
}
