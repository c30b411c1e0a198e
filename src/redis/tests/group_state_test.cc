// Committed group offsets and producer ids in Redis, against a real redis-server and a real
// three-master Redis Cluster: what one broker's client commits another's reads, nothing is lost
// across a new client (a broker restart), and producer ids never repeat across brokers.
#include "redis/group_state.h"
#include "redis/slot.h"
#include "redis/testing/server.h"
#include "redis/tests/connect.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

using namespace floe;
using namespace floe::redis;
namespace fs = std::filesystem;

namespace {

using fixture::connect_to;

using entry = std::pair<group_offsets::key, group_offsets::committed>;

/// Two brokers (two clients) sharing the offsets of several groups.
void offsets_are_shared(const std::string& uris) {
    auto c0 = connect_to(uris), c1 = connect_to(uris);
    group_offsets a(*c0, "ns"), b(*c1, "ns");
    // Metadata with the separators of the encoding, an empty one, a null one, binary bytes.
    std::vector<entry> e{{{"orders", 0}, {10, -1, std::nullopt}},
                         {{"orders", 1}, {20, 3, std::string("a,b:c")}},
                         {{"we:ird.topic", 7}, {0, 0, std::string()}},
                         {{"bin", 2}, {5, 1, std::string("\0\xff+-", 4)}}};
    ASSERT_TRUE(a.commit("g1", e));
    ASSERT_TRUE(a.commit("g{2}", std::vector<entry>{{{"orders", 0}, {99, -1, std::nullopt}}}));
    auto got = b.load("g1");
    ASSERT_TRUE(got) << got.error();
    ASSERT_EQ(got->size(), 4u);
    for (auto& [k, c] : e) EXPECT_EQ(got->at(k), c) << k.first << "/" << k.second;
    // A later commit replaces only its own partitions.
    ASSERT_TRUE(b.commit("g1", std::vector<entry>{{{"orders", 1}, {21, 4, std::nullopt}}}));
    got = a.load("g1");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->at({"orders", 1}).offset, 21);
    EXPECT_EQ(got->at({"orders", 0}).offset, 10);
    EXPECT_EQ(a.groups().value(), (std::vector<std::string>{"g1", "g{2}"}));
    EXPECT_TRUE(b.contains("g{2}").value());
    EXPECT_FALSE(b.contains("nobody").value());
    EXPECT_TRUE(b.load("nobody").value().empty());
    // OffsetDelete of some partitions, then of the last one: the group is gone from the list.
    std::vector<group_offsets::key> doomed{{"orders", 0}, {"orders", 1}, {"we:ird.topic", 7}};
    ASSERT_TRUE(b.delete_offsets("g1", doomed));
    EXPECT_EQ(a.load("g1").value().size(), 1u);
    ASSERT_TRUE(b.delete_offsets("g1", std::vector<group_offsets::key>{{"bin", 2}}));
    EXPECT_EQ(a.groups().value(), (std::vector<std::string>{"g{2}"}));
    // A broker restarting (a new client) reads what was committed before.
    c0.reset();
    auto c2 = connect_to(uris);
    group_offsets again(*c2, "ns");
    EXPECT_EQ(again.load("g{2}").value().at({"orders", 0}).offset, 99);
    ASSERT_TRUE(again.delete_group("g{2}"));
    EXPECT_FALSE(b.contains("g{2}").value());
    EXPECT_TRUE(b.groups().value().empty());
    // A corrupt value is an error, not "nothing committed".
    ASSERT_TRUE(c1->command({"HSET", a.group_key("bad"), "0:t", "not a value"}));
    EXPECT_FALSE(b.load("bad"));
}

/// The fence (group_state.h) without delays: claims grow, a commit of an older claim or of an
/// older generation of the same partition is refused, anything newer and simple commits pass.
void commits_are_fenced(const std::string& uris) {
    using fence = group_offsets::fence;
    using kind = fence::kind;
    auto c0 = connect_to(uris), c1 = connect_to(uris);
    group_offsets a(*c0, "ns"), b(*c1, "ns");
    auto one = [](std::string topic, int32_t p, int64_t offset) {
        return std::vector<entry>{{{std::move(topic), p}, {offset, -1, std::nullopt}}};
    };
    auto offset_of = [&](std::string_view group, std::string topic, int32_t p) {
        return b.load(group).value().at({std::move(topic), p}).offset;
    };
    const auto e1 = a.claim("f");
    ASSERT_TRUE(e1) << e1.error();
    EXPECT_EQ(*e1, 1);
    ASSERT_TRUE(a.commit("f", one("t", 0, 10), {kind::member, 1, 3}));
    ASSERT_TRUE(a.commit("f", one("t", 0, 11), {kind::member, 1, 3}));     // the same generation again
    ASSERT_TRUE(a.commit("f", one("t", 0, 5), {kind::member, 1, 4}));      // lower offsets are allowed
    auto stale = a.commit("f", one("t", 0, 12), {kind::member, 1, 3});     // an older generation
    ASSERT_FALSE(stale);
    EXPECT_EQ(stale.error().code(), errc::invalid_argument) << stale.error();
    ASSERT_TRUE(a.commit("f", one("t", 1, 7), {kind::member, 1, 3}));      // another partition: never newer
    EXPECT_EQ(offset_of("f", "t", 0), 5);
    // Another broker takes the group over: the first one's commits are refused from now on,
    // whatever their generation; the new one's start from generation 1.
    EXPECT_EQ(b.claim("f").value(), 2);
    ASSERT_TRUE(b.commit("f", one("t", 0, 6), {kind::member, 2, 1}));
    auto fenced = a.commit("f", one("t", 1, 99), {kind::member, 1, 9});
    ASSERT_FALSE(fenced);
    EXPECT_EQ(fenced.error().code(), errc::conflict) << fenced.error();
    EXPECT_EQ(offset_of("f", "t", 1), 7);
    // A simple commit (no member) is never refused and fences what was validated before it.
    ASSERT_TRUE(a.commit("f", one("t", 0, 0), {kind::simple, 0, -1}));
    ASSERT_TRUE(a.commit("f", one("t", 0, 1), {kind::simple, 0, -1}));
    EXPECT_EQ(offset_of("f", "t", 0), 1);
    EXPECT_EQ(b.commit("f", one("t", 0, 8), {kind::member, 2, 1}).error().code(), errc::conflict);
    EXPECT_EQ(offset_of("f", "t", 0), 1);
    // A deleted group keeps its fence: a commit validated before the deletion does not bring it back.
    const auto e5 = b.claim("f").value();
    ASSERT_TRUE(b.commit("f", one("t", 0, 30), {kind::member, e5, 1}));
    ASSERT_TRUE(a.delete_group("f"));
    EXPECT_EQ(b.commit("f", one("t", 0, 31), {kind::member, e5, 1}).error().code(), errc::conflict);
    EXPECT_FALSE(b.contains("f").value());
    EXPECT_GT(a.claim("f").value(), e5);
    // Unchecked commits (transactional offsets) write as before.
    ASSERT_TRUE(a.commit("f", one("t", 0, 40)));
    EXPECT_EQ(offset_of("f", "t", 0), 40);
    // The fence lives in the group's slot (one atomic step on a Redis Cluster).
    EXPECT_EQ(key_slot(a.fence_key("f")), key_slot(a.group_key("f")));
}

/// A TCP proxy on 127.0.0.1 between a client and redis-server that holds, once armed, what the
/// client sends from the first read containing `pattern` on: the bytes are read (the client's
/// kernel has handed them over, as to a Redis that has not processed them yet) and kept until
/// release() forwards them, even if the client has given up and reset its connection by then.
/// Answers from Redis are passed back and counted. One thread per connection; every loop ends
/// when the proxy is destroyed.
class holding_proxy {
public:
    explicit holding_proxy(uint16_t upstream) : _upstream(upstream) {
        _listen = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(_listen, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(_listen, 16) != 0 ||
            ::getsockname(_listen, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            ADD_FAILURE() << "proxy: cannot listen";
        _port = ntohs(a.sin_port);
        _accepter = std::thread([this] { accept_loop(); });
    }
    ~holding_proxy() {
        _stop = true;
        _accepter.join();
        for (auto& t : _pumps) t.join();
        ::close(_listen);
    }
    std::string uri() const { return fmt::format("redis://127.0.0.1:{}", _port); }
    void hold_from(std::string pattern) {
        std::lock_guard lk(_mu);
        _pattern = std::move(pattern);
    }
    size_t held_bytes() {
        std::lock_guard lk(_mu);
        return _held_bytes;
    }
    void release() {
        std::lock_guard lk(_mu);
        _pattern.clear();
        _released = true;
    }
    /// What Redis answered on the held connection after release() (waits up to `wait`).
    std::string answer_after_release(std::chrono::milliseconds wait) {
        std::unique_lock lk(_mu);
        _cv.wait_for(lk, wait, [&] { return !_after_release.empty(); });
        return _after_release;
    }

private:
    static int connect_to_port(uint16_t port) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd);
            return -1;
        }
        return fd;
    }
    static bool write_all(int fd, const char* p, size_t n) {
        while (n > 0) {
            auto w = ::send(fd, p, n, MSG_NOSIGNAL);
            if (w <= 0) return false;
            p += w;
            n -= size_t(w);
        }
        return true;
    }
    void accept_loop() {
        while (!_stop) {
            pollfd p{_listen, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            int down = ::accept(_listen, nullptr, nullptr);
            if (down < 0) continue;
            int up = connect_to_port(_upstream);
            if (up < 0) {
                ::close(down);
                continue;
            }
            _pumps.emplace_back([this, down, up] { pump(down, up); });
        }
    }
    void pump(int down, int up) {
        std::string kept; // bytes held for Redis
        bool holding = false, down_open = true;
        char buf[65536];
        while (!_stop) {
            {
                std::lock_guard lk(_mu);
                if (holding && _released) {
                    holding = false;
                    if (!write_all(up, kept.data(), kept.size())) break;
                    kept.clear();
                }
            }
            pollfd p[2] = {{up, POLLIN, 0}, {down_open ? down : -1, POLLIN, 0}};
            if (::poll(p, 2, 20) <= 0) continue;
            if (p[1].revents) {
                auto n = ::recv(down, buf, sizeof buf, 0);
                if (n <= 0) {
                    down_open = false; // the client gave up: what was held still goes to Redis
                    if (!holding) break;
                } else {
                    std::lock_guard lk(_mu);
                    if (!holding && !_pattern.empty() &&
                        std::string_view(buf, size_t(n)).find(_pattern) != std::string_view::npos) {
                        holding = true;
                        _released = false;
                    }
                    if (holding) {
                        kept.append(buf, size_t(n));
                        _held_bytes += size_t(n);
                    } else if (!write_all(up, buf, size_t(n))) {
                        break;
                    }
                }
            }
            if (p[0].revents) {
                auto n = ::recv(up, buf, sizeof buf, 0);
                if (n <= 0) break;
                {
                    std::lock_guard lk(_mu);
                    if (_released) _after_release.append(buf, size_t(n));
                }
                _cv.notify_all();
                if (down_open && !write_all(down, buf, size_t(n))) down_open = false;
                if (!down_open && !holding) break;
            }
        }
        ::close(up);
        ::close(down);
    }

    uint16_t _upstream, _port = 0;
    int _listen = -1;
    std::atomic<bool> _stop{false};
    std::thread _accepter;
    std::vector<std::thread> _pumps; // touched by the accepting thread only, joined after it
    std::mutex _mu;
    std::condition_variable _cv;
    std::string _pattern, _after_release;
    size_t _held_bytes = 0;
    bool _released = false;
};

/// Producer ids taken by several brokers at once never repeat.
void producer_ids_are_unique(const std::string& uris) {
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 3; ++i) clients.push_back(connect_to(uris));
    std::vector<std::vector<int64_t>> got(3);
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
        threads.emplace_back([&, i] {
            producer_ids ids(*clients[size_t(i)], "ns", 7); // small blocks: many INCRBYs
            for (int k = 0; k < 200; ++k) {
                auto id = ids.next();
                ASSERT_TRUE(id) << id.error();
                got[size_t(i)].push_back(*id);
            }
        });
    for (auto& t : threads) t.join();
    std::set<int64_t> all;
    for (auto& v : got)
        for (auto id : v) {
            EXPECT_GE(id, 1000);
            EXPECT_TRUE(all.insert(id).second) << "producer id " << id << " given twice";
        }
    EXPECT_EQ(all.size(), 600u);
    // A restarted broker (a new allocator) continues above every id given so far.
    producer_ids later(*clients[0], "ns", 7);
    EXPECT_GT(later.next().value(), *all.rbegin());
}

} // namespace

TEST(redis_group_state, offsets_and_producer_ids_on_one_redis) {
    auto dir = fixture::fresh_dir("group-state-single");
    auto s = fixture::server::start(dir);
    ASSERT_TRUE(s) << s.error();
    offsets_are_shared(s->uri());
    producer_ids_are_unique(s->uri());
    fs::remove_all(dir);
}

TEST(redis_group_state, commits_are_fenced) {
    auto dir = fixture::fresh_dir("group-state-fence");
    auto s = fixture::server::start(dir);
    ASSERT_TRUE(s) << s.error();
    commits_are_fenced(s->uri());
    fs::remove_all(dir);
}

// The chaos finding (tests/chaos/README.md, "An offset commit that had failed overwrote newer
// commits"): broker 1's commit of 202 is held on its way to Redis, times out, the group moves on
// through broker 2 and commits 276, then the held command reaches Redis. It must not set the
// offset back. Then the same within one coordinator (an older generation held), and a held
// commit overtaken by a simple commit (an offset reset while the group is empty).
TEST(redis_group_state, a_commit_held_on_its_way_to_redis_does_not_set_the_offset_back) {
    using kind = group_offsets::fence::kind;
    auto dir = fixture::fresh_dir("group-state-held");
    auto s = fixture::server::start(dir);
    ASSERT_TRUE(s) << s.error();
    auto one = [](int64_t offset) { return std::vector<entry>{{{"chaos.t", 1}, {offset, -1, std::nullopt}}}; };
    // What happens while the commit is held: the group moves on, by `other`, a client of the
    // same Redis that does not go through the proxy (another broker, or another connection of
    // the same one); `epoch` is what the late commit's coordinator claimed.
    struct step {
        std::string name;
        std::function<void(group_offsets& other, std::string_view g, int64_t epoch)> meanwhile;
        int64_t expected;
        std::string refusal;
    };
    std::vector<step> steps{
        {"another coordinator",
         [&](group_offsets& other, std::string_view g, int64_t) {
             auto e = other.claim(g).value(); // the group moved: a new coordinator, generation 1
             for (int64_t o = 202; o <= 276; o += 37) EXPECT_TRUE(other.commit(g, one(o), {kind::member, e, 1}));
         },
         276, "-FLOE_FENCED"},
        {"a newer generation",
         [&](group_offsets& other, std::string_view g, int64_t epoch) {
             EXPECT_TRUE(other.commit(g, one(160), {kind::member, epoch, 6})); // same coordinator
         },
         160, "-FLOE_STALE"},
        {"a simple commit",
         [&](group_offsets& other, std::string_view g, int64_t) {
             EXPECT_TRUE(other.commit(g, one(0), {kind::simple, 0, -1})); // reset while empty
         },
         0, "-FLOE_FENCED"},
    };
    for (auto& st : steps) {
        SCOPED_TRACE(st.name);
        const std::string g = "held-" + std::to_string(&st - steps.data());
        holding_proxy proxy(s->port());
        auto late_client = connect_to(proxy.uri(), [](options& o) { o.command_timeout = std::chrono::milliseconds(400); });
        auto other_client = connect_to(s->uri());
        ASSERT_TRUE(late_client && other_client);
        group_offsets late(*late_client, "ns"), other(*other_client, "ns");
        const int64_t epoch = late.claim(g).value();
        ASSERT_TRUE(late.commit(g, one(150), {kind::member, epoch, 5}));
        // The commit of 202 is held: it times out and the caller answers an error.
        proxy.hold_from("floe_groups_commit");
        auto r = late.commit(g, one(202), {kind::member, epoch, 5});
        ASSERT_FALSE(r);
        EXPECT_TRUE(r.error().code() == errc::timeout || r.error().code() == errc::unavailable) << r.error();
        EXPECT_GT(proxy.held_bytes(), 0u);
        // The group moves on; then Redis receives the held command and answers it.
        st.meanwhile(other, g, epoch);
        proxy.release();
        auto answer = proxy.answer_after_release(std::chrono::seconds(5));
        EXPECT_TRUE(answer.starts_with(st.refusal)) << "Redis answered the held commit: " << answer;
        auto got = other.load(g);
        ASSERT_TRUE(got) << got.error();
        EXPECT_EQ(got->at({"chaos.t", 1}).offset, st.expected) << "the held commit set the offset back";
    }
    fs::remove_all(dir);
}

TEST(redis_group_state_cluster, offsets_and_producer_ids_on_a_cluster) {
    auto dir = fixture::fresh_dir("group-state-cluster");
    auto cl = fixture::cluster::start(dir);
    ASSERT_TRUE(cl) << cl.error();
    auto c = connect_to(cl->uris());
    ASSERT_TRUE(c->is_cluster());
    // Groups spread over the masters (one slot per group).
    group_offsets o(*c, "ns");
    std::set<std::string> nodes;
    for (int g = 0; g < 20; ++g) nodes.insert(c->node_for(o.group_key(fmt::format("group-{}", g))));
    EXPECT_GT(nodes.size(), 1u);
    offsets_are_shared(cl->uris());
    producer_ids_are_unique(cl->uris());
    commits_are_fenced(cl->uris());
    fs::remove_all(dir);
}
