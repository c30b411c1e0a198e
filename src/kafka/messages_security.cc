#include "kafka/messages_security.h"

namespace floe::kafka {

namespace {
std::optional<std::string_view> view(const std::optional<std::string>& s) {
    if (!s) return std::nullopt;
    return std::string_view(*s);
}
} // namespace

result<sasl_handshake_request> decode_sasl_handshake(kreader& r, int16_t) {
    sasl_handshake_request q;
    q.mechanism = FLOE_TRY(r.str());
    return q;
}

void encode(kwriter& w, int16_t, const sasl_handshake_response& r) {
    w.i16(r.error_code);
    w.array_len(r.mechanisms.size());
    for (auto& m : r.mechanisms) w.str(m);
}

result<sasl_authenticate_request> decode_sasl_authenticate(kreader& r, int16_t) {
    sasl_authenticate_request q;
    q.auth_bytes = FLOE_TRY(r.bytes());
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t v, const sasl_authenticate_response& r) {
    w.i16(r.error_code);
    w.nstr(view(r.error_message));
    w.bytes(bytes_view(reinterpret_cast<const uint8_t*>(r.auth_bytes.data()), r.auth_bytes.size()));
    if (v >= 1) w.i64(r.session_lifetime_ms);
    w.tags();
}

result<describe_user_scram_credentials_request> decode_describe_user_scram_credentials(kreader& r, int16_t) {
    describe_user_scram_credentials_request q;
    int32_t n = FLOE_TRY(r.array_len());
    if (n >= 0) {
        q.users.emplace();
        q.users->reserve(size_t(n));
        for (int32_t i = 0; i < n; ++i) {
            q.users->push_back(FLOE_TRY(r.str()));
            FLOE_TRY(r.tags());
        }
    }
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const describe_user_scram_credentials_response& r) {
    w.i32(0); // throttle_time_ms
    w.i16(r.error_code);
    w.nstr(view(r.error_message));
    w.array_len(r.results.size());
    for (auto& e : r.results) {
        w.str(e.user);
        w.i16(e.error_code);
        w.nstr(view(e.error_message));
        w.array_len(e.credentials.size());
        for (auto& c : e.credentials) {
            w.i8(c.mechanism);
            w.i32(c.iterations);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<alter_user_scram_credentials_request> decode_alter_user_scram_credentials(kreader& r, int16_t) {
    alter_user_scram_credentials_request q;
    int32_t n = FLOE_TRY(r.array_len());
    for (int32_t i = 0; i < n; ++i) {
        alter_user_scram_credentials_request::deletion d;
        d.name = FLOE_TRY(r.str());
        d.mechanism = FLOE_TRY(r.i8());
        FLOE_TRY(r.tags());
        q.deletions.push_back(d);
    }
    n = FLOE_TRY(r.array_len());
    for (int32_t i = 0; i < n; ++i) {
        alter_user_scram_credentials_request::upsertion u;
        u.name = FLOE_TRY(r.str());
        u.mechanism = FLOE_TRY(r.i8());
        u.iterations = FLOE_TRY(r.i32());
        u.salt = FLOE_TRY(r.bytes());
        u.salted_password = FLOE_TRY(r.bytes());
        FLOE_TRY(r.tags());
        q.upsertions.push_back(u);
    }
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const alter_user_scram_credentials_response& r) {
    w.i32(0); // throttle_time_ms
    w.array_len(r.results.size());
    for (auto& e : r.results) {
        w.str(e.user);
        w.i16(e.error_code);
        w.nstr(view(e.error_message));
        w.tags();
    }
    w.tags();
}

namespace {
result<acl_filter_wire> decode_acl_filter(kreader& r, int16_t v) {
    acl_filter_wire f;
    f.resource_type = FLOE_TRY(r.i8());
    f.resource_name = FLOE_TRY(r.nstr());
    if (v >= 1) f.pattern_type = FLOE_TRY(r.i8());
    f.principal = FLOE_TRY(r.nstr());
    f.host = FLOE_TRY(r.nstr());
    f.operation = FLOE_TRY(r.i8());
    f.permission = FLOE_TRY(r.i8());
    return f;
}
} // namespace

result<describe_acls_request> decode_describe_acls(kreader& r, int16_t v) {
    auto f = FLOE_TRY(decode_acl_filter(r, v));
    FLOE_TRY(r.tags());
    return f;
}

void encode(kwriter& w, int16_t v, const describe_acls_response& r) {
    w.i32(0); // throttle_time_ms
    w.i16(r.error_code);
    w.nstr(view(r.error_message));
    w.array_len(r.resources.size());
    for (auto& res : r.resources) {
        w.i8(res.resource_type);
        w.str(res.resource_name);
        if (v >= 1) w.i8(res.pattern_type);
        w.array_len(res.acls.size());
        for (auto& a : res.acls) {
            w.str(a.principal);
            w.str(a.host);
            w.i8(a.operation);
            w.i8(a.permission);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<create_acls_request> decode_create_acls(kreader& r, int16_t v) {
    create_acls_request q;
    int32_t n = FLOE_TRY(r.array_len(5));
    for (int32_t i = 0; i < n; ++i) {
        acl_wire a;
        a.resource_type = FLOE_TRY(r.i8());
        a.resource_name = std::string(FLOE_TRY(r.str()));
        if (v >= 1) a.pattern_type = FLOE_TRY(r.i8());
        a.principal = std::string(FLOE_TRY(r.str()));
        a.host = std::string(FLOE_TRY(r.str()));
        a.operation = FLOE_TRY(r.i8());
        a.permission = FLOE_TRY(r.i8());
        FLOE_TRY(r.tags());
        q.creations.push_back(std::move(a));
    }
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t, const create_acls_response& r) {
    w.i32(0); // throttle_time_ms
    w.array_len(r.results.size());
    for (auto& e : r.results) {
        w.i16(e.error_code);
        w.nstr(view(e.error_message));
        w.tags();
    }
    w.tags();
}

result<delete_acls_request> decode_delete_acls(kreader& r, int16_t v) {
    delete_acls_request q;
    int32_t n = FLOE_TRY(r.array_len(5));
    for (int32_t i = 0; i < n; ++i) {
        q.filters.push_back(FLOE_TRY(decode_acl_filter(r, v)));
        FLOE_TRY(r.tags());
    }
    FLOE_TRY(r.tags());
    return q;
}

void encode(kwriter& w, int16_t v, const delete_acls_response& r) {
    w.i32(0); // throttle_time_ms
    w.array_len(r.results.size());
    for (auto& fr : r.results) {
        w.i16(fr.error_code);
        w.nstr(view(fr.error_message));
        w.array_len(fr.matching.size());
        for (auto& a : fr.matching) {
            w.i16(0);
            w.nstr(std::nullopt);
            w.i8(a.resource_type);
            w.str(a.resource_name);
            if (v >= 1) w.i8(a.pattern_type);
            w.str(a.principal);
            w.str(a.host);
            w.i8(a.operation);
            w.i8(a.permission);
            w.tags();
        }
        w.tags();
    }
    w.tags();
}

result<void> decode_any_security(int16_t api, int16_t v, kreader& r) {
    switch (api_key(api)) {
    case api_key::sasl_handshake: FLOE_TRY(decode_sasl_handshake(r, v)); return {};
    case api_key::sasl_authenticate: FLOE_TRY(decode_sasl_authenticate(r, v)); return {};
    case api_key::describe_user_scram_credentials:
        FLOE_TRY(decode_describe_user_scram_credentials(r, v));
        return {};
    case api_key::alter_user_scram_credentials: FLOE_TRY(decode_alter_user_scram_credentials(r, v)); return {};
    case api_key::describe_acls: FLOE_TRY(decode_describe_acls(r, v)); return {};
    case api_key::create_acls: FLOE_TRY(decode_create_acls(r, v)); return {};
    case api_key::delete_acls: FLOE_TRY(decode_delete_acls(r, v)); return {};
    default: break;
    }
    return fail(errc::unsupported, "api key {}", api);
}

} // namespace floe::kafka
