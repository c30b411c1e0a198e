#pragma once

// Wire codecs of the security APIs: SaslHandshake (17), SaslAuthenticate (36),
// DescribeUserScramCredentials (50), AlterUserScramCredentials (51), DescribeAcls (29),
// CreateAcls (30), DeleteAcls (31).

#include "kafka/protocol.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::kafka {

struct sasl_handshake_request {
    std::string_view mechanism;
};
result<sasl_handshake_request> decode_sasl_handshake(kreader& r, int16_t v);
struct sasl_handshake_response {
    int16_t error_code = 0;
    std::vector<std::string> mechanisms;
};
void encode(kwriter& w, int16_t v, const sasl_handshake_response& r);

struct sasl_authenticate_request {
    bytes_view auth_bytes;
};
result<sasl_authenticate_request> decode_sasl_authenticate(kreader& r, int16_t v);
struct sasl_authenticate_response {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    std::string auth_bytes;
    int64_t session_lifetime_ms = 0;
};
void encode(kwriter& w, int16_t v, const sasl_authenticate_response& r);

struct describe_user_scram_credentials_request {
    std::optional<std::vector<std::string_view>> users; ///< nullopt: every user
};
result<describe_user_scram_credentials_request> decode_describe_user_scram_credentials(kreader& r, int16_t v);
struct describe_user_scram_credentials_response {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    struct credential_info {
        int8_t mechanism = 0;
        int32_t iterations = 0;
    };
    struct result_entry {
        std::string user;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        std::vector<credential_info> credentials;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const describe_user_scram_credentials_response& r);

struct alter_user_scram_credentials_request {
    struct deletion {
        std::string_view name;
        int8_t mechanism = 0;
    };
    struct upsertion {
        std::string_view name;
        int8_t mechanism = 0;
        int32_t iterations = 0;
        bytes_view salt;
        bytes_view salted_password;
    };
    std::vector<deletion> deletions;
    std::vector<upsertion> upsertions;
};
result<alter_user_scram_credentials_request> decode_alter_user_scram_credentials(kreader& r, int16_t v);
struct alter_user_scram_credentials_response {
    struct result_entry {
        std::string user;
        int16_t error_code = 0;
        std::optional<std::string> error_message;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const alter_user_scram_credentials_response& r);

/// DescribeAcls / DeleteAcls filter as on the wire (pattern type from v1; LITERAL before).
struct acl_filter_wire {
    int8_t resource_type = 0;
    std::optional<std::string_view> resource_name;
    int8_t pattern_type = 3;
    std::optional<std::string_view> principal;
    std::optional<std::string_view> host;
    int8_t operation = 0;
    int8_t permission = 0;
};
/// One ACL as on the wire (CreateAcls creation, DescribeAcls/DeleteAcls matches).
struct acl_wire {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = 3;
    std::string principal;
    std::string host;
    int8_t operation = 0;
    int8_t permission = 0;
};

using describe_acls_request = acl_filter_wire;
result<describe_acls_request> decode_describe_acls(kreader& r, int16_t v);
struct describe_acls_response {
    int16_t error_code = 0;
    std::optional<std::string> error_message;
    /// Bindings grouped by resource (type, name, pattern type); only the principal, host,
    /// operation and permission of each `acls` entry are written.
    struct resource {
        int8_t resource_type = 0;
        std::string resource_name;
        int8_t pattern_type = 3;
        std::vector<acl_wire> acls;
    };
    std::vector<resource> resources;
};
void encode(kwriter& w, int16_t v, const describe_acls_response& r);

struct create_acls_request {
    std::vector<acl_wire> creations;
};
result<create_acls_request> decode_create_acls(kreader& r, int16_t v);
struct create_acls_response {
    struct result_entry {
        int16_t error_code = 0;
        std::optional<std::string> error_message;
    };
    std::vector<result_entry> results;
};
void encode(kwriter& w, int16_t v, const create_acls_response& r);

struct delete_acls_request {
    std::vector<acl_filter_wire> filters;
};
result<delete_acls_request> decode_delete_acls(kreader& r, int16_t v);
struct delete_acls_response {
    struct filter_result {
        int16_t error_code = 0;
        std::optional<std::string> error_message;
        std::vector<acl_wire> matching; ///< each deleted (error 0)
    };
    std::vector<filter_result> results;
};
void encode(kwriter& w, int16_t v, const delete_acls_response& r);

/// Decodes the body of any security API (for the fuzzer); errc::unsupported for other keys.
result<void> decode_any_security(int16_t api, int16_t v, kreader& r);

} // namespace floe::kafka
