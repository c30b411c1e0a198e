#include "log/fs_util.h"
#include "log/log_manager.h"
#include "log/testing/batch_builder.h"
#include "log/tests/test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <condition_variable>
#include <csignal>
#include <thread>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace floe;
using namespace floe::log;
using namespace floe::log::testing;
namespace fs = std::filesystem;

namespace {
std::unique_ptr<log_manager> open_mgr(const fs::path& dir, bool threads = false) {
    log_manager_options o;
    o.data_dir = dir;
    o.background_threads = threads;
    o.topic_defaults = {{"segment.bytes", "100000"}};
    auto m = log_manager::open(o);
    EXPECT_TRUE(m) << m.error();
    return m ? std::move(*m) : nullptr;
}
} // namespace

TEST(log_manager, topics_persist_with_ids_configs_and_data) {
    temp_dir tmp;
    uuid id;
    {
        auto m = open_mgr(tmp.path);
        auto t = m->create_topic("orders.v1", 3, {{"retention.ms", "1234"}});
        ASSERT_TRUE(t) << t.error();
        id = t->id;
        EXPECT_FALSE(id.is_nil());
        EXPECT_EQ(t->config.segment_bytes, 100000); // broker default
        EXPECT_EQ(t->config.retention_ms, 1234);
        EXPECT_EQ(m->create_topic("orders.v1", 1).error().code(), errc::already_exists);
        EXPECT_FALSE(m->create_topic("bad name", 1));
        EXPECT_FALSE(m->create_topic("x", 1, {{"segment.bytes", "nope"}}));
        EXPECT_FALSE(m->topic("x"));
        auto v = m->create_topic("validate", 1, {}, true);
        ASSERT_TRUE(v);
        EXPECT_FALSE(m->topic("validate"));
        auto p = m->partition("orders.v1", 2);
        ASSERT_TRUE(p);
        auto b = make_batch(3, 10, 0);
        ASSERT_TRUE(p->append(b));
        EXPECT_FALSE(m->partition("orders.v1", 3));
        EXPECT_EQ(m->partition(id, 2), p);
        ASSERT_TRUE(m->close());
    }
    auto m = open_mgr(tmp.path);
    auto t = m->topic("orders.v1");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->id, id);
    EXPECT_EQ(t->partitions, 3);
    EXPECT_EQ(t->overrides.at("retention.ms"), "1234");
    EXPECT_EQ(m->topic(id)->name, "orders.v1");
    EXPECT_EQ(m->partition("orders.v1", 2)->log_end_offset()(), 3);
    EXPECT_EQ(m->topics().size(), 1u);
}

TEST(log_manager, alter_and_incremental_alter_configs) {
    temp_dir tmp;
    auto m = open_mgr(tmp.path);
    ASSERT_TRUE(m->create_topic("t", 1, {{"retention.ms", "1000"}}));
    auto a = m->alter_topic_config("t", {{"segment.ms", "500"}});
    ASSERT_TRUE(a);
    EXPECT_FALSE(a->overrides.contains("retention.ms")); // replaced wholesale
    EXPECT_EQ(m->partition("t", 0)->config().segment_ms, 500);
    std::vector<config_op> ops{{"retention.bytes", config_op::kind::set, "999"},
                               {"segment.ms", config_op::kind::remove, ""}};
    auto b = m->incremental_alter_topic_config("t", ops);
    ASSERT_TRUE(b) << b.error();
    EXPECT_EQ(b->config.retention_bytes, 999);
    EXPECT_FALSE(b->overrides.contains("segment.ms"));
    std::vector<config_op> both{{"cleanup.policy", config_op::kind::append, "compact"}};
    auto bc = m->incremental_alter_topic_config("t", both, /*validate_only=*/true);
    ASSERT_TRUE(bc) << bc.error();
    EXPECT_EQ(bc->config.cleanup_policy, "delete,compact");
    std::vector<config_op> bad{{"cleanup.policy", config_op::kind::append, "shred"}};
    EXPECT_FALSE(m->incremental_alter_topic_config("t", bad));
    std::vector<config_op> unknown{{"foo", config_op::kind::set, "1"}};
    EXPECT_FALSE(m->incremental_alter_topic_config("t", unknown));
    EXPECT_EQ(m->topic("t")->config.retention_bytes, 999);
    m->close();
    m = open_mgr(tmp.path);
    EXPECT_EQ(m->topic("t")->config.retention_bytes, 999);
}

TEST(log_manager, encrypted_topics_need_a_key_provider) {
    temp_dir tmp;
    {
        auto m = open_mgr(tmp.path); // no key provider
        auto c = m->create_topic("secret", 1, {{"floe.iceberg.encryption", "uniform"}});
        ASSERT_FALSE(c);
        EXPECT_EQ(c.error().code(), errc::invalid_argument);
        EXPECT_NE(c.error().message().find("floe.encryption.provider"), std::string::npos) << c.error();
        EXPECT_FALSE(m->topic("secret"));
        ASSERT_TRUE(m->create_topic("plain", 1, {}));
        EXPECT_FALSE(m->alter_topic_config("plain", {{"floe.iceberg.encryption", "uniform"}}));
        std::vector<config_op> ops{{"floe.iceberg.encryption", config_op::kind::set, "uniform"}};
        EXPECT_FALSE(m->incremental_alter_topic_config("plain", ops, /*validate_only=*/true));
        EXPECT_FALSE(m->set_dynamic_topic_defaults({{"floe.iceberg.encryption", "uniform"}}));
        EXPECT_FALSE(m->topic("plain")->config.encrypted());
        m->close();
    }
    log_manager_options o;
    o.data_dir = tmp.path;
    o.background_threads = false;
    o.capabilities.key_provider = true;
    o.capabilities.lake_encrypts = true; // what a lake that encrypts will set
    auto m = log_manager::open(o);
    ASSERT_TRUE(m) << m.error();
    auto c = (*m)->create_topic("secret", 1, {{"floe.iceberg.encryption", "columns"},
                                              {"floe.iceberg.encryption.columns", "value"}});
    ASSERT_TRUE(c) << c.error();
    EXPECT_TRUE(c->config.encrypted());
    ASSERT_TRUE((*m)->alter_topic_config("plain", {{"floe.iceberg.encryption", "uniform"}}));
    (*m)->close();
    // Reopened without a provider (it was removed from the settings): the topics still open.
    auto again = open_mgr(tmp.path);
    ASSERT_TRUE(again);
    EXPECT_TRUE(again->topic("secret")->config.encrypted());
    again->close();
}

TEST(log_manager, delete_topic_removes_data_and_name_can_be_reused) {
    temp_dir tmp;
    auto m = open_mgr(tmp.path);
    ASSERT_TRUE(m->create_topic("gone", 2));
    auto p = m->partition("gone", 1);
    auto b = make_batch(3, 10, 0);
    ASSERT_TRUE(p->append(b));
    auto dir = p->dir();
    ASSERT_TRUE(fs::exists(dir));
    ASSERT_TRUE(m->delete_topic("gone"));
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_FALSE(m->topic("gone"));
    EXPECT_EQ(p->append(b).error().code(), errc::shutting_down);
    EXPECT_EQ(m->delete_topic("gone").error().code(), errc::not_found);
    ASSERT_TRUE(m->create_topic("gone", 1));
    EXPECT_EQ(m->partition("gone", 0)->log_end_offset()(), 0);
}

TEST(log_manager, orphan_directories_are_removed_on_open) {
    temp_dir tmp;
    {
        auto m = open_mgr(tmp.path);
        ASSERT_TRUE(m->create_topic("keep", 1));
    }
    fs::create_directories(tmp.path / "log" / "dead-0.0123456789abcdef0123456789abcdef");
    auto m = open_mgr(tmp.path);
    EXPECT_FALSE(fs::exists(tmp.path / "log" / "dead-0.0123456789abcdef0123456789abcdef"));
    EXPECT_TRUE(m->topic("keep"));
}

TEST(log_manager, store_survives_kill_during_metadata_changes) {
    temp_dir tmp;
    std::mt19937 rng(7);
    for (int round = 0; round < 12; ++round) {
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            // Child: create and delete topics as fast as it can until killed.
            log_manager_options o;
            o.data_dir = tmp.path;
            o.background_threads = false;
            auto m = log_manager::open(o);
            if (!m) ::_exit(3);
            for (int i = 0;; ++i) {
                auto name = fmt::format("r{}-t{}", round, i % 7);
                if ((*m)->topic(name)) (void)(*m)->delete_topic(name);
                else (void)(*m)->create_topic(name, 1 + i % 3, {{"retention.ms", std::to_string(i)}});
            }
        }
        ::usleep(useconds_t(5000 + rng() % 40000));
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
        // After the crash: the store loads, and every listed partition opens and is usable.
        auto m = open_mgr(tmp.path);
        ASSERT_TRUE(m) << "round " << round;
        size_t dirs = 0;
        for (auto& t : m->topics())
            for (int32_t p = 0; p < t.partitions; ++p) {
                auto part = m->partition(t.name, p);
                ASSERT_TRUE(part);
                ASSERT_TRUE(fs::exists(part->dir()));
                ++dirs;
            }
        size_t on_disk = 0;
        for (auto& e : fs::directory_iterator(tmp.path / "log")) on_disk += e.is_directory();
        EXPECT_EQ(on_disk, dirs); // orphans cleaned
    }
}

TEST(log_manager, group_commit_flusher_completes_waiters) {
    temp_dir tmp;
    auto m = open_mgr(tmp.path, true);
    ASSERT_TRUE(m->create_topic("g", 2));
    std::atomic<int> done{0};
    for (int i = 0; i < 50; ++i) {
        auto p = m->partition("g", i % 2);
        auto b = make_batch(2, 10, 0);
        auto r = p->append(b);
        ASSERT_TRUE(r);
        p->when_durable(r->last_offset, [&](result<void> ok) {
            EXPECT_TRUE(ok);
            ++done;
        });
    }
    for (int i = 0; i < 500 && done < 50; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(done.load(), 50);
    for (int p = 0; p < 2; ++p) {
        auto o = m->partition("g", p)->offsets();
        EXPECT_EQ(o.durable_end, o.log_end);
    }
    ASSERT_TRUE(m->close());
}

TEST(log_manager, flusher_seals_rolled_segments_and_housekeeping_applies_retention) {
    temp_dir tmp;
    manual_clock clock;
    log_manager_options o;
    o.data_dir = tmp.path;
    o.clock = &clock;
    o.housekeeping_interval_ms = 3'600'000; // driven by hand below
    auto m = std::move(*log_manager::open(o));
    ASSERT_TRUE(m->create_topic("h", 1, {{"segment.bytes", "2000"}, {"retention.ms", "60000"}}));
    auto p = m->partition("h", 0);
    for (int i = 0; i < 30; ++i) {
        auto b = make_batch(2, 100, clock.now_ms());
        ASSERT_TRUE(p->append(b));
    }
    // Rolled segments are sealed by the flusher thread, off the append path.
    size_t segs = p->segments().size();
    ASSERT_GT(segs, 3u);
    for (int i = 0; i < 500 && p->sealed_segments().size() + 1 < segs; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(p->sealed_segments().size() + 1, segs);
    clock.advance(std::chrono::milliseconds(120'000));
    auto b = make_batch(2, 100, clock.now_ms());
    ASSERT_TRUE(p->append(b));
    auto deleted = m->run_housekeeping();
    ASSERT_TRUE(deleted);
    EXPECT_EQ(*deleted, segs - 1);
    EXPECT_EQ(p->log_start_offset(), p->segments().front().base_offset);
    ASSERT_TRUE(m->close());
}

TEST(log_manager, acks_all_appends_survive_kill_9) {
    temp_dir tmp;
    std::mt19937 rng(11);
    auto batch_for = [](int i) {
        std::vector<test_record> rs(size_t(1 + i % 5));
        for (size_t j = 0; j < rs.size(); ++j) {
            rs[j].key = fmt::format("b{}", i);
            rs[j].value = fmt::format("batch {} record {} {}", i, j, std::string(size_t(i % 50), 'v'));
            rs[j].timestamp_ms = 1000 + i;
        }
        byte_buffer b;
        append_batch(b, rs);
        return b;
    };
    int next_batch = 0;
    for (int round = 0; round < 4; ++round) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ::close(fds[0]);
            log_manager_options o;
            o.data_dir = tmp.path;
            auto m = log_manager::open(o);
            if (!m) ::_exit(3);
            if (!(*m)->topic("c") && !(*m)->create_topic("c", 1, {{"segment.bytes", "20000"}}))
                ::_exit(4);
            auto p = (*m)->partition("c", 0);
            for (int i = next_batch;; ++i) {
                auto b = batch_for(i);
                auto r = p->append(b);
                if (!r || r->status != append_status::ok) ::_exit(5);
                std::mutex mu;
                std::condition_variable cv;
                bool ok = false, done = false;
                p->when_durable(r->last_offset, [&](result<void> d) {
                    std::lock_guard g(mu);
                    ok = bool(d);
                    done = true;
                    cv.notify_one();
                });
                std::unique_lock l(mu);
                cv.wait(l, [&] { return done; });
                if (!ok) ::_exit(6);
                int32_t acked = i; // batch i is durable: tell the parent
                if (::write(fds[1], &acked, sizeof acked) != sizeof acked) ::_exit(7);
            }
        }
        ::close(fds[1]);
        // The kill lands at a random moment after the first acknowledgement (waited for, so a
        // loaded machine that is slow to open the log cannot make a round acknowledge nothing).
        int32_t acked = -1, v;
        if (::read(fds[0], &v, sizeof v) == sizeof v) acked = v;
        ::usleep(useconds_t(rng() % 60000));
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
        while (::read(fds[0], &v, sizeof v) == sizeof v) acked = v;
        ::close(fds[0]);
        ASSERT_GE(acked, next_batch) << "round " << round << ": nothing acknowledged";

        auto m = open_mgr(tmp.path);
        auto p = m->partition("c", 0);
        ASSERT_TRUE(p);
        // Every batch up to the last acknowledged one is there, byte for byte, in order; the
        // log may hold a few more (appended, not yet acknowledged), never a torn one.
        int64_t off = 0;
        int i = 0;
        while (off < p->log_end_offset()()) {
            auto r = p->read(kafka_offset(off), {.max_bytes = 1});
            ASSERT_TRUE(r);
            byte_buffer got;
            ASSERT_TRUE(r->copy_to(got));
            auto want = batch_for(i);
            patch_base_offset(want, off);
            ASSERT_EQ(got, want) << "batch " << i;
            off += 1 + i % 5;
            ++i;
        }
        EXPECT_GT(i, acked) << "round " << round;
        next_batch = i;
        ASSERT_TRUE(m->close());
    }
    EXPECT_GT(next_batch, 10);
}

TEST(log_manager, names_that_map_to_one_table_are_refused) {
    temp_dir tmp;
    auto m = open_mgr(tmp.path);
    ASSERT_TRUE(m->create_topic("nc.mixed-events", 1));
    for (auto* other : {"nc_mixed_events", "nc-mixed-events", "nc.mixed.events", "nc_mixed-events"}) {
        for (bool validate_only : {true, false}) {
            auto r = m->create_topic(other, 1, {}, validate_only);
            ASSERT_FALSE(r) << other;
            EXPECT_EQ(r.error().code(), errc::already_exists);
            EXPECT_NE(r.error().message().find("'nc.mixed-events'"), std::string::npos) << r.error().message();
        }
        EXPECT_FALSE(m->topic(other));
    }
    EXPECT_EQ(m->create_topic("nc.mixed-events", 1).error().code(), errc::already_exists);
    EXPECT_TRUE(m->create_topic("nc.mixed-events2", 1)); // a different table
    // Once the topic is deleted its table name is free again.
    ASSERT_TRUE(m->delete_topic("nc.mixed-events"));
    EXPECT_TRUE(m->create_topic("nc_mixed_events", 1));
    EXPECT_EQ(m->topics().size(), 2u);
}

TEST(log_manager, concurrent_creates_of_colliding_names_let_one_win) {
    temp_dir tmp;
    auto m = open_mgr(tmp.path);
    for (int round = 0; round < 20; ++round) {
        auto base = fmt::format("race{}", round);
        std::vector<std::string> names{base + ".a", base + "_a", base + "-a"};
        std::atomic<int> won{0};
        std::vector<std::thread> ts;
        for (auto& n : names)
            ts.emplace_back([&, n] {
                if (m->create_topic(n, 1)) ++won;
            });
        for (auto& t : ts) t.join();
        EXPECT_EQ(won.load(), 1) << base;
    }
    EXPECT_EQ(m->topics().size(), 20u);
}

TEST(log_manager, a_data_dir_holding_colliding_topics_still_opens) {
    temp_dir tmp;
    {
        auto m = open_mgr(tmp.path);
        ASSERT_TRUE(m->create_topic("x.y", 1));
        auto b = make_batch(2, 10, 0);
        ASSERT_TRUE(m->partition("x.y", 0)->append(b));
        ASSERT_TRUE(m->close());
    }
    // A store written before collisions were refused: add x_y by hand.
    auto path = tmp.path / "log" / "topics.json";
    auto text = read_file(path);
    ASSERT_TRUE(text);
    auto j = nlohmann::json::parse(as_chars(*text));
    auto second = j["topics"][0];
    second["name"] = "x_y";
    second["id"] = uuid::random().to_string();
    j["topics"].push_back(second);
    auto out = j.dump();
    ASSERT_TRUE(write_file_atomic(path, as_bytes(out)));
    auto m = open_mgr(tmp.path);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->topic("x.y"));
    EXPECT_TRUE(m->topic("x_y"));
    EXPECT_EQ(m->partition("x.y", 0)->log_end_offset()(), 2);
    EXPECT_EQ(m->create_topic("x-y", 1).error().code(), errc::already_exists);
}

TEST(log_manager, topic_names_of_249_characters_work_across_restarts) {
    temp_dir tmp;
    std::string name(249, 'n');
    name[0] = 'L';
    std::string longer = name;
    longer[248] = 'm'; // same first 248 characters
    {
        auto m = open_mgr(tmp.path);
        for (auto& n : {name, longer}) {
            auto t = m->create_topic(n, 12);
            ASSERT_TRUE(t) << t.error();
            for (int32_t p : {0, 11}) {
                auto b = make_batch(3, 10, 0);
                ASSERT_TRUE(m->partition(n, p)->append(b));
            }
        }
        ASSERT_TRUE(m->partition(name, 11)->roll());
        auto b = make_batch(2, 10, 0);
        ASSERT_TRUE(m->partition(name, 11)->append(b));
        ASSERT_TRUE(m->close());
    }
    for (auto& e : fs::directory_iterator(tmp.path / "log"))
        EXPECT_LE(e.path().filename().string().size(), log_manager::max_file_name_bytes) << e.path();
    auto m = open_mgr(tmp.path);
    for (auto& n : {name, longer}) {
        ASSERT_TRUE(m->topic(n));
        EXPECT_EQ(m->partition(n, 0)->log_end_offset()(), 3);
        EXPECT_EQ(m->partition(n, 11)->log_end_offset()(), n == name ? 5 : 3);
        EXPECT_NE(m->partition(n, 0)->dir(), m->partition(longer == n ? name : longer, 0)->dir());
    }
    // Short names keep the directory name they always had.
    auto id = uuid::random();
    auto hex = id.to_string();
    std::erase(hex, '-');
    EXPECT_EQ(log_manager::partition_dir_name("orders.v1", 3, id), "orders.v1-3." + hex);
    auto shortened = log_manager::partition_dir_name(name, 100000, id);
    EXPECT_EQ(shortened.size(), log_manager::max_file_name_bytes);
    EXPECT_TRUE(shortened.ends_with("~-100000." + hex));
}

TEST(log_manager, added_partitions_and_dynamic_defaults_persist) {
    temp_dir tmp;
    {
        auto m = open_mgr(tmp.path);
        ASSERT_TRUE(m->create_topic("grow", 2, {{"retention.ms", "1000"}}));
        ASSERT_TRUE(m->create_topic("plain", 1));
        auto g = m->create_partitions("grow", 4);
        ASSERT_TRUE(g) << g.error();
        EXPECT_EQ(g->partitions, 4);
        EXPECT_TRUE(m->partition("grow", 3));
        EXPECT_EQ(m->create_partitions("grow", 4).error().code(), errc::invalid_argument);
        EXPECT_EQ(m->create_partitions("nope", 4).error().code(), errc::not_found);
        // Dynamic defaults: topics without an override follow; overrides win; bad values change nothing.
        ASSERT_TRUE(m->set_dynamic_topic_defaults({{"retention.ms", "5000"}, {"delete.retention.ms", "7"}}));
        EXPECT_EQ(m->topic("plain")->config.retention_ms, 5000);
        EXPECT_EQ(m->partition("plain", 0)->config().retention_ms, 5000);
        EXPECT_EQ(m->topic("grow")->config.retention_ms, 1000);
        EXPECT_FALSE(m->set_dynamic_topic_defaults({{"segment.bytes", "1"}}));
        EXPECT_TRUE(m->set_dynamic_topic_defaults({{"retention.ms", "1"}}, /*validate_only=*/true));
        EXPECT_EQ(m->topic("plain")->config.retention_ms, 5000);
        ASSERT_TRUE(m->close());
    }
    auto m = open_mgr(tmp.path);
    EXPECT_EQ(m->topic("grow")->partitions, 4);
    EXPECT_TRUE(m->partition("grow", 3));
    EXPECT_EQ(m->topic("plain")->config.retention_ms, 5000);
    EXPECT_EQ(m->dynamic_topic_defaults().at("delete.retention.ms"), "7");
    EXPECT_EQ(*topic_config_value(m->topic("plain")->config, "delete.retention.ms"), "7");
}
