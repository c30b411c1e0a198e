#include "app/dlq.h"

#include "app/http_call.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>

namespace floe::app {

int run_dlq_replay(const config::settings& s, const std::string& topic, const std::string& url,
                   const std::string& token_file) {
    std::string base = url;
    if (base.empty()) {
        auto a = s.get_address("floe.http.listen");
        base = fmt::format("{}://{}:{}", s.get_bool("floe.http.tls.enabled") ? "https" : "http", a.host, a.port);
    }
    while (!base.empty() && base.back() == '/') base.pop_back();
    http_call_options o;
    o.what = "floe serve's admin plane";
    o.timeout_seconds = 600; // a large dead-letter table is read and rewritten in one request
    if (!token_file.empty()) {
        auto t = read_token_file(token_file);
        if (!t) return 2;
        o.token = *t;
    }
    std::string seg;
    for (unsigned char c : topic) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.') seg += char(c);
        else seg += fmt::format("%{:02X}", c);
    }
    std::fprintf(stderr, "floe dlq replay: decoding the dead letters of %s again ...\n", topic.c_str());
    auto a = http_call(base + "/v1/topics/" + seg + "/dlq/replay", "POST", "", o);
    if (!a) return 1;
    auto j = nlohmann::json::parse(a->body, nullptr, false);
    if (a->status != 200) {
        auto msg = j.is_object() && j.contains("error") ? j["error"].dump() : a->body;
        std::fprintf(stderr, "floe dlq replay: HTTP %ld: %s\n", a->status, msg.c_str());
        return a->status >= 500 ? 1 : 3;
    }
    std::printf("%s: %lld record(s) moved to the table, %lld stay in %s (%lld already moved by an earlier run; %lld "
                "file(s) wait for their offload)\n",
                topic.c_str(), j.value("replayed", 0LL), j.value("still_dead", 0LL),
                j.value("dead_letter_table", std::string()).c_str(), j.value("already_in_table", 0LL),
                j.value("files_waiting", 0LL));
    if (j.contains("reasons"))
        for (auto& [reason, n] : j["reasons"].items())
            std::printf("  still %s: %lld\n", reason.c_str(), n.get<long long>());
    return 0;
}

} // namespace floe::app
