#include "redis/testing/server.h"

#include "redis/hiredis_reply.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace floe::redis::fixture {

namespace {

bool port_free(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    return ok;
}

result<reply> run_raw(uint16_t port, const std::vector<std::string>& args) {
    timeval tv{2, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        std::string e = c ? c->errstr : "alloc";
        if (c) redisFree(c);
        return fail(errc::unavailable, "connect 127.0.0.1:{}: {}", port, e);
    }
    redisSetTimeout(c, timeval{10, 0});
    std::vector<const char*> argv;
    std::vector<size_t> argl;
    for (auto& a : args) {
        argv.push_back(a.data());
        argl.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), argl.data()));
    if (!r) {
        std::string e = c->errstr;
        redisFree(c);
        return fail(errc::unavailable, "127.0.0.1:{}: {}", port, e);
    }
    reply out = from_hiredis(r);
    freeReplyObject(r);
    redisFree(c);
    return out;
}

} // namespace

std::filesystem::path fresh_dir(std::string_view name) {
    auto d = std::filesystem::temp_directory_path() / fmt::format("floe-{}-{}", name, ::getpid());
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

result<uint16_t> free_port(bool with_bus) {
    for (int attempt = 0; attempt < 200; ++attempt) {
        int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
            ::close(fd);
            continue;
        }
        socklen_t len = sizeof a;
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
        ::close(fd);
        uint16_t p = ntohs(a.sin_port);
        if (!with_bus) return p;
        if (p < 55000 && port_free(static_cast<uint16_t>(p + 10000))) return p;
    }
    return fail(errc::unavailable, "no free loopback port found");
}

result<server> server::start(std::filesystem::path dir, std::vector<std::string> extra_args, bool cluster) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    server s;
    s._dir = dir;
    s._port = FLOE_TRY(free_port(cluster));
    s._args = {"redis-server", "--port", std::to_string(s._port), "--bind", "127.0.0.1", "--dir", dir.string(),
               "--save", "", "--appendonly", "no", "--logfile", (dir / "redis.log").string(), "--daemonize", "no"};
    if (cluster) {
        for (std::string a : {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                              "--cluster-node-timeout", "2000"})
            s._args.push_back(a);
    }
    for (auto& a : extra_args) s._args.push_back(a);
    FLOE_TRY(s.spawn());
    return s;
}

result<void> server::spawn() {
    std::vector<char*> argv;
    for (auto& a : _args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // fork + exec rather than posix_spawn, to ask the kernel to kill the server when the
    // thread that started it ends (a crashed test leaves no redis-server behind).
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) return fail(errc::unavailable, "cannot start redis-server: fork: {}", std::strerror(errno));
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(1);
        ::execvp("redis-server", argv.data());
        ::_exit(127);
    }
    _pid = pid;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
        int status = 0;
        if (::waitpid(_pid, &status, WNOHANG) == _pid) {
            _pid = -1;
            return fail(errc::unavailable, "redis-server on port {} exited at start (see {})", _port,
                        (_dir / "redis.log").string());
        }
        auto r = run_raw(_port, {"PING"});
        if (r && (r->is_status() || r->str().starts_with("NOAUTH"))) return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill9();
    return fail(errc::timeout, "redis-server on port {} did not answer PING within 10 s", _port);
}

server::server(server&& o) noexcept : _dir(std::move(o._dir)), _args(std::move(o._args)), _port(o._port), _pid(o._pid) {
    o._pid = -1;
}
server& server::operator=(server&& o) noexcept {
    if (this != &o) {
        kill9();
        _dir = std::move(o._dir);
        _args = std::move(o._args);
        _port = o._port;
        _pid = o._pid;
        o._pid = -1;
    }
    return *this;
}
server::~server() { kill9(); }

void server::kill9() {
    if (_pid <= 0) return;
    ::kill(_pid, SIGKILL);
    int status = 0;
    ::waitpid(_pid, &status, 0);
    _pid = -1;
}

void server::stop() {
    if (_pid <= 0) return;
    ::kill(_pid, SIGTERM);
    for (int i = 0; i < 200; ++i) {
        int status = 0;
        if (::waitpid(_pid, &status, WNOHANG) == _pid) {
            _pid = -1;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    kill9();
}

result<void> server::restart() {
    stop();
    return spawn();
}

result<reply> server::raw(std::vector<std::string> args) const { return run_raw(_port, args); }

result<cluster> cluster::start(std::filesystem::path dir, int masters, int replicas_per_master) {
    cluster c;
    for (int i = 0; i < masters * (1 + replicas_per_master); ++i)
        c._nodes.push_back(FLOE_TRY(server::start(dir / fmt::format("node{}", i), {}, true)));
    std::string cmd = "redis-cli --cluster create";
    for (auto& n : c._nodes) cmd += fmt::format(" 127.0.0.1:{}", n.port());
    cmd += fmt::format(" --cluster-replicas {} --cluster-yes > {} 2>&1", replicas_per_master,
                       (dir / "create.log").string());
    if (int rc = std::system(cmd.c_str()); rc != 0)
        return fail(errc::unavailable, "redis-cli --cluster create failed ({}), see {}", rc, (dir / "create.log").string());
    FLOE_TRY(c.wait_ok(std::chrono::seconds(20)));
    if (replicas_per_master > 0) {
        auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        for (auto& n : c._nodes) {
            while (true) {
                auto info = n.raw({"INFO", "replication"});
                if (info && info->str().find("role:master") != std::string::npos) break;
                if (info && info->str().find("master_link_status:up") != std::string::npos) break;
                if (std::chrono::steady_clock::now() >= until)
                    return fail(errc::timeout, "replica on port {} not linked to its master within 20 s", n.port());
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    }
    return c;
}

result<void> cluster::wait_ok(std::chrono::milliseconds limit) const {
    auto until = std::chrono::steady_clock::now() + limit;
    while (true) {
        bool ok = true;
        for (auto& n : _nodes) {
            if (n.pid() <= 0) continue;
            auto r = n.raw({"CLUSTER", "INFO"});
            if (!r || !r->is_string() || r->str().find("cluster_state:ok") == std::string::npos) ok = false;
        }
        if (ok) return {};
        if (std::chrono::steady_clock::now() >= until)
            return fail(errc::timeout, "cluster not ok within {} ms", limit.count());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

std::string cluster::uris() const {
    std::string out;
    for (auto& n : _nodes) {
        if (!out.empty()) out += ',';
        out += n.uri();
    }
    return out;
}

server* cluster::by_port(uint16_t port) {
    for (auto& n : _nodes)
        if (n.port() == port) return &n;
    return nullptr;
}

} // namespace floe::redis::fixture
