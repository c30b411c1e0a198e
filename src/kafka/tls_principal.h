#pragma once

#include <optional>
#include <string>

typedef struct ssl_st SSL;
typedef struct x509_st X509;

namespace floe::kafka {

/// "User:<subject DN>" of a certificate, the DN in RFC 2253 form with the last RDN first, as
/// Kafka's default principal builder prints it ("User:O=acme,CN=alice").
std::string certificate_principal(X509* cert);
/// The principal of the TLS peer's certificate; nullopt when the client sent none.
std::optional<std::string> peer_principal(SSL* ssl);

} // namespace floe::kafka
