#include "kafka/acl.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace floe::kafka {
namespace {

using o = acl_operation;
using t = acl_resource;

struct tmp_dir {
    std::filesystem::path path;
    tmp_dir() {
        path = std::filesystem::temp_directory_path() / ("floe-acl-test-" + std::to_string(::getpid()) + "-" +
                                                         std::to_string(reinterpret_cast<uintptr_t>(this)));
        std::filesystem::remove_all(path);
    }
    ~tmp_dir() { std::filesystem::remove_all(path); }
};

acl_binding allow(std::string principal, t type, std::string name, o op, acl_pattern p = acl_pattern::literal,
                  std::string host = "*") {
    return {type, std::move(name), p, std::move(principal), std::move(host), op, acl_permission::allow};
}
acl_binding deny(std::string principal, t type, std::string name, o op, acl_pattern p = acl_pattern::literal) {
    return {type, std::move(name), p, std::move(principal), "*", op, acl_permission::deny};
}

struct Acl : ::testing::Test {
    tmp_dir dir;
    acl_store store{dir.path, std::chrono::milliseconds(0)};
    void add(std::initializer_list<acl_binding> bs) {
        ASSERT_TRUE(store.update([&](acl_store::acl_set& s) -> result<void> {
            for (auto& b : bs) s.insert(b);
            return {};
        }));
    }
};

TEST_F(Acl, strict_without_acl_denies_and_open_without_acl_allows) {
    authorizer strict(store, {}, true), open(store, {}, false);
    EXPECT_FALSE(strict.allowed("User:alice", "/127.0.0.1", o::read, t::topic, "orders"));
    EXPECT_TRUE(open.allowed("User:ANONYMOUS", "/127.0.0.1", o::read, t::topic, "orders"));
    add({allow("User:alice", t::topic, "orders", o::read)});
    // Once a resource has an ACL, it is enforced even when no listener authenticates.
    EXPECT_FALSE(open.allowed("User:ANONYMOUS", "/127.0.0.1", o::read, t::topic, "orders"));
    EXPECT_TRUE(open.allowed("User:ANONYMOUS", "/127.0.0.1", o::read, t::topic, "other"));
    EXPECT_TRUE(strict.allowed("User:alice", "/127.0.0.1", o::read, t::topic, "orders"));
    EXPECT_FALSE(strict.allowed("User:alice", "/127.0.0.1", o::write, t::topic, "orders"));
    EXPECT_FALSE(strict.allowed("User:bob", "/127.0.0.1", o::read, t::topic, "orders"));
}

TEST_F(Acl, implied_operations_and_deny_wins) {
    authorizer a(store, {}, true);
    add({allow("User:alice", t::topic, "orders", o::write), allow("User:alice", t::topic, "cfg", o::alter_configs),
         allow("User:alice", t::group, "g", o::remove)});
    EXPECT_TRUE(a.allowed("User:alice", "h", o::describe, t::topic, "orders"));          // WRITE ⇒ DESCRIBE
    EXPECT_FALSE(a.allowed("User:alice", "h", o::read, t::topic, "orders"));
    EXPECT_TRUE(a.allowed("User:alice", "h", o::describe_configs, t::topic, "cfg"));     // ALTER_CONFIGS ⇒
    EXPECT_FALSE(a.allowed("User:alice", "h", o::describe, t::topic, "cfg"));            // but not DESCRIBE
    EXPECT_TRUE(a.allowed("User:alice", "h", o::describe, t::group, "g"));               // DELETE ⇒ DESCRIBE
    add({deny("User:alice", t::topic, "orders", o::write)});
    EXPECT_FALSE(a.allowed("User:alice", "h", o::write, t::topic, "orders"));
    // A DENY of WRITE does not deny the DESCRIBE another ALLOW gives.
    add({allow("User:alice", t::topic, "orders", o::describe)});
    EXPECT_TRUE(a.allowed("User:alice", "h", o::describe, t::topic, "orders"));
    add({deny("User:*", t::topic, "orders", o::all)});
    EXPECT_FALSE(a.allowed("User:alice", "h", o::describe, t::topic, "orders"));
}

TEST_F(Acl, patterns_hosts_wildcards_and_super_users) {
    authorizer a(store, {"User:admin"}, true);
    add({allow("User:alice", t::topic, "al-", o::all, acl_pattern::prefixed),
         allow("User:*", t::topic, "public", o::read), allow("User:bob", t::topic, "*", o::read),
         allow("User:carol", t::topic, "x", o::read, acl_pattern::literal, "10.0.0.1")});
    EXPECT_TRUE(a.allowed("User:alice", "/1.2.3.4", o::write, t::topic, "al-orders"));
    EXPECT_FALSE(a.allowed("User:alice", "/1.2.3.4", o::write, t::topic, "orders"));
    EXPECT_FALSE(a.allowed("User:alice", "/1.2.3.4", o::write, t::group, "al-g")); // other resource type
    EXPECT_TRUE(a.allowed("User:zed", "/1.2.3.4", o::read, t::topic, "public"));
    EXPECT_TRUE(a.allowed("User:bob", "/1.2.3.4", o::read, t::topic, "anything"));
    EXPECT_TRUE(a.allowed("User:carol", "/10.0.0.1", o::read, t::topic, "x"));
    EXPECT_FALSE(a.allowed("User:carol", "/10.0.0.2", o::read, t::topic, "x"));
    EXPECT_TRUE(a.allowed("User:admin", "/1.2.3.4", o::alter, t::cluster, "kafka-cluster"));
    EXPECT_EQ(a.authorized_operations("User:bob", "h", t::topic, "z"), (1 << 3) | (1 << 8)); // READ, DESCRIBE
    EXPECT_TRUE(a.allowed_on_some("User:alice", "h", o::write, t::topic));
    EXPECT_FALSE(a.allowed_on_some("User:bob", "h", o::write, t::topic));
}

TEST_F(Acl, filters) {
    auto lit = allow("User:alice", t::topic, "orders", o::read);
    auto star = allow("User:alice", t::topic, "*", o::read);
    auto pre = allow("User:alice", t::topic, "ord", o::read, acl_pattern::prefixed);
    acl_filter match{t::topic, "orders", acl_pattern::match, std::nullopt, std::nullopt, o::any, acl_permission::any};
    EXPECT_TRUE(match.matches(lit) && match.matches(star) && match.matches(pre));
    acl_filter exact{t::topic, "orders", acl_pattern::literal, std::nullopt, std::nullopt, o::any, acl_permission::any};
    EXPECT_TRUE(exact.matches(lit));
    EXPECT_FALSE(exact.matches(star) || exact.matches(pre));
    acl_filter any_name{t::any, std::nullopt, acl_pattern::any, "User:bob", std::nullopt, o::any, acl_permission::any};
    EXPECT_FALSE(any_name.matches(lit));
    acl_filter bad{t::unknown, std::nullopt, acl_pattern::any, std::nullopt, std::nullopt, o::any, acl_permission::any};
    EXPECT_FALSE(validate_acl_filter(bad));
}

TEST_F(Acl, store_round_trip_and_validation) {
    add({allow("User:alice", t::topic, "orders", o::write), deny("User:bob", t::group, "g-", o::read, acl_pattern::prefixed)});
    acl_store other(dir.path); // another process's view (floe acls)
    auto got = other.list();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->size(), 2u);
    EXPECT_EQ(parse_acls_json(acls_json(*got)).value(), *got);
    EXPECT_FALSE(validate_acl(allow("alice", t::topic, "x", o::read)));             // no Type:
    EXPECT_FALSE(validate_acl(allow("User:a", t::cluster, "x", o::read)));          // cluster name
    EXPECT_FALSE(validate_acl(allow("User:a", t::topic, "x", o::any)));
    EXPECT_FALSE(validate_acl(allow("User:a", t::topic, "x", o::read, acl_pattern::match)));
    // A corrupt file is an error for list(); snapshot() keeps the last good ACLs.
    auto before = store.snapshot();
    std::ofstream(dir.path / "acls.json") << "{not json";
    EXPECT_FALSE(other.list());
    EXPECT_EQ(store.snapshot()->size(), before->size());
    EXPECT_EQ(parse_super_users(" User:admin;User:ops ;").value(), (std::vector<std::string>{"User:admin", "User:ops"}));
    EXPECT_FALSE(parse_super_users("admin"));
}

} // namespace
} // namespace floe::kafka
