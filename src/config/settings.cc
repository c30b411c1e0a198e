#include "config/settings.h"

#include "config/units.h"

#include "base/suggest.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

namespace floe::config {

namespace {
/// " (did you mean 'x'?)" for a mistyped name among `names`: the nearest within a few edits
/// (more for longer names), else (with a separator) the one name ending with the same last
/// segment ("floe.tick-interval" -> "floe.storage.worker.tick-interval"); "" when nothing fits.
std::string did_you_mean(std::string_view typed, const std::vector<std::string_view>& names, char sep) {
    auto near = nearest_name(typed, names, std::max<size_t>(2, typed.size() / 5));
    if (!near && sep) {
        auto cut = typed.rfind(sep);
        std::string_view tail = cut == std::string_view::npos ? std::string_view() : typed.substr(cut); // ".tick-interval"
        if (tail.size() > 4) {
            for (auto n : names)
                if (n.ends_with(tail)) {
                    if (near) return {}; // more than one: no guess
                    near = std::string(n);
                }
        }
    }
    return near ? fmt::format(" (did you mean '{}'?)", *near) : std::string();
}

std::string did_you_mean_setting(std::string_view typed) {
    std::vector<std::string_view> names;
    for (auto& d : registry::instance().all()) names.push_back(d.name);
    return did_you_mean(typed, names, '.');
}
} // namespace

std::string value_source::describe() const {
    switch (kind) {
    case source_kind::builtin: return "default";
    case source_kind::derived: return "default (from " + origin + ")";
    case source_kind::file: return "file " + origin;
    case source_kind::env: return "env " + origin;
    case source_kind::cli: return "--set";
    }
    return "?";
}

result<std::string> validate(const setting_def& def, std::string_view text) {
    auto check_bounds = [&](int64_t v, std::string shown) -> result<void> {
        if (v < def.min || v > def.max) {
            auto fmt_bound = [&](int64_t b) {
                if (def.type == setting_type::size) return format_size(b);
                if (def.type == setting_type::duration)
                    return format_duration(std::chrono::milliseconds(b));
                return std::to_string(b);
            };
            if (def.max == INT64_MAX)
                return fail(errc::invalid_argument, "{} is below the minimum {}", shown, fmt_bound(def.min));
            return fail(errc::invalid_argument, "{} is outside {}..{}", shown, fmt_bound(def.min),
                        fmt_bound(def.max));
        }
        return {};
    };
    switch (def.type) {
    case setting_type::string:
        if (text.empty()) return fail(errc::invalid_argument, "the value is empty");
        return std::string(text);
    case setting_type::boolean: return std::string(FLOE_TRY(parse_bool(text)) ? "true" : "false");
    case setting_type::integer: {
        auto v = FLOE_TRY(parse_int(text));
        FLOE_TRY(check_bounds(v, std::to_string(v)));
        return std::to_string(v);
    }
    case setting_type::size: {
        auto v = FLOE_TRY(parse_size(text));
        FLOE_TRY(check_bounds(v, fmt::format("size '{}'", text)));
        return std::to_string(v);
    }
    case setting_type::duration: {
        auto v = FLOE_TRY(parse_duration(text));
        FLOE_TRY(check_bounds(v.count(), fmt::format("duration '{}'", text)));
        return std::to_string(v.count());
    }
    case setting_type::choice:
        if (std::find(def.choices.begin(), def.choices.end(), text) == def.choices.end())
            return fail(errc::invalid_argument, "'{}' is not one of {}", text,
                        fmt::join(def.choices, ", "));
        return std::string(text);
    case setting_type::address: return FLOE_TRY(parse_host_port(text)).to_string();
    case setting_type::uri:
        if (!text.starts_with("file://") && !text.starts_with("s3://"))
            return fail(errc::invalid_argument, "'{}' must start with file:// or s3://", text);
        return std::string(text);
    }
    return fail(errc::internal, "unknown setting type");
}

settings settings::defaults() {
    settings s;
    for (auto& d : registry::instance().all()) {
        entry e{&d, std::nullopt, {source_kind::builtin, ""}};
        if (!d.default_text.empty()) {
            auto v = validate(d, d.default_text);
            FLOE_ASSERT(v.has_value(), "a built-in default fails its own validation");
            e.text = *v;
        }
        s._entries.push_back(std::move(e));
    }
    return s;
}

namespace {
// Keys of an ingest source, by source type ("" = any type). librdkafka.<property> is passed
// through to the Kafka source's client unchecked (librdkafka itself refuses unknown ones).
struct ingest_key {
    std::string_view key;
    std::string_view for_type;
};
constexpr ingest_key ingest_keys[] = {
    {"type", ""},
    {"bootstrap-servers", "kafka"}, {"topics", "kafka"}, {"group-id", "kafka"},
    {"start", "kafka"}, {"topic-prefix", ""},
    {"url", "jetstream"}, {"user", "jetstream"}, {"password", "jetstream"},
    {"token", "jetstream"}, {"creds-file", "jetstream"}, {"stream", "jetstream"},
    {"streams", "jetstream"},
    {"filter-subject", "jetstream"}, {"topic", "jetstream"}, {"mode", "jetstream"},
    {"max-age", ""}, {"max-messages", ""}, {"max-bytes", ""}, {"idle-seal", ""},
    {"max-local-bytes", ""}, {"remote-storage", ""},
};
constexpr std::string_view librdkafka_prefix = "librdkafka.";
// overrides.<stream>.<key>: a JetStream source's settings for one of its streams.
constexpr std::string_view overrides_prefix = "overrides.";
constexpr std::string_view overridable_keys[] = {"mode", "max-age", "max-messages", "max-bytes", "idle-seal",
                                                 "max-local-bytes", "filter-subject", "topic", "remote-storage"};

// "overrides.<stream>.<key>" -> {stream, key}; empty when not of that shape (a NATS stream name
// has no '.').
std::pair<std::string_view, std::string_view> split_override(std::string_view key) {
    if (!key.starts_with(overrides_prefix)) return {};
    auto rest = key.substr(overrides_prefix.size());
    auto dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return {};
    return {rest.substr(0, dot), rest.substr(dot + 1)};
}

std::string_view ingest_key_type(std::string_view key) {
    if (key.starts_with(librdkafka_prefix) && key.size() > librdkafka_prefix.size()) return "kafka";
    if (auto [stream, k] = split_override(key); !stream.empty()) {
        for (auto o : overridable_keys)
            if (o == k) return "jetstream";
        return {};
    }
    for (auto& k : ingest_keys)
        if (k.key == key) return k.for_type.empty() ? std::string_view("any") : k.for_type;
    return {};
}
} // namespace

std::string settings::ingest_source::get(std::string_view key, std::string_view fallback) const {
    auto it = values.find(std::string(key));
    return it != values.end() ? it->second : std::string(fallback);
}

result<void> settings::set_ingest(std::string_view name, std::string_view text, value_source source) {
    auto rest = name.substr(registry::ingest_sources_prefix.size());
    auto dot = rest.find('.');
    auto src = rest.substr(0, dot);
    auto key = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    bool name_ok = !src.empty() && src.size() <= 100
                   && std::all_of(src.begin(), src.end(), [](char c) {
                          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
                      });
    if (!name_ok || key.empty())
        return fail(errc::invalid_argument,
                    "invalid setting '{}' in {}: ingest sources are floe.ingest.sources.<name>.<key> "
                    "with a name of letters, digits, '-' and '_'",
                    name, source.describe());
    if (ingest_key_type(key).empty())
        return fail(errc::invalid_argument,
                    "unknown setting '{}' in {}: an ingest source takes type, remote-storage, max-age, "
                    "max-messages, max-bytes, idle-seal, max-local-bytes, then bootstrap-servers, topics, group-id, start, "
                    "topic-prefix, librdkafka.<property> (kafka) or url, user, password, token, creds-file, "
                    "stream, streams, filter-subject, topic, mode, overrides.<stream>.<key> (jetstream; a "
                    "stream's overrides take mode, max-age, max-messages, max-bytes, idle-seal, max-local-bytes, "
                    "filter-subject, topic, remote-storage)",
                    name, source.describe());
    auto bad = [&](std::string_view why) {
        return fail(errc::invalid_argument, "invalid value for '{}' in {}: '{}' {}", name,
                    source.describe(), text, why);
    };
    // A stream's override is checked as the key it overrides.
    if (auto [stream, k] = split_override(key); !stream.empty()) key = k;
    if (key == "type" && text != "kafka" && text != "jetstream") return bad("is not one of kafka, jetstream");
    if (key == "start" && text != "earliest" && text != "latest") return bad("is not one of earliest, latest");
    if (key == "mode" && text != "duplicate" && text != "offload") return bad("is not one of duplicate, offload");
    if (key == "remote-storage" && text != "true" && text != "false") return bad("is not one of true, false");
    // The seal thresholds take 0: land every message in Iceberg as soon as it arrives.
    if (key == "max-local-bytes" && (!parse_size(text) || *parse_size(text) <= 0))
        return bad("is not a positive size (e.g. 64MiB)");
    if (key == "max-bytes" && (!parse_size(text) || *parse_size(text) < 0))
        return bad("is not a size (e.g. 64MiB, or 0: every message at once)");
    if (key == "max-messages" && (!parse_int(text) || *parse_int(text) < 0))
        return bad("is not a count (or 0: every message at once)");
    if (key == "max-age" && (!parse_duration(text) || parse_duration(text)->count() < 0))
        return bad("is not a duration (e.g. 1s, 500ms, or 0: every message at once)");
    if (key == "idle-seal" && (!parse_duration(text) || parse_duration(text)->count() < 0))
        return bad("is not a duration (e.g. 200ms, or 0: as soon as the source has nothing more)");
    if ((key == "bootstrap-servers" || key == "topics" || key == "url" || key == "stream" || key == "streams")
        && text.empty())
        return bad("must not be empty");
    if (key == "topic-prefix" && !text.empty()
        && !std::all_of(text.begin(), text.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
           }))
        return bad("is not a valid topic name prefix ([a-zA-Z0-9._-])");
    auto full_key = std::string(rest.substr(dot + 1));
    auto& e = _ingest[std::string(src)];
    e.name = std::string(src);
    e.values[full_key] = std::string(text);
    e.sources[full_key] = std::move(source);
    return {};
}

// Whole-source checks, once every source of settings was applied.
result<void> settings::check_ingest_sources() const {
    for (auto& [n, src] : _ingest) {
        auto prefix = fmt::format("{}{}.", registry::ingest_sources_prefix, n);
        auto type = src.get("type");
        if (type.empty())
            return fail(errc::invalid_argument, "ingest source '{}' has no type: set {}type to kafka", n, prefix);
        for (auto& [k, v] : src.values) {
            auto t = ingest_key_type(k);
            if (t != "any" && t != type)
                return fail(errc::invalid_argument, "setting '{}{}' ({}) is for {} sources, but source '{}' is {}",
                            prefix, k, src.sources.at(k).describe(), t, n, type);
        }
        if (src.get("mode") == "offload" && src.get("remote-storage") == "false")
            return fail(errc::invalid_argument,
                        "ingest source '{}': {}mode=offload removes from NATS what Iceberg holds, and "
                        "{}remote-storage=false keeps the mirror out of Iceberg; drop one",
                        n, prefix, prefix);
        if (type == "jetstream") {
            if (src.get("url").empty())
                return fail(errc::invalid_argument, "jetstream ingest source '{}' needs {}url", n, prefix);
            const bool one = !src.get("stream").empty(), many = !src.get("streams").empty();
            if (one == many)
                return fail(errc::invalid_argument,
                            "jetstream ingest source '{}' needs {}stream (one stream) or {}streams (a list, a ^regex, "
                            "or * for all), not {}",
                            n, prefix, prefix, one ? "both" : "neither");
            for (auto& [k, v] : src.values) {
                auto [stream, key] = split_override(k);
                if (!stream.empty() && key == "mode" && v == "offload"
                    && src.get(fmt::format("overrides.{}.remote-storage", stream)) == "false")
                    return fail(errc::invalid_argument,
                                "ingest source '{}': {}{} with {}overrides.{}.remote-storage=false: offload removes "
                                "from NATS what Iceberg holds; drop one",
                                n, prefix, k, prefix, stream);
            }
            continue;
        }
        for (auto req : {"bootstrap-servers", "topics"})
            if (src.get(req).empty())
                return fail(errc::invalid_argument, "kafka ingest source '{}' needs {}{}", n, prefix, req);
    }
    return {};
}

result<void> settings::set(std::string_view name, std::string_view text, value_source source) {
    if (name.starts_with(registry::ingest_sources_prefix)) return set_ingest(name, text, std::move(source));
    if (name.starts_with(catalog_headers_prefix)) {
        auto header = name.substr(catalog_headers_prefix.size());
        auto token_char = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
        };
        if (header.empty() || !std::all_of(header.begin(), header.end(), token_char))
            return fail(errc::invalid_argument, "setting '{}' in {}: '{}' is not an HTTP header name", name,
                        source.describe(), header);
        if (text.find_first_of("\r\n") != std::string_view::npos)
            return fail(errc::invalid_argument, "setting '{}' in {}: a header value is one line", name, source.describe());
        _catalog_headers[std::string(header)] = std::string(text);
        return {};
    }
    auto it = std::find_if(_entries.begin(), _entries.end(),
                           [&](auto& e) { return e.def->name == name; });
    if (it == _entries.end()) {
        std::string hint;
        if (name.starts_with(registry::topic_defaults_prefix))
            hint = " (topic defaults take Kafka topic config names, e.g. floe.topic-defaults.segment.ms)";
        else if (!name.starts_with("floe."))
            hint = " (setting names start with 'floe.')";
        hint = did_you_mean_setting(name) + hint;
        return fail(errc::invalid_argument, "unknown setting '{}' in {}{}; `floe --help` lists them",
                    name, source.describe(), hint);
    }
    auto v = validate(*it->def, text);
    if (!v)
        return fail(errc::invalid_argument, "invalid value for '{}' in {}: {} (expected {})", name,
                    source.describe(), v.error().message(), to_string(it->def->type));
    it->text = std::move(*v);
    it->source = std::move(source);
    return {};
}

result<void> settings::resolve_derived() {
    FLOE_TRY(check_ingest_sources());
    auto data_dir = std::filesystem::absolute(get_string("floe.data-dir")).lexically_normal().string();
    if (data_dir.size() > 1 && data_dir.back() == '/') data_dir.pop_back();
    for (auto& e : _entries) {
        if (e.text || e.def->derived_from.empty()) continue;
        const auto& n = e.def->name;
        if (n == "floe.kafka.advertised-listener") e.text = get_string("floe.kafka.listen");
        else if (n == "floe.storage.remote.path") e.text = "file://" + data_dir + "/warehouse";
        else if (n == "floe.storage.remote.catalog.uri") e.text = "sqlite://" + data_dir + "/catalog.db";
        else FLOE_ASSERT(false, "derived setting without a rule");
        e.source = {source_kind::derived, e.def->derived_from};
    }
    // The catalog URI must fit the catalog type.
    auto type = get_string("floe.storage.remote.catalog.type");
    auto uri = get_string("floe.storage.remote.catalog.uri");
    if (type == "sql" && !uri.starts_with("sqlite://") && !uri.starts_with("postgresql://")
        && !uri.starts_with("postgres://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.catalog.uri '{}' does not fit catalog type sql: use "
                    "sqlite://<path> or postgresql://...",
                    uri);
    // Static S3 keys come as a pair; an endpoint is a URL.
    if (get_optional("floe.storage.remote.s3.access-key-id").has_value()
        != get_optional("floe.storage.remote.s3.secret-access-key").has_value())
        return fail(errc::invalid_argument,
                    "floe.storage.remote.s3.access-key-id and floe.storage.remote.s3.secret-access-key must be "
                    "set together (or neither, to use the AWS credential chain)");
    if (auto ep = get_optional("floe.storage.remote.s3.endpoint");
        ep && !ep->starts_with("http://") && !ep->starts_with("https://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.s3.endpoint '{}' must start with http:// or https://", *ep);
    if ((type == "rest" || type == "nessie") && !uri.starts_with("http://") && !uri.starts_with("https://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.catalog.uri '{}' does not fit catalog type {}: use http(s)://", uri,
                    type);
    if (type == "hive" && !uri.starts_with("thrift://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.catalog.uri '{}' does not fit catalog type hive: use thrift://host:9083", uri);
    if (auto ep = get_optional("floe.storage.remote.catalog.glue.endpoint");
        ep && !ep->starts_with("http://") && !ep->starts_with("https://"))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.catalog.glue.endpoint '{}' must start with http:// or https://", *ep);
    if (auto ep = get_optional("floe.aws.sts-endpoint");
        ep && !ep->starts_with("http://") && !ep->starts_with("https://"))
        return fail(errc::invalid_argument, "floe.aws.sts-endpoint '{}' must start with http:// or https://", *ep);
    // Encryption: the chosen provider has what it needs; a topic default asking for encryption
    // has a provider. (The keyring file itself is read and checked when the provider opens.)
    auto provider = get_optional("floe.encryption.provider");
    if (provider == "keyring" && !get_optional("floe.encryption.keyring-file"))
        return fail(errc::invalid_argument,
                    "floe.encryption.provider=keyring needs floe.encryption.keyring-file (the owner-only JSON "
                    "key file)");
    if (provider == "aws-kms" && !get_optional("floe.encryption.kms.key-id"))
        return fail(errc::invalid_argument,
                    "floe.encryption.provider=aws-kms needs floe.encryption.kms.key-id (a KMS key id, key ARN or "
                    "alias/<name>)");
    if (auto ep = get_optional("floe.encryption.kms.endpoint");
        ep && !ep->starts_with("http://") && !ep->starts_with("https://"))
        return fail(errc::invalid_argument,
                    "floe.encryption.kms.endpoint '{}' must start with http:// or https://", *ep);
    if (auto enc = get_string(std::string(registry::topic_defaults_prefix) + "floe.iceberg.encryption");
        enc != "none" && !provider)
        return fail(errc::invalid_argument,
                    "floe.topic-defaults.floe.iceberg.encryption={} needs a key provider: set "
                    "floe.encryption.provider (keyring or aws-kms)",
                    enc);
    if (get_bool("floe.storage.remote.catalog.rest.sigv4.enabled")
        && (get_optional("floe.storage.remote.catalog.token") || get_optional("floe.storage.remote.catalog.credential")))
        return fail(errc::invalid_argument,
                    "floe.storage.remote.catalog.rest.sigv4.enabled=true signs requests with AWS credentials: "
                    "leave floe.storage.remote.catalog.token and .credential unset");
    if (get_string("floe.storage.remote.catalog.rest.sigv4.signing-name").empty())
        return fail(errc::invalid_argument, "floe.storage.remote.catalog.rest.sigv4.signing-name is empty");
    if (get_optional("floe.aws.external-id") && !get_optional("floe.aws.role-arn"))
        return fail(errc::invalid_argument, "floe.aws.external-id needs floe.aws.role-arn");
    if (get_string("floe.storage.remote.catalog.ref").empty())
        return fail(errc::invalid_argument, "floe.storage.remote.catalog.ref is empty (a branch name, e.g. main)");
    return {};
}

const settings::entry& settings::find_entry(std::string_view name, setting_type type) const {
    auto it = std::find_if(_entries.begin(), _entries.end(),
                           [&](auto& e) { return e.def->name == name; });
    FLOE_ASSERT(it != _entries.end(), "setting read by a name that is not registered");
    FLOE_ASSERT(it->def->type == type, "setting read with the wrong type");
    return *it;
}

const std::string& settings::get_string(std::string_view name) const {
    auto* d = registry::instance().find(name);
    FLOE_ASSERT(d != nullptr, "setting read by a name that is not registered");
    auto& e = find_entry(name, d->type);
    FLOE_ASSERT(e.text.has_value(), "required setting read before it was resolved");
    return *e.text;
}
std::optional<std::string> settings::get_optional(std::string_view name) const {
    auto* d = registry::instance().find(name);
    FLOE_ASSERT(d != nullptr, "setting read by a name that is not registered");
    return find_entry(name, d->type).text;
}
bool settings::get_bool(std::string_view name) const {
    return *find_entry(name, setting_type::boolean).text == "true";
}
int64_t settings::get_int(std::string_view name) const {
    return std::stoll(*find_entry(name, setting_type::integer).text);
}
int64_t settings::get_size(std::string_view name) const {
    return std::stoll(*find_entry(name, setting_type::size).text);
}
std::chrono::milliseconds settings::get_duration(std::string_view name) const {
    return std::chrono::milliseconds(std::stoll(*find_entry(name, setting_type::duration).text));
}
host_port settings::get_address(std::string_view name) const {
    auto hp = parse_host_port(*find_entry(name, setting_type::address).text);
    FLOE_ASSERT(hp.has_value(), "validated address fails to parse");
    return *hp;
}

std::map<std::string, std::string> settings::topic_defaults(bool overridden_only) const {
    std::map<std::string, std::string> out;
    for (auto& e : _entries)
        if (e.def->name.starts_with(registry::topic_defaults_prefix) && e.text
            && (!overridden_only || e.source.kind != source_kind::builtin))
            out[e.def->name.substr(registry::topic_defaults_prefix.size())] = *e.text;
    return out;
}

namespace {

/// Flattens nested YAML maps into dotted keys, keeping each scalar's line for error messages.
result<void> flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
                     std::vector<std::tuple<std::string, std::string, int>>& out, int depth) {
    if (depth > 16) return fail(errc::invalid_argument, "{}: nesting deeper than 16 levels", file);
    if (node.IsMap()) {
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (!it->first.IsScalar())
                return fail(errc::invalid_argument, "{}:{}: keys must be plain names", file,
                            it->first.Mark().line + 1);
            auto key = prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar();
            FLOE_TRY(flatten(it->second, key, file, out, depth + 1));
        }
        return {};
    }
    int line = node.Mark().line + 1;
    if (node.IsScalar()) {
        out.emplace_back(prefix, node.Scalar(), line);
        return {};
    }
    if (node.IsNull())
        return fail(errc::invalid_argument, "{}:{}: setting '{}' has no value", file, line, prefix);
    // Under an ingest source, a list of plain values is the comma list the key takes (`topics`,
    // `streams`); every other setting is one value.
    if (node.IsSequence() && node.size() > 0 && prefix.starts_with(registry::ingest_sources_prefix)
        && std::all_of(node.begin(), node.end(), [](const YAML::Node& n) { return n.IsScalar(); })) {
        std::string joined;
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (it->Scalar().find(',') != std::string::npos)
                return fail(errc::invalid_argument, "{}:{}: setting '{}': a list item holds a comma", file, line,
                            prefix);
            if (!joined.empty()) joined += ',';
            joined += it->Scalar();
        }
        out.emplace_back(prefix, std::move(joined), line);
        return {};
    }
    return fail(errc::invalid_argument, "{}:{}: setting '{}' must be a single value, not a list",
                file, line, prefix);
}

result<void> load_file(settings& s, const std::string& path) {
    std::vector<std::tuple<std::string, std::string, int>> values;
    try {
        YAML::Node root = YAML::LoadFile(path);
        if (root.IsNull()) return {}; // an empty file sets nothing
        if (!root.IsMap())
            return fail(errc::invalid_argument, "{}: expected a map of settings at the top level", path);
        FLOE_TRY(flatten(root, "", path, values, 0));
    } catch (const YAML::BadFile&) {
        return fail(errc::not_found, "cannot read config file {}", path);
    } catch (const YAML::Exception& e) {
        return fail(errc::invalid_argument, "{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg);
    }
    for (auto& [key, value, line] : values)
        FLOE_TRY(s.set(key, value, {source_kind::file, fmt::format("{}:{}", path, line)}));
    return {};
}

result<void> load_env(settings& s, std::span<char* const> env) {
    for (char* kv : env) {
        if (kv == nullptr) break;
        std::string_view entry(kv);
        if (!entry.starts_with("FLOE_")) continue;
        auto eq = entry.find('=');
        auto name = entry.substr(0, eq);
        auto value = eq == std::string_view::npos ? std::string_view() : entry.substr(eq + 1);
        const setting_def* match = nullptr;
        for (auto& d : registry::instance().all())
            if (d.env_name() == name) match = &d;
        if (!match) {
            std::vector<std::string> env_names;
            for (auto& d : registry::instance().all()) env_names.push_back(d.env_name());
            std::vector<std::string_view> views(env_names.begin(), env_names.end());
            auto mean = did_you_mean(name, views, 0); // '_' stands for '.' and '-': no tail rule
            return fail(errc::invalid_argument,
                        "unknown setting in environment variable {}{}: no setting maps to it "
                        "(floe.storage.remote.path is FLOE_STORAGE_REMOTE_PATH); unset it",
                        name, mean);
        }
        FLOE_TRY(s.set(match->name, value, {source_kind::env, std::string(name)}));
    }
    return {};
}

} // namespace

result<settings> load(const load_options& opts) {
    auto s = settings::defaults();
    if (opts.config_path) {
        if (!std::filesystem::exists(*opts.config_path))
            return fail(errc::not_found, "config file {} (given by --config) does not exist",
                        *opts.config_path);
        FLOE_TRY(load_file(s, *opts.config_path));
    } else if (std::filesystem::exists(opts.default_config_path)) {
        FLOE_TRY(load_file(s, opts.default_config_path));
    }
    FLOE_TRY(load_env(s, opts.environment));
    for (auto& o : opts.overrides) {
        auto eq = o.find('=');
        if (eq == std::string::npos || eq == 0)
            return fail(errc::invalid_argument, "--set '{}' must be key=value", o);
        FLOE_TRY(s.set(std::string_view(o).substr(0, eq), std::string_view(o).substr(eq + 1),
                       {source_kind::cli, "--set"}));
    }
    FLOE_TRY(s.resolve_derived());
    return s;
}

} // namespace floe::config
