// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) on the SASL user store.
#include "kafka/handlers.h"
#include "kafka/messages_security.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace floe::kafka {

namespace {
template <typename Resp>
void respond_security(byte_buffer& out, const request_header& h, const Resp& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}
} // namespace

bool request_handler::describe_user_scram_credentials(const request_header& h, bytes_view body, byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_describe_user_scram_credentials(rd, h.api_version);
    if (!req) return false;
    describe_user_scram_credentials_response resp;
    auto users = _users ? _users->list() : fail(errc::unavailable, "no user store");
    if (!users) {
        resp.error_code = int16_t(kerr::unknown_server_error);
        resp.error_message = users.error().message();
        respond_security(out, h, resp);
        return true;
    }
    auto entry_of = [](const user_store::user_entry& u) {
        describe_user_scram_credentials_response::result_entry e;
        e.user = u.name;
        for (auto& [m, it] : u.iterations) e.credentials.push_back({int8_t(m), it});
        return e;
    };
    if (!req->users) {
        for (auto& u : *users) resp.results.push_back(entry_of(u));
    } else {
        std::map<std::string_view, int> seen;
        for (auto name : *req->users) ++seen[name];
        std::set<std::string_view> done;
        for (auto name : *req->users) {
            if (!done.insert(name).second) continue;
            describe_user_scram_credentials_response::result_entry e;
            e.user = std::string(name);
            auto it = std::ranges::find_if(*users, [&](auto& u) { return u.name == name; });
            if (seen[name] > 1) {
                e.error_code = int16_t(kerr::duplicate_resource);
                e.error_message = "Cannot describe SCRAM credentials for the same user twice in a single request";
            } else if (it == users->end()) {
                e.error_code = int16_t(kerr::resource_not_found);
                e.error_message = "Attempt to describe a user credential that does not exist";
            } else {
                e = entry_of(*it);
            }
            resp.results.push_back(std::move(e));
        }
    }
    respond_security(out, h, resp);
    return true;
}

bool request_handler::alter_user_scram_credentials(const request_header& h, bytes_view body, byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_alter_user_scram_credentials(rd, h.api_version);
    if (!req) return false;
    // One result per user, in the order users first appear; a user with any invalid entry
    // keeps its credentials unchanged.
    std::vector<std::string> order;
    std::map<std::string, std::pair<kerr, std::string>> errors;
    std::map<std::pair<std::string, int8_t>, int> count;
    auto note = [&](std::string_view name, int8_t mech) {
        std::string n(name);
        if (std::ranges::find(order, n) == order.end()) order.push_back(n);
        ++count[{n, mech}];
    };
    for (auto& d : req->deletions) note(d.name, d.mechanism);
    for (auto& u : req->upsertions) note(u.name, u.mechanism);
    auto set_error = [&](std::string_view name, kerr e, std::string msg) {
        errors.try_emplace(std::string(name), e, std::move(msg));
    };
    auto check_common = [&](std::string_view name, int8_t mech) {
        if (name.empty()) set_error(name, kerr::unacceptable_credential, "Username must not be empty");
        else if (mech != int8_t(scram_mechanism::sha256) && mech != int8_t(scram_mechanism::sha512))
            set_error(name, kerr::unsupported_sasl_mechanism, fmt::format("Unknown SCRAM mechanism {}", mech));
        else if (count[{std::string(name), mech}] > 1)
            set_error(name, kerr::duplicate_resource,
                      "A user credential cannot be altered twice in the same request");
    };
    for (auto& d : req->deletions) check_common(d.name, d.mechanism);
    for (auto& u : req->upsertions) {
        check_common(u.name, u.mechanism);
        if (u.iterations < scram_min_iterations || u.iterations > scram_max_iterations)
            set_error(u.name, kerr::unacceptable_credential,
                      fmt::format("Iterations {} outside [{}, {}]", u.iterations, scram_min_iterations,
                                  scram_max_iterations));
        else if (u.salt.empty() || u.salted_password.empty())
            set_error(u.name, kerr::unacceptable_credential, "Salt and salted password must not be empty");
    }
    alter_user_scram_credentials_response resp;
    auto applied = _users ? _users->update([&](user_store::users_map& users) -> result<void> {
        for (auto& d : req->deletions) {
            std::string n(d.name);
            if (errors.contains(n)) continue;
            auto u = users.find(n);
            if (u == users.end() || !u->second.erase(scram_mechanism(d.mechanism))) {
                set_error(n, kerr::resource_not_found, "Attempt to delete a user credential that does not exist");
                continue;
            }
            if (u->second.empty()) users.erase(u);
        }
        for (auto& up : req->upsertions) {
            std::string n(up.name);
            if (errors.contains(n)) continue;
            auto as_sv = [](bytes_view b) { return std::string_view(reinterpret_cast<const char*>(b.data()), b.size()); };
            users[n][scram_mechanism(up.mechanism)] =
                scram_from_salted(scram_mechanism(up.mechanism), as_sv(up.salted_password), as_sv(up.salt),
                                  up.iterations);
        }
        return {};
    })
                          : fail(errc::unavailable, "no user store");
    for (auto& n : order) {
        alter_user_scram_credentials_response::result_entry e{n, 0, std::nullopt};
        if (auto it = errors.find(n); it != errors.end()) {
            e.error_code = int16_t(it->second.first);
            e.error_message = it->second.second;
        } else if (!applied) {
            e.error_code = int16_t(kerr::unknown_server_error);
            e.error_message = applied.error().message();
        } else {
            spdlog::info("SASL user '{}': SCRAM credentials altered through AlterUserScramCredentials", n);
        }
        resp.results.push_back(std::move(e));
    }
    respond_security(out, h, resp);
    return true;
}

} // namespace floe::kafka
