// DescribeUserScramCredentials (50) and AlterUserScramCredentials (51) on the SASL user store;
// DescribeAcls (29), CreateAcls (30) and DeleteAcls (31) on the ACL store.
#include "kafka/handlers.h"
#include "kafka/messages_security.h"

#include "base/authorization_log.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace floe::kafka {

void request_handler::report_denied(const connection_info& c, acl_operation op, acl_resource type,
                                    std::string_view name) {
    std::string_view host = c.client_host; // "/10.0.0.7" as Java prints it: the bare address
    if (host.starts_with('/')) host.remove_prefix(1);
    floe::report_denied({.source = "kafka",
                         .principal = c.principal,
                         .host = host,
                         .operation = to_string(op),
                         .resource_type = to_string(type),
                         .resource_name = name});
}

namespace {
template <typename Resp>
void respond_security(byte_buffer& out, const request_header& h, const Resp& r) {
    size_t start = begin_response(out, h);
    kwriter w(out, h.flexible);
    encode(w, h.api_version, r);
    finish_response(out, start);
}

acl_binding binding_of(const acl_wire& a) {
    return {acl_resource(a.resource_type), a.resource_name, acl_pattern(a.pattern_type), a.principal, a.host,
            acl_operation(a.operation), acl_permission(a.permission)};
}
acl_wire wire_of(const acl_binding& b) {
    return {int8_t(b.resource_type), b.resource_name, int8_t(b.pattern), b.principal,
            b.host, int8_t(b.operation), int8_t(b.permission)};
}
acl_filter filter_of(const acl_filter_wire& f) {
    auto opt = [](std::optional<std::string_view> v) {
        return v ? std::optional<std::string>(*v) : std::nullopt;
    };
    return {acl_resource(f.resource_type), opt(f.resource_name), acl_pattern(f.pattern_type), opt(f.principal),
            opt(f.host), acl_operation(f.operation), acl_permission(f.permission)};
}
constexpr std::string_view k_cluster_denied = "Cluster authorization failed.";
} // namespace

bool request_handler::describe_acls(const connection_info& c, const request_header& h, bytes_view body,
                                    byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_describe_acls(rd, h.api_version);
    if (!req) return false;
    describe_acls_response resp;
    auto filter = filter_of(*req);
    if (!_auth) {
        resp.error_code = int16_t(kerr::security_disabled);
        resp.error_message = "No Authorizer is configured on the broker";
    } else if (!allowed_on_cluster(c, acl_operation::describe)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed);
        resp.error_message = std::string(k_cluster_denied);
    } else if (auto ok = validate_acl_filter(filter); !ok) {
        resp.error_code = int16_t(kerr::invalid_request);
        resp.error_message = ok.error().message();
    } else {
        auto acls = _auth->store().snapshot();
        for (auto& b : *acls) {
            if (!filter.matches(b)) continue;
            // The set is ordered by resource type, name and pattern first: one group each.
            if (resp.resources.empty() || resp.resources.back().resource_type != int8_t(b.resource_type) ||
                resp.resources.back().resource_name != b.resource_name ||
                resp.resources.back().pattern_type != int8_t(b.pattern))
                resp.resources.push_back({int8_t(b.resource_type), b.resource_name, int8_t(b.pattern), {}});
            resp.resources.back().acls.push_back(wire_of(b));
        }
    }
    respond_security(out, h, resp);
    return true;
}

bool request_handler::create_acls(const connection_info& c, const request_header& h, bytes_view body,
                                  byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_create_acls(rd, h.api_version);
    if (!req) return false;
    create_acls_response resp;
    resp.results.resize(req->creations.size());
    auto fail_all = [&](kerr e, std::string_view msg) {
        for (auto& r : resp.results) r = {int16_t(e), std::string(msg)};
    };
    if (!_auth) {
        fail_all(kerr::security_disabled, "No Authorizer is configured on the broker");
    } else if (!allowed_on_cluster(c, acl_operation::alter)) {
        fail_all(kerr::cluster_authorization_failed, k_cluster_denied);
    } else {
        std::vector<acl_binding> valid;
        for (size_t i = 0; i < req->creations.size(); ++i) {
            auto b = binding_of(req->creations[i]);
            if (auto ok = validate_acl(b); !ok) resp.results[i] = {int16_t(kerr::invalid_request), ok.error().message()};
            else valid.push_back(std::move(b));
        }
        auto applied = valid.empty() ? result<void>{} : _auth->store().update([&](acl_store::acl_set& acls) -> result<void> {
            for (auto& b : valid) acls.insert(b);
            return {};
        });
        for (auto& r : resp.results) {
            if (r.error_code != 0) continue;
            if (!applied) r = {int16_t(kerr::unknown_server_error), applied.error().message()};
        }
        if (applied)
            for (auto& b : valid) spdlog::info("ACL added by {}: {}", c.principal, describe_acl(b));
        else
            spdlog::error("CreateAcls: {}", applied.error());
    }
    respond_security(out, h, resp);
    return true;
}

bool request_handler::delete_acls(const connection_info& c, const request_header& h, bytes_view body,
                                  byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_delete_acls(rd, h.api_version);
    if (!req) return false;
    delete_acls_response resp;
    resp.results.resize(req->filters.size());
    auto fail_all = [&](kerr e, std::string_view msg) {
        for (auto& r : resp.results) r = {int16_t(e), std::string(msg), {}};
    };
    if (!_auth) {
        fail_all(kerr::security_disabled, "No Authorizer is configured on the broker");
    } else if (!allowed_on_cluster(c, acl_operation::alter)) {
        fail_all(kerr::cluster_authorization_failed, k_cluster_denied);
    } else {
        std::vector<std::optional<acl_filter>> filters;
        for (size_t i = 0; i < req->filters.size(); ++i) {
            auto f = filter_of(req->filters[i]);
            if (auto ok = validate_acl_filter(f); !ok) {
                resp.results[i] = {int16_t(kerr::invalid_request), ok.error().message(), {}};
                filters.emplace_back();
            } else {
                filters.emplace_back(std::move(f));
            }
        }
        std::vector<acl_binding> removed;
        auto applied = _auth->store().update([&](acl_store::acl_set& acls) -> result<void> {
            removed.clear();
            // Every filter sees the set as it was: a binding two filters match is listed by both.
            for (size_t i = 0; i < filters.size(); ++i) {
                if (!filters[i]) continue;
                for (auto& b : acls)
                    if (filters[i]->matches(b)) resp.results[i].matching.push_back(wire_of(b));
            }
            for (auto it = acls.begin(); it != acls.end();) {
                bool hit = std::ranges::any_of(filters, [&](auto& f) { return f && f->matches(*it); });
                if (hit) {
                    removed.push_back(*it);
                    it = acls.erase(it);
                } else {
                    ++it;
                }
            }
            return {};
        });
        if (!applied) {
            spdlog::error("DeleteAcls: {}", applied.error());
            for (auto& r : resp.results)
                if (r.error_code == 0) r = {int16_t(kerr::unknown_server_error), applied.error().message(), {}};
        } else {
            for (auto& b : removed) spdlog::info("ACL removed by {}: {}", c.principal, describe_acl(b));
        }
    }
    respond_security(out, h, resp);
    return true;
}

bool request_handler::describe_user_scram_credentials(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
    kreader rd(body, h.flexible);
    auto req = decode_describe_user_scram_credentials(rd, h.api_version);
    if (!req) return false;
    describe_user_scram_credentials_response resp;
    if (!allowed_on_cluster(c, acl_operation::describe)) {
        resp.error_code = int16_t(kerr::cluster_authorization_failed);
        resp.error_message = std::string(k_cluster_denied);
        respond_security(out, h, resp);
        return true;
    }
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

bool request_handler::alter_user_scram_credentials(const connection_info& c, const request_header& h, bytes_view body, byte_buffer& out) {
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
    // Kafka: ALTER on the cluster, refused user by user.
    if (!allowed_on_cluster(c, acl_operation::alter))
        for (auto& n : order) set_error(n, kerr::cluster_authorization_failed, std::string(k_cluster_denied));
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
