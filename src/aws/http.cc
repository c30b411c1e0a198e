#include "aws/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cctype>
#include <mutex>

namespace floe::aws {
namespace {

size_t on_body(char* p, size_t size, size_t n, void* user) {
    static_cast<std::string*>(user)->append(p, size * n);
    return size * n;
}

size_t on_header(char* p, size_t size, size_t n, void* user) {
    std::string_view line(p, size * n);
    auto colon = line.find(':');
    if (colon != std::string_view::npos) {
        std::string name(line.substr(0, colon));
        for (auto& c : name)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
            value.remove_prefix(1);
        while (!value.empty()
               && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
            value.remove_suffix(1);
        static_cast<std::vector<std::pair<std::string, std::string>>*>(user)->emplace_back(
            std::move(name), std::string(value));
    }
    return size * n;
}

} // namespace

void init_curl_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

result<http_reply> http_call(const std::string& method, const std::string& url,
                             const std::vector<std::string>& headers, const std::string& body,
                             std::chrono::milliseconds timeout,
                             std::chrono::milliseconds connect_timeout) {
    init_curl_once();
    CURL* h = curl_easy_init();
    if (!h) return fail(errc::internal, "curl_easy_init failed");
    curl_slist* hl = nullptr;
    for (auto& x : headers)
        hl = curl_slist_append(hl, x.c_str());
    http_reply reply;
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply.body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &reply.headers);
    if (method == "HEAD") {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (method != "GET") {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
        // Never a null pointer: curl would then read the body from its default source, stdin.
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    auto rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &reply.status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK)
        return fail(errc::unavailable, "{} {}: {}", method, url,
                    errbuf[0] ? errbuf : curl_easy_strerror(rc));
    return reply;
}

} // namespace floe::aws
