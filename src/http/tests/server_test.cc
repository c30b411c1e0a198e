#include "http/admin.h"
#include "http/server.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace floe::http {
namespace {

/// A blocking loopback client: sends raw bytes, reads until the peer closes or `until` is seen.
class raw_client {
public:
    explicit raw_client(uint16_t port) {
        _fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        timeval tv{5, 0};
        ::setsockopt(_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        EXPECT_EQ(::connect(_fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    }
    ~raw_client() {
        if (_fd >= 0) ::close(_fd);
    }
    void send(std::string_view s) { ASSERT_EQ(::send(_fd, s.data(), s.size(), MSG_NOSIGNAL), ssize_t(s.size())); }
    /// Reads one response (head + Content-Length body).
    std::string read_response() {
        for (;;) {
            auto end = _buf.find("\r\n\r\n");
            if (end != std::string::npos) {
                auto cl = _buf.find("Content-Length: ");
                size_t len = cl < end ? std::stoul(_buf.substr(cl + 16)) : 0;
                if (_buf.size() >= end + 4 + len) {
                    auto r = _buf.substr(0, end + 4 + len);
                    _buf.erase(0, end + 4 + len);
                    return r;
                }
            }
            char tmp[4096];
            auto n = ::recv(_fd, tmp, sizeof tmp, 0);
            if (n <= 0) return std::exchange(_buf, {});
            _buf.append(tmp, size_t(n));
        }
    }
    /// Reads until `marker` has arrived (or the peer closes / 5 s pass): everything read so far.
    std::string read_until(std::string_view marker) {
        while (_buf.find(marker) == std::string::npos) {
            char tmp[4096];
            auto n = ::recv(_fd, tmp, sizeof tmp, 0);
            if (n <= 0) break;
            _buf.append(tmp, size_t(n));
        }
        return std::exchange(_buf, {});
    }
    void close() {
        ::close(_fd);
        _fd = -1;
    }
    bool closed_by_peer() {
        char c;
        return ::recv(_fd, &c, 1, 0) == 0;
    }

private:
    int _fd;
    std::string _buf;
};

class ServerTest : public ::testing::Test {
protected:
    void SetUp() override {
        server_options o;
        o.port = 0;
        o.threads = 2;
        o.max_header_bytes = 2048;
        _srv = std::make_unique<server>(o);
        _health.add("catalog", [this] {
            return _catalog_up ? component_health{health_status::up, "ok"}
                               : component_health{health_status::down, "cannot reach \"db\""};
        });
        add_admin_routes(*_srv, _health);
        _srv->route("GET", "/v1/echo", [](const request& r) {
            return response::json(200, fmt::format(R"({{"q":"{}"}})", r.param("q").value_or("")));
        });
        ASSERT_TRUE(_srv->start());
        ASSERT_NE(_srv->port(), 0);
    }
    std::unique_ptr<server> _srv;
    health_registry _health;
    std::atomic<bool> _catalog_up{true};
};

TEST_F(ServerTest, HealthAndReadiness) {
    raw_client c(_srv->port());
    c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    auto r = c.read_response();
    EXPECT_TRUE(r.starts_with("HTTP/1.1 200 OK")) << r;
    EXPECT_NE(r.find(R"({"status":"alive"})"), std::string::npos);
    c.send("GET /readyz HTTP/1.1\r\n\r\n");
    r = c.read_response();
    EXPECT_TRUE(r.starts_with("HTTP/1.1 200")) << r;
    EXPECT_NE(r.find(R"("catalog":{"status":"up")"), std::string::npos) << r;
    _catalog_up = false;
    c.send("GET /readyz HTTP/1.1\r\n\r\n");
    r = c.read_response();
    EXPECT_TRUE(r.starts_with("HTTP/1.1 503")) << r;
    EXPECT_NE(r.find(R"("status":"not ready")"), std::string::npos) << r;
    EXPECT_NE(r.find(R"(cannot reach \"db\")"), std::string::npos) << r;
}

TEST_F(ServerTest, MetricsInPrometheusText) {
    raw_client c(_srv->port());
    c.send("GET /metrics HTTP/1.1\r\n\r\n");
    auto r = c.read_response();
    EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << r;
    EXPECT_NE(r.find("# TYPE process_cpu_seconds_total counter"), std::string::npos) << r;
    EXPECT_NE(r.find("floe_up 1"), std::string::npos) << r;
}

TEST_F(ServerTest, QueryDecodingAndRouting) {
    raw_client c(_srv->port());
    c.send("GET /v1/echo?q=a%20b+c HTTP/1.1\r\n\r\n");
    EXPECT_NE(c.read_response().find(R"({"q":"a b c"})"), std::string::npos);
    c.send("GET /nope HTTP/1.1\r\n\r\n");
    auto r = c.read_response();
    EXPECT_TRUE(r.starts_with("HTTP/1.1 404")) << r;
    EXPECT_NE(r.find("no such endpoint: /nope"), std::string::npos);
    c.send("POST /healthz HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi");
    EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 405"));
}

TEST_F(ServerTest, HeadHasNoBody) {
    raw_client c(_srv->port());
    c.send("HEAD /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
    std::string all;
    while (true) { // read to the close: a HEAD response ends with its head
        auto part = c.read_response();
        if (part.empty()) break;
        all += part;
    }
    EXPECT_TRUE(all.starts_with("HTTP/1.1 200")) << all;
    EXPECT_TRUE(all.ends_with("\r\n\r\n")) << all;
}

TEST_F(ServerTest, BadRequestsAreAnsweredAndClosed) {
    {
        raw_client c(_srv->port());
        c.send("garbage\r\n\r\n");
        EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 400"));
        EXPECT_TRUE(c.closed_by_peer());
    }
    {
        raw_client c(_srv->port());
        c.send("GET / HTTP/1.1\r\nX: " + std::string(4096, 'a') + "\r\n\r\n");
        EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 431"));
    }
    {
        raw_client c(_srv->port());
        c.send("POST /healthz HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n");
        EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 413"));
    }
    {
        raw_client c(_srv->port());
        c.send("GET /healthz HTTP/1.1\r\nContent-Length: -5\r\n\r\n");
        EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 400"));
    }
}

TEST_F(ServerTest, SilentClientDoesNotBlockOthers) {
    raw_client silent(_srv->port());
    silent.send("GET /heal"); // never finishes its request
    for (int i = 0; i < 20; ++i) {
        raw_client c(_srv->port());
        c.send("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
        EXPECT_TRUE(c.read_response().starts_with("HTTP/1.1 200"));
    }
}

// A taken address is already_exists (start-up names floe.http.listen and a possibly running floe).
TEST(ServerStart, TakenPortIsAlreadyExists) {
    server a({.port = 0});
    ASSERT_TRUE(a.start());
    server b({.port = a.port()});
    auto r = b.start();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), errc::already_exists);
    EXPECT_NE(r.error().message().find(std::to_string(a.port())), std::string::npos);
}

TEST(HttpServer, ADelayedAnswerIsSentLateWithoutHoldingTheThread) {
    // response::delay (a failed authentication's backoff) waits on a timer: with one I/O thread,
    // an immediate answer on another connection still goes out first.
    server s({.port = 0, .threads = 1});
    s.route("GET", "/slow", [](const request&) {
        auto r = response::json(401, "{}");
        r.delay = std::chrono::milliseconds(400);
        return r;
    });
    s.route("GET", "/fast", [](const request&) { return response::json(200, "{}"); });
    ASSERT_TRUE(s.start());
    auto t0 = std::chrono::steady_clock::now();
    raw_client slow(s.port()), fast(s.port());
    slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fast.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(fast.read_response().find("200"), std::string::npos);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(350));
    EXPECT_NE(slow.read_response().find("401"), std::string::npos);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(400));
    s.stop();
}

TEST(HttpServer, AStreamIsSentInChunksAsItComes) {
    // response::stream: chunked, each chunk written when made, an empty one is a pause; then
    // the connection serves the next request.
    server s({.port = 0, .threads = 1});
    s.route("GET", "/stream", [](const request&) {
        response r;
        r.content_type = "text/event-stream";
        r.stream_pause = std::chrono::milliseconds(100);
        r.stream = [n = 0]() mutable -> std::optional<std::string> {
            switch (n++) {
            case 0: return std::string("data: a\n\n");
            case 1: return std::string(); // nothing yet
            case 2: return std::string("data: bb\n\n");
            default: return std::nullopt;
            }
        };
        return r;
    });
    s.route("GET", "/after", [](const request&) { return response::json(200, R"({"after":true})"); });
    ASSERT_TRUE(s.start());
    raw_client c(s.port());
    auto t0 = std::chrono::steady_clock::now();
    c.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    auto got = c.read_until("0\r\n\r\n");
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100)); // the pause
    EXPECT_NE(got.find("Transfer-Encoding: chunked\r\n"), std::string::npos) << got;
    EXPECT_EQ(got.find("Content-Length"), std::string::npos) << got;
    EXPECT_NE(got.find("Content-Type: text/event-stream\r\n"), std::string::npos) << got;
    auto body = got.substr(got.find("\r\n\r\n") + 4);
    EXPECT_EQ(body, "9\r\ndata: a\n\n\r\na\r\ndata: bb\n\n\r\n0\r\n\r\n"); // sizes in hex
    c.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n"); // the same connection goes on
    EXPECT_NE(c.read_response().find(R"({"after":true})"), std::string::npos);
    s.stop();
}

TEST(HttpServer, AStreamIsDroppedWhenItsClientLeaves) {
    // An endless stream (a live tail) ends, with what it holds, once a write finds the client gone.
    server s({.port = 0, .threads = 1});
    auto held = std::make_shared<int>(0);
    std::weak_ptr<int> alive = held;
    s.route("GET", "/tail", [&held](const request&) {
        response r;
        r.stream_pause = std::chrono::milliseconds(20);
        r.stream = [h = std::move(held), n = 0]() mutable -> std::optional<std::string> {
            return ++n % 2 ? std::string(": tick\n\n") : std::string();
        };
        return r;
    });
    ASSERT_TRUE(s.start());
    {
        raw_client c(s.port());
        c.send("GET /tail HTTP/1.1\r\nHost: x\r\n\r\n");
        EXPECT_NE(c.read_until(": tick").find(": tick"), std::string::npos);
        EXPECT_FALSE(alive.expired()); // still streaming
        c.close();
    }
    for (int i = 0; i < 200 && !alive.expired(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_TRUE(alive.expired()) << "the stream outlived its client";
    s.stop();
}

} // namespace
} // namespace floe::http
