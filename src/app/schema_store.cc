#include "app/schema_store.h"

#include "kafka/framed_log.h"
#include "redis/client.h"

#include <fmt/format.h>

#include <mutex>

namespace floe::app {

namespace {

class file_schema_log final : public schema::registry_log {
public:
    static result<std::unique_ptr<schema::registry_log>> open(const std::filesystem::path& dir) {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec) return fail(errc::io_error, "cannot create {}: {}", dir.string(), ec.message());
        auto self = std::unique_ptr<file_schema_log>(new file_schema_log());
        self->_path = dir / "schemas.log";
        auto* s = self.get();
        auto log = FLOE_TRY(kafka::framed_log::open(
            s->_path, "schema registry log",
            [s](bytes_view payload) {
                s->_records.emplace_back(reinterpret_cast<const char*>(payload.data()), payload.size());
                return true;
            },
            [s] {
                // Every record is kept (positions must not move): the registry log is small.
                std::vector<byte_buffer> out;
                out.reserve(s->_records.size());
                for (auto& r : s->_records) out.emplace_back(r.begin(), r.end());
                return out;
            }));
        self->_log = std::move(log);
        return std::unique_ptr<schema::registry_log>(std::move(self));
    }

    result<std::vector<std::string>> read_from(uint64_t from) override {
        std::lock_guard lk(_mu);
        if (from >= _records.size()) return std::vector<std::string>{};
        return std::vector<std::string>(_records.begin() + ptrdiff_t(from), _records.end());
    }
    result<void> append_if(uint64_t expected, const std::string& record) override {
        std::lock_guard lk(_mu);
        if (_records.size() != expected)
            return fail(errc::conflict, "schema log holds {} records, not {}", _records.size(), expected);
        FLOE_TRY(_log->append(as_bytes(record)));
        _records.push_back(record);
        return {};
    }
    std::string describe() const override { return _path.string(); }

private:
    file_schema_log() = default;
    std::mutex _mu;
    std::filesystem::path _path;
    std::vector<std::string> _records;
    std::unique_ptr<kafka::framed_log> _log;
};

// KEYS[1] = the list; ARGV[1] = the length the writer has seen; ARGV[2] = the record.
constexpr std::string_view append_if_lua = R"(
local n = redis.call('LLEN', KEYS[1])
if n ~= tonumber(ARGV[1]) then return -n - 1 end
redis.call('RPUSH', KEYS[1], ARGV[2])
return n + 1
)";

class redis_schema_log final : public schema::registry_log {
public:
    redis_schema_log(std::shared_ptr<redis::client> c, std::string ns)
        : _c(std::move(c)), _key(fmt::format("{{{}:schemas}}:log", ns)) {}

    result<std::vector<std::string>> read_from(uint64_t from) override {
        std::vector<std::string> out;
        // In pages, so a long log is not one huge reply.
        for (uint64_t at = from;;) {
            auto start = std::to_string(at), stop = std::to_string(at + 999);
            auto r = FLOE_TRY(_c->command_for(_key, {"LRANGE", _key, start, stop}));
            FLOE_TRY(redis::check(r));
            for (auto& e : r.elements()) out.push_back(e.str());
            if (r.size() < 1000) break;
            at += 1000;
        }
        return out;
    }
    result<void> append_if(uint64_t expected, const std::string& record) override {
        auto seen = std::to_string(expected);
        auto r = _c->command_for(_key, {"EVAL", append_if_lua, "1", _key, seen, record});
        if (!r) {
            if (redis::outcome_unknown(r.error()))
                return fail(errc::unavailable, "schema log append outcome unknown: {}", r.error().message());
            return std::unexpected(r.error());
        }
        FLOE_TRY(redis::check(*r));
        if (!r->is_integer()) return fail(errc::internal, "schema log append: unexpected reply {}", r->debug_string());
        if (r->integer() < 0)
            return fail(errc::conflict, "schema log holds {} records, not {}", -r->integer() - 1, expected);
        return {};
    }
    std::string describe() const override { return fmt::format("redis list {}", _key); }

private:
    std::shared_ptr<redis::client> _c;
    std::string _key;
};

} // namespace

result<std::unique_ptr<schema::registry_log>> open_file_schema_log(const std::filesystem::path& dir) {
    return file_schema_log::open(dir);
}

std::unique_ptr<schema::registry_log> make_redis_schema_log(std::shared_ptr<redis::client> client, std::string ns) {
    return std::make_unique<redis_schema_log>(std::move(client), std::move(ns));
}

} // namespace floe::app
