#include "ingest/kafka_source.h"

#include <gtest/gtest.h>

using namespace floe::ingest;

TEST(TopicSelector, ListAndRegex) {
    auto l = topic_selector::parse(" a, b.c ,");
    ASSERT_TRUE(l) << l.error();
    EXPECT_TRUE(l->matches("a"));
    EXPECT_TRUE(l->matches("b.c"));
    EXPECT_FALSE(l->matches("b"));
    EXPECT_FALSE(l->matches("ab"));
    auto r = topic_selector::parse("^ev\\..*");
    ASSERT_TRUE(r) << r.error();
    EXPECT_TRUE(r->matches("ev.orders"));
    EXPECT_FALSE(r->matches("xev.orders"));
    EXPECT_FALSE(r->matches("ev"));
    auto all = topic_selector::parse("^.*");
    ASSERT_TRUE(all);
    EXPECT_FALSE(all->matches("__consumer_offsets")); // internal topics never by regex
    EXPECT_FALSE(topic_selector::parse("^(unclosed"));
    EXPECT_FALSE(topic_selector::parse(" , "));
}
