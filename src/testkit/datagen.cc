#include "testkit/datagen.h"

#include <array>
#include <cstdio>
#include <string_view>

namespace floe::testkit {
namespace {

// Vocabulary for JSON-like values: field names repeat across records (as in real event
// streams), values vary. Words are plain ASCII plus a few multi-byte UTF-8 ones.
constexpr std::array<std::string_view, 64> words = {
    "alpha",   "bravo",    "charlie", "delta",    "echo",     "foxtrot", "golf",     "hotel",
    "india",   "juliet",   "kilo",    "lima",     "mike",     "november", "oscar",   "papa",
    "quebec",  "romeo",    "sierra",  "tango",    "uniform",  "victor",  "whiskey",  "xray",
    "yankee",  "zulu",     "order",   "payment",  "refund",   "invoice", "shipment", "cart",
    "session", "click",    "view",    "search",   "login",    "logout",  "signup",   "update",
    "created", "pending",  "settled", "failed",   "retried",  "queued",  "berlin",   "paris",
    "tokyo",   "lagos",    "lima",    "oslo",     "quito",    "sydney",  "münchen",  "são-paulo",
    "zürich",  "kraków",   "東京",    "αθήνα",    "premium",  "basic",   "trial",    "enterprise"};
constexpr std::array<std::string_view, 8> header_names = {
    "trace-id", "content-type", "source", "retry", "trace-id", "schema", "tenant", "source"};
constexpr std::array<std::string_view, 6> event_types = {"order.created", "order.paid",
                                                         "order.shipped", "user.login",
                                                         "page.view",     "cart.updated"};

} // namespace

datagen::datagen(datagen_options opts)
    : _opts(opts), _state(opts.seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull),
      _ts(opts.start_ts_ms) {}

// splitmix64: fixed arithmetic, identical output everywhere.
uint64_t datagen::rand() {
    uint64_t z = (_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

bool datagen::chance(double p) {
    return static_cast<double>(rand() >> 11) * 0x1.0p-53 < p;
}

std::string datagen::make_value() {
    std::string v;
    v.reserve(_opts.value_size + 64);
    char buf[64];
    std::snprintf(buf, sizeof buf, "{\"id\":%llu,\"type\":\"",
                  static_cast<unsigned long long>(_seq));
    v += buf;
    v += event_types[below(event_types.size())];
    std::snprintf(buf, sizeof buf, "\",\"user\":\"u%06llu\",\"amount\":%llu.%02llu,\"ts\":%lld",
                  static_cast<unsigned long long>(below(_opts.distinct_keys)),
                  static_cast<unsigned long long>(below(100000)),
                  static_cast<unsigned long long>(below(100)), static_cast<long long>(_ts));
    v += buf;
    v += ",\"note\":\"";
    // Fill to the target size with words, a few random numbers and hex ids.
    while (v.size() + 2 < _opts.value_size) {
        switch (below(6)) {
        case 0:
            std::snprintf(buf, sizeof buf, "%08llx", static_cast<unsigned long long>(rand()));
            v += buf;
            break;
        case 1:
            std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(below(10000)));
            v += buf;
            break;
        default: v += words[below(words.size())];
        }
        v += ' ';
    }
    v += "\"}";
    return v;
}

gen_record datagen::next() {
    gen_record r;
    _ts += static_cast<int64_t>(below(static_cast<uint64_t>(_opts.max_ts_step_ms) + 1));
    r.timestamp_ms = _ts;
    if (!chance(_opts.null_key_ratio)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "id-%07llu",
                      static_cast<unsigned long long>(below(_opts.distinct_keys)));
        r.key = buf;
    }
    if (!chance(_opts.tombstone_ratio)) r.value = make_value();
    size_t n_headers = below(4);
    for (size_t i = 0; i < n_headers; ++i) {
        gen_header h;
        h.key = header_names[below(header_names.size())];
        if (!chance(0.05)) {
            char buf[40];
            std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rand()));
            h.value = buf;
        }
        r.headers.push_back(std::move(h));
    }
    ++_seq;
    return r;
}

} // namespace floe::testkit
