#include "kafka/users.h"

#include "base/file_lock.h"
#include "log/fs_util.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace floe::kafka {

namespace {

/// Takes the store's lock, waiting up to 10 s for another writer (floe users, the broker).
result<file_lock> lock_store(const std::filesystem::path& dir) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
        auto l = file_lock::acquire(dir / "users.lock", "users.json writer");
        if (l || l.error().code() != errc::unavailable || std::chrono::steady_clock::now() > deadline) return l;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace

result<user_store::users_map> parse_users_json(std::string_view text) {
    user_store::users_map out;
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return fail(errc::corrupt, "not a JSON object");
    auto users = j.find("users");
    if (users == j.end() || !users->is_object()) return fail(errc::corrupt, "no \"users\" object");
    for (auto& [name, mechs] : users->items()) {
        if (!mechs.is_object()) return fail(errc::corrupt, "user '{}' is not an object", name);
        auto& u = out[name];
        for (auto& [mech, c] : mechs.items()) {
            auto m = parse_scram_mechanism(mech);
            if (!m) return fail(errc::corrupt, "user '{}': unknown mechanism '{}'", name, mech);
            if (!c.is_object() || !c.contains("salt") || !c.contains("iterations") || !c.contains("stored_key") ||
                !c.contains("server_key") || !c["salt"].is_string() || !c["iterations"].is_number_integer() ||
                !c["stored_key"].is_string() || !c["server_key"].is_string())
                return fail(errc::corrupt, "user '{}' {}: needs salt, iterations, stored_key, server_key", name, mech);
            scram_credential cred;
            auto salt = base64_decode(c["salt"].get<std::string>());
            auto sk = base64_decode(c["stored_key"].get<std::string>());
            auto vk = base64_decode(c["server_key"].get<std::string>());
            if (!salt || !sk || !vk) return fail(errc::corrupt, "user '{}' {}: bad base64", name, mech);
            cred.salt = std::move(*salt);
            cred.stored_key = std::move(*sk);
            cred.server_key = std::move(*vk);
            cred.iterations = c["iterations"].get<int32_t>();
            if (cred.iterations <= 0) return fail(errc::corrupt, "user '{}' {}: bad iterations", name, mech);
            u[*m] = std::move(cred);
        }
    }
    return out;
}

std::string users_json(const user_store::users_map& users) {
    nlohmann::json j;
    j["version"] = 1;
    j["users"] = nlohmann::json::object();
    for (auto& [name, mechs] : users) {
        auto& u = j["users"][name];
        u = nlohmann::json::object();
        for (auto& [m, c] : mechs)
            u[std::string(to_string(m))] = {{"salt", base64_encode(c.salt)},
                                            {"iterations", c.iterations},
                                            {"stored_key", base64_encode(c.stored_key)},
                                            {"server_key", base64_encode(c.server_key)}};
    }
    return j.dump(2) + "\n";
}

user_store::user_store(std::filesystem::path dir) : _dir(std::move(dir)), _file(_dir / "users.json") {}

result<void> user_store::refresh_locked() {
    struct stat st {};
    if (::stat(_file.c_str(), &st) != 0) {
        if (errno != ENOENT) return fail(errc::io_error, "stat {}: {}", _file.string(), std::strerror(errno));
        _users.clear(); // no file: no users
        _seen = identity{};
        return {};
    }
    identity id{st.st_ino, st.st_size, int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
    if (_seen && *_seen == id) return {};
    auto bytes = FLOE_TRY(log::read_file(_file));
    auto users = parse_users_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!users) return fail(std::move(users).error().with_context("reading {}", _file.string()));
    _users = std::move(*users);
    _seen = id;
    return {};
}

std::optional<scram_credential> user_store::credential(const std::string& user, scram_mechanism m) {
    std::lock_guard lk(_mu);
    if (auto r = refresh_locked(); !r) spdlog::error("SASL user store: {}; keeping the users read before", r.error());
    auto u = _users.find(user);
    if (u == _users.end()) return std::nullopt;
    auto c = u->second.find(m);
    if (c == u->second.end()) return std::nullopt;
    return c->second;
}

bool user_store::check_password(const std::string& user, std::string_view password) {
    for (auto m : {scram_mechanism::sha512, scram_mechanism::sha256})
        if (auto c = credential(user, m)) return scram_check_password(m, *c, password);
    return false;
}

result<std::vector<user_store::user_entry>> user_store::list() {
    std::lock_guard lk(_mu);
    FLOE_TRY(refresh_locked());
    std::vector<user_entry> out;
    for (auto& [name, mechs] : _users) {
        user_entry e{name, {}};
        for (auto& [m, c] : mechs) e.iterations[m] = c.iterations;
        out.push_back(std::move(e));
    }
    return out;
}

result<void> user_store::update(const std::function<result<void>(users_map&)>& fn) {
    std::error_code ec;
    std::filesystem::create_directories(_dir, ec);
    if (ec) return fail(errc::io_error, "creating {}: {}", _dir.string(), ec.message());
    std::filesystem::permissions(_dir, std::filesystem::perms::owner_all, ec);
    auto lock = FLOE_TRY(lock_store(_dir));
    std::lock_guard lk(_mu);
    _seen.reset(); // always re-read under the lock: another process may have written
    FLOE_TRY(refresh_locked());
    users_map next = _users;
    FLOE_TRY(fn(next));
    auto text = users_json(next);
    FLOE_TRY(log::write_file_atomic(_file, as_bytes(text)));
    ::chmod(_file.c_str(), 0600);
    _users = std::move(next);
    _seen.reset();
    return {};
}

result<void> user_store::upsert(const std::string& user, scram_mechanism m, const scram_credential& c) {
    return update([&](users_map& users) -> result<void> {
        users[user][m] = c;
        return {};
    });
}

result<void> user_store::remove(const std::string& user, std::optional<scram_mechanism> m) {
    return update([&](users_map& users) -> result<void> {
        auto u = users.find(user);
        if (u == users.end()) return fail(errc::not_found, "no user '{}'", user);
        if (m) {
            if (!u->second.erase(*m)) return fail(errc::not_found, "user '{}' has no {} credential", user, to_string(*m));
            if (u->second.empty()) users.erase(u);
        } else {
            users.erase(u);
        }
        return {};
    });
}

} // namespace floe::kafka
