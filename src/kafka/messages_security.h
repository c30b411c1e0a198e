#pragma once

// Wire codecs of the security APIs: SaslHandshake (17), SaslAuthenticate (36),
// DescribeUserScramCredentials (50), AlterUserScramCredentials (51).

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

/// Decodes the body of any security API (for the fuzzer); errc::unsupported for other keys.
result<void> decode_any_security(int16_t api, int16_t v, kreader& r);

} // namespace floe::kafka
