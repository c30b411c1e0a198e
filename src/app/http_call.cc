#include "app/http_call.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>

namespace floe::app {

namespace {
size_t collect(char* p, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(p, size * n);
    return size * n;
}
} // namespace

std::optional<http_answer> http_call(const std::string& url, const std::string& method, const std::string& body,
                                     const http_call_options& o) {
    CURL* h = curl_easy_init();
    if (!h) return std::nullopt;
    http_answer a;
    auto ct = fmt::format("Content-Type: {}", o.content_type);
    auto accept = fmt::format("Accept: {}", o.content_type);
    curl_slist* headers = curl_slist_append(nullptr, ct.c_str());
    headers = curl_slist_append(headers, accept.c_str());
    std::string auth;
    if (!o.token.empty()) {
        auth = fmt::format("Authorization: Bearer {}", o.token);
        headers = curl_slist_append(headers, auth.c_str());
    }
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &a.body);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, o.timeout_seconds);
    if (!body.empty() || method == "POST") {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, long(body.size()));
    }
    auto rc = curl_easy_perform(h);
    if (rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a.status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK) {
        std::fprintf(stderr, "floe: cannot reach %s at %s: %s (is floe serve running? see --url)\n", o.what.c_str(),
                     url.c_str(), curl_easy_strerror(rc));
        return std::nullopt;
    }
    return a;
}

std::optional<std::string> read_token_file(const std::string& path) {
    std::ifstream tf(path);
    std::string token;
    if (!tf || !std::getline(tf, token)) {
        std::fprintf(stderr, "floe: cannot read --token-file %s\n", path.c_str());
        return std::nullopt;
    }
    if (!token.empty() && token.back() == '\r') token.pop_back();
    return token;
}

} // namespace floe::app
