// libFuzzer target: the TLS handshake path of the SSL and SASL_SSL listeners. The first byte
// picks the input's use:
//   even: bytes a client sends, fed to a server SSL configured as the broker's (TLS 1.2 at
//         least, client certificates requested and checked against a CA) until it wants more;
//         a finished handshake's peer principal is formatted;
//   odd:  a DER client certificate whose subject is formatted as the principal
//         (certificate_principal), as a verified certificate's would be.
// Nothing may crash, leak or read out of bounds whatever the bytes.
#include "kafka/tls_principal.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cstdint>
#include <cstdlib>

namespace {

// A throwaway self-signed P-256 certificate and key, for fuzzing only.
constexpr const char k_key[] = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjUs5ftEFbOGcJ5V4
yO5Pu8pwC/YxhnURiJFEGV3sJdChRANCAAS/63bi1mzGtdY0TsSKhmBmu5ukTLpu
JpS+0eebaCPsSSQ3x0jux3nfbDLbNsmVw1HxuXeFS4YpOspTCuqGkjGi
-----END PRIVATE KEY-----
)";
constexpr const char k_cert[] = R"(-----BEGIN CERTIFICATE-----
MIIBfjCCASWgAwIBAgIUXc+3y2cN6D3xzPU/6KD4zOoU9zYwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJZmxvZS1mdXp6MCAXDTI2MTIwMTE4Mzc1NFoYDzIxMjYxMTA3
MTgzNzU0WjAUMRIwEAYDVQQDDAlmbG9lLWZ1enowWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS/63bi1mzGtdY0TsSKhmBmu5ukTLpuJpS+0eebaCPsSSQ3x0jux3nf
bDLbNsmVw1HxuXeFS4YpOspTCuqGkjGio1MwUTAdBgNVHQ4EFgQUpSV49dWLbe87
T+v3oU8ZPdBck3MwHwYDVR0jBBgwFoAUpSV49dWLbe87T+v3oU8ZPdBck3MwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiBWuHNW5KE7AGmlDs2se/QO
CNmv4uzMX8BkyPSAgmNlQgIgTf5bnLr7giBeOK+x2VGfe7IYiWNcnw53PC3THQCC
TD0=
-----END CERTIFICATE-----
)";

SSL_CTX* server_context() {
    static SSL_CTX* ctx = [] {
        SSL_CTX* c = SSL_CTX_new(TLS_server_method());
        SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
        BIO* kb = BIO_new_mem_buf(k_key, -1);
        BIO* cb = BIO_new_mem_buf(k_cert, -1);
        EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
        X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
        if (!key || !cert || SSL_CTX_use_certificate(c, cert) != 1 || SSL_CTX_use_PrivateKey(c, key) != 1) std::abort();
        // Client certificates requested and checked against the same (self-signed) CA, as
        // floe.tls.client-auth=requested with floe.tls.ca-file.
        X509_STORE_add_cert(SSL_CTX_get_cert_store(c), cert);
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
        EVP_PKEY_free(key);
        X509_free(cert);
        BIO_free(kb);
        BIO_free(cb);
        return c;
    }();
    return ctx;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const bool certificate = data[0] & 1;
    ++data;
    --size;
    if (certificate) {
        const unsigned char* p = data;
        if (X509* cert = d2i_X509(nullptr, &p, long(size))) {
            (void)floe::kafka::certificate_principal(cert);
            X509_free(cert);
        }
        ERR_clear_error();
        return 0;
    }
    SSL* ssl = SSL_new(server_context());
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    BIO_write(in, data, int(size));
    SSL_set_bio(ssl, in, out); // the SSL owns both
    SSL_set_accept_state(ssl);
    // Bounded: each round consumes input or stops; the input never grows.
    for (int round = 0; round < 64; ++round) {
        int r = SSL_do_handshake(ssl);
        if (r == 1) {
            (void)floe::kafka::peer_principal(ssl);
            char buf[256];
            (void)SSL_read(ssl, buf, sizeof buf); // application data after the handshake
            break;
        }
        int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ || BIO_ctrl_pending(in) == 0) break;
    }
    SSL_free(ssl);
    ERR_clear_error();
    return 0;
}
