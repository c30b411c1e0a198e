#include "redis/slot.h"

#include <gtest/gtest.h>

using namespace floe::redis;

TEST(redis_slot, crc16_check_value) {
    // The check value of CRC16/XMODEM (the Redis Cluster specification's reference).
    EXPECT_EQ(crc16("123456789"), 0x31C3);
    EXPECT_EQ(crc16(""), 0);
}

TEST(redis_slot, known_key_slots) {
    // Slots as reported by CLUSTER KEYSLOT on Redis 7.
    EXPECT_EQ(key_slot("foo"), 12182);
    EXPECT_EQ(key_slot("bar"), 5061);
    EXPECT_EQ(key_slot("somekey"), 11058);
    EXPECT_EQ(key_slot("hello"), 866);
}

TEST(redis_slot, hash_tags) {
    EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    // Only the first '{' counts, up to the first '}' after it.
    EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");
    EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");
    // An empty tag or no closing brace: the whole key.
    EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");
    EXPECT_EQ(hash_tag("foo{bar"), "foo{bar");
    EXPECT_EQ(hash_tag("foo}bar{"), "foo}bar{");
    EXPECT_EQ(hash_tag("{}"), "{}");
}
