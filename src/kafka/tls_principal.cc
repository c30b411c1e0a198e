#include "kafka/tls_principal.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace floe::kafka {

std::string certificate_principal(X509* cert) {
    std::string dn;
    if (BIO* bio = BIO_new(BIO_s_mem())) {
        X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
        char* data = nullptr;
        long n = BIO_get_mem_data(bio, &data);
        if (n > 0) dn.assign(data, size_t(n));
        BIO_free(bio);
    }
    return "User:" + dn;
}

std::optional<std::string> peer_principal(SSL* ssl) {
    X509* cert = SSL_get1_peer_certificate(ssl);
    if (!cert) return std::nullopt;
    auto p = certificate_principal(cert);
    X509_free(cert);
    return p;
}

} // namespace floe::kafka
