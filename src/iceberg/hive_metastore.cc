#include "iceberg/hive_metastore.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>

namespace floe::iceberg::hms {
namespace {

using thrift::ttype;
using thrift::tvalue;

constexpr int16_t lock_type_exclusive = 3;
constexpr int16_t lock_level_table = 2;

errc code_of_exception(std::string_view name) {
    if (name == "NoSuchObjectException" || name == "NoSuchLockException") return errc::not_found;
    if (name == "AlreadyExistsException") return errc::already_exists;
    return errc::io_error;
}

result<lock_response> lock_response_of(const tvalue& v, const std::string& where) {
    auto id = v.int_field(1);
    auto state = v.int_field(2);
    if (!id || !state || *state < 1 || *state > 4)
        return fail(errc::corrupt, "{}: a LockResponse without a lock id or a known state", where);
    return lock_response{*id, static_cast<lock_state>(*state)};
}

result<std::vector<std::string>> string_list(const tvalue& v, const std::string& where) {
    if (v.type != ttype::list || v.elem != ttype::string)
        return fail(errc::corrupt, "{}: expected a list of strings", where);
    std::vector<std::string> out;
    for (auto& e : v.elems)
        out.push_back(e.s);
    return out;
}

} // namespace

result<options> parse_uri(const std::string& uri) {
    std::string_view rest = uri;
    if (!rest.starts_with("thrift://"))
        return fail(errc::invalid_argument, "metastore URI '{}': use thrift://host:port", uri);
    rest.remove_prefix(9);
    if (auto comma = rest.find(','); comma != std::string_view::npos) rest = rest.substr(0, comma);
    while (rest.ends_with("/"))
        rest.remove_suffix(1);
    options o;
    std::string_view host = rest;
    if (rest.starts_with("[")) { // [v6]:port
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            return fail(errc::invalid_argument, "metastore URI '{}': unclosed [", uri);
        host = rest.substr(1, close - 1);
        rest.remove_prefix(close + 1);
        if (!rest.empty() && rest[0] != ':')
            return fail(errc::invalid_argument, "metastore URI '{}': expected :port after ]", uri);
        if (!rest.empty())
            rest.remove_prefix(1);
        else
            rest = {};
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        rest.remove_prefix(colon + 1);
    } else {
        rest = {};
    }
    if (host.empty()) return fail(errc::invalid_argument, "metastore URI '{}' names no host", uri);
    o.host = std::string(host);
    if (!rest.empty()) {
        unsigned port = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), port);
        if (ec != std::errc() || p != rest.data() + rest.size() || port == 0 || port > 65535)
            return fail(errc::invalid_argument, "metastore URI '{}': bad port '{}'", uri, rest);
        o.port = static_cast<uint16_t>(port);
    }
    return o;
}

client::~client() {
    close_locked();
}

std::string client::address() const {
    if (_o.host.find(':') != std::string::npos)
        return fmt::format("thrift://[{}]:{}", _o.host, _o.port);
    return fmt::format("thrift://{}:{}", _o.host, _o.port);
}

void client::close_locked() {
    if (_fd >= 0) ::close(_fd);
    _fd = -1;
    _inbuf.clear();
}

result<void> client::connect_locked() {
    if (_fd >= 0) {
        // Between calls nothing may arrive: a readable socket means the metastore closed this
        // (idle) connection. Open a new one before sending, so a write is not lost on it.
        pollfd p{_fd, POLLIN | POLLRDHUP, 0};
        if (::poll(&p, 1, 0) == 0) return {};
        close_locked();
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    auto port = std::to_string(_o.port);
    if (int rc = ::getaddrinfo(_o.host.c_str(), port.c_str(), &hints, &found); rc != 0)
        return fail(errc::unavailable, "metastore {}: cannot resolve {}: {}", address(), _o.host,
                    ::gai_strerror(rc));
    std::string last = "no address";
    for (auto* a = found; a; a = a->ai_next) {
        int fd =
            ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            last = std::strerror(errno);
            continue;
        }
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int n = ::poll(&p, 1, static_cast<int>(_o.timeout.count()));
            if (n == 0) {
                last = fmt::format("connect timed out after {} ms", _o.timeout.count());
                ::close(fd);
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            rc = err == 0 ? 0 : -1;
            errno = err;
        }
        if (rc != 0) {
            last = std::strerror(errno);
            ::close(fd);
            continue;
        }
        // Blocking from here on, with the call's deadline on every send and receive.
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        timeval tv{};
        tv.tv_sec = static_cast<time_t>(_o.timeout.count() / 1000);
        tv.tv_usec = static_cast<suseconds_t>((_o.timeout.count() % 1000) * 1000);
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        _fd = fd;
        break;
    }
    ::freeaddrinfo(found);
    if (_fd < 0)
        return fail(errc::unavailable, "metastore {}: cannot connect: {}", address(), last);
    return {};
}

result<void> client::send_all_locked(std::string_view bytes) {
    while (!bytes.empty()) {
        auto n = ::send(_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            auto err = errno;
            close_locked();
            if (err == EAGAIN || err == EWOULDBLOCK)
                return fail(errc::timeout, "metastore {}: send timed out after {} ms", address(),
                            _o.timeout.count());
            return fail(errc::unavailable, "metastore {}: send failed: {}", address(),
                        std::strerror(err));
        }
        bytes.remove_prefix(static_cast<size_t>(n));
    }
    return {};
}

result<thrift::message> client::receive_locked() {
    char buf[16384];
    for (;;) {
        auto d = thrift::decode_message(_inbuf);
        if (!d) {
            close_locked();
            return fail(errc::corrupt, "metastore {}: {}", address(), d.error().message());
        }
        if (*d) {
            _inbuf.erase(0, (*d)->consumed);
            return std::move((*d)->msg);
        }
        auto n = ::recv(_fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            auto err = errno;
            close_locked();
            if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK))
                return fail(errc::timeout, "metastore {}: no answer within {} ms", address(),
                            _o.timeout.count());
            return fail(errc::unavailable, "metastore {}: connection {}", address(),
                        n == 0 ? std::string("closed by the server")
                               : std::string(std::strerror(err)));
        }
        _inbuf.append(buf, static_cast<size_t>(n));
    }
}

result<tvalue> client::call(const std::string& method, tvalue args,
                            const std::map<int16_t, const char*>& exceptions) {
    std::lock_guard g(_mu);
    // Reads are retried once on a fresh connection when the first attempt lost its connection
    // (the metastore closes idle ones); a write that lost its connection has an unknown outcome,
    // which the caller settles by reading.
    const bool read_only = method.starts_with("get_") || method == "check_lock";
    thrift::message m{method, thrift::message_kind::call, 0, std::move(args)};
    result<thrift::message> got = fail(errc::internal, "not called");
    for (int attempt = 0; attempt < (read_only ? 2 : 1); ++attempt) {
        FLOE_TRY(connect_locked());
        m.seqid = ++_seqid;
        auto bytes = thrift::encode_message(m);
        if (auto sent = send_all_locked(bytes); !sent) {
            got = fail(std::move(sent).error());
        } else {
            got = receive_locked();
        }
        if (got || got.error().code() != errc::unavailable) break;
    }
    auto reply = FLOE_TRY(std::move(got));
    if (reply.kind == thrift::message_kind::exception) {
        auto msg = reply.body.string_field(1).value_or("(no message)");
        return fail(errc::io_error, "metastore {}: {} failed: {}", address(), method, msg);
    }
    if (reply.kind != thrift::message_kind::reply || reply.name != method
        || reply.seqid != m.seqid) {
        close_locked();
        return fail(errc::corrupt, "metastore {}: answer '{}' (#{}) to call {} (#{})", address(),
                    reply.name, reply.seqid, method, m.seqid);
    }
    for (auto& [id, v] : reply.body.fields) {
        if (id == 0) continue;
        auto it = exceptions.find(id);
        std::string name = it == exceptions.end() ? fmt::format("exception #{}", id) : it->second;
        auto text = v.type == ttype::strct ? v.string_field(1).value_or("") : std::string();
        return fail(code_of_exception(name), "metastore {}: {}: {}: {}", address(), method, name,
                    text);
    }
    return std::move(reply.body);
}

result<void> client::create_database(const std::string& name, const std::string& location) {
    auto db = tvalue::strct({{database_f::name, tvalue::str(name)},
                             {database_f::description, tvalue::str("Floe topics")},
                             {database_f::parameters, tvalue::string_map({})}});
    if (!location.empty()) db.set(database_f::location, tvalue::str(location));
    FLOE_TRY(
        call("create_database", tvalue::strct({{1, std::move(db)}}),
             {{1, "AlreadyExistsException"}, {2, "InvalidObjectException"}, {3, "MetaException"}}));
    return {};
}

result<std::optional<tvalue>> client::get_database(const std::string& name) {
    auto r = call("get_database", tvalue::strct({{1, tvalue::str(name)}}),
                  {{1, "NoSuchObjectException"}, {2, "MetaException"}});
    if (!r) {
        if (r.error().code() == errc::not_found) return std::optional<tvalue>();
        return fail(std::move(r).error());
    }
    auto* db = r->field(0);
    if (!db || db->type != ttype::strct)
        return fail(errc::corrupt, "metastore {}: get_database {}: no Database", address(), name);
    return std::optional<tvalue>(*db);
}

result<std::vector<std::string>> client::get_all_databases() {
    auto r = FLOE_TRY(call("get_all_databases", tvalue::strct(), {{1, "MetaException"}}));
    auto* v = r.field(0);
    if (!v) return fail(errc::corrupt, "metastore {}: get_all_databases: no list", address());
    return string_list(*v, fmt::format("metastore {}: get_all_databases", address()));
}

result<void> client::create_table(const tvalue& table) {
    FLOE_TRY(call("create_table", tvalue::strct({{1, table}}),
                  {{1, "AlreadyExistsException"},
                   {2, "InvalidObjectException"},
                   {3, "MetaException"},
                   {4, "NoSuchObjectException"}}));
    return {};
}

result<std::optional<tvalue>> client::get_table(const std::string& db, const std::string& name) {
    auto r = call("get_table", tvalue::strct({{1, tvalue::str(db)}, {2, tvalue::str(name)}}),
                  {{1, "MetaException"}, {2, "NoSuchObjectException"}});
    if (!r) {
        if (r.error().code() == errc::not_found) return std::optional<tvalue>();
        return fail(std::move(r).error());
    }
    auto* t = r->field(0);
    if (!t || t->type != ttype::strct)
        return fail(errc::corrupt, "metastore {}: get_table {}.{}: no Table in the answer",
                    address(), db, name);
    return std::optional<tvalue>(*t);
}

result<std::vector<std::string>> client::get_all_tables(const std::string& db) {
    auto r = FLOE_TRY(
        call("get_all_tables", tvalue::strct({{1, tvalue::str(db)}}), {{1, "MetaException"}}));
    auto* v = r.field(0);
    if (!v) return fail(errc::corrupt, "metastore {}: get_all_tables {}: no list", address(), db);
    return string_list(*v, fmt::format("metastore {}: get_all_tables {}", address(), db));
}

result<void> client::alter_table(const std::string& db, const std::string& name,
                                 const tvalue& table,
                                 const std::map<std::string, std::string>& env) {
    auto ctx = tvalue::strct({{1, tvalue::string_map(env)}});
    FLOE_TRY(
        call("alter_table_with_environment_context",
             tvalue::strct(
                 {{1, tvalue::str(db)}, {2, tvalue::str(name)}, {3, table}, {4, std::move(ctx)}}),
             {{1, "InvalidOperationException"}, {2, "MetaException"}}));
    return {};
}

result<void> client::drop_table(const std::string& db, const std::string& name) {
    FLOE_TRY(call(
        "drop_table",
        tvalue::strct({{1, tvalue::str(db)}, {2, tvalue::str(name)}, {3, tvalue::boolean(false)}}),
        {{1, "NoSuchObjectException"}, {2, "MetaException"}}));
    return {};
}

result<lock_response> client::lock_table(const std::string& db, const std::string& name,
                                         const std::string& user, const std::string& host,
                                         const std::string& agent) {
    auto component = tvalue::strct({{1, tvalue::i32(lock_type_exclusive)},
                                    {2, tvalue::i32(lock_level_table)},
                                    {3, tvalue::str(db)},
                                    {4, tvalue::str(name)}});
    auto req = tvalue::strct({{1, tvalue::list(ttype::strct, {std::move(component)})},
                              {3, tvalue::str(user)},
                              {4, tvalue::str(host)},
                              {5, tvalue::str(agent)}});
    auto r = FLOE_TRY(call("lock", tvalue::strct({{1, std::move(req)}}),
                           {{1, "NoSuchTxnException"}, {2, "TxnAbortedException"}}));
    auto* v = r.field(0);
    if (!v)
        return fail(errc::corrupt, "metastore {}: lock {}.{}: no LockResponse", address(), db,
                    name);
    return lock_response_of(*v, fmt::format("metastore {}: lock {}.{}", address(), db, name));
}

result<lock_response> client::check_lock(int64_t lock_id) {
    auto r = FLOE_TRY(
        call("check_lock", tvalue::strct({{1, tvalue::strct({{1, tvalue::i64(lock_id)}})}}),
             {{1, "NoSuchTxnException"}, {2, "TxnAbortedException"}, {3, "NoSuchLockException"}}));
    auto* v = r.field(0);
    if (!v)
        return fail(errc::corrupt, "metastore {}: check_lock {}: no LockResponse", address(),
                    lock_id);
    return lock_response_of(*v, fmt::format("metastore {}: check_lock {}", address(), lock_id));
}

result<void> client::unlock(int64_t lock_id) {
    FLOE_TRY(call("unlock", tvalue::strct({{1, tvalue::strct({{1, tvalue::i64(lock_id)}})}}),
                  {{1, "NoSuchLockException"}, {2, "TxnOpenException"}}));
    return {};
}

result<void> client::heartbeat(int64_t lock_id) {
    FLOE_TRY(
        call("heartbeat", tvalue::strct({{1, tvalue::strct({{1, tvalue::i64(lock_id)}})}}),
             {{1, "NoSuchLockException"}, {2, "NoSuchTxnException"}, {3, "TxnAbortedException"}}));
    return {};
}

} // namespace floe::iceberg::hms
