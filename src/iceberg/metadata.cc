#include "iceberg/metadata.h"

#include "iceberg/json_util.h"

#include <nlohmann/json.hpp>

#include <iterator>

namespace floe::iceberg {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const schema* table_metadata::current_schema() const noexcept {
    for (auto& s : schemas)
        if (s.schema_id == current_schema_id) return &s;
    return nullptr;
}

const partition_spec* table_metadata::default_spec() const noexcept {
    for (auto& p : partition_specs)
        if (p.spec_id == default_spec_id) return &p;
    return nullptr;
}

const snapshot* table_metadata::find_snapshot(int64_t id) const noexcept {
    for (auto& s : snapshots)
        if (s.snapshot_id == id) return &s;
    return nullptr;
}

const snapshot* table_metadata::current_snapshot() const noexcept {
    return current_snapshot_id ? find_snapshot(*current_snapshot_id) : nullptr;
}

table_metadata new_floe_table(std::string location, std::string table_uuid, int64_t now_ms,
                              std::map<std::string, std::string> properties, const iceberg::schema& schema) {
    table_metadata m;
    m.table_uuid = std::move(table_uuid);
    m.location = std::move(location);
    m.last_updated_ms = now_ms;
    m.schemas = {schema};
    m.schemas[0].schema_id = 0;
    m.current_schema_id = 0;
    m.last_column_id = schema.highest_field_id();
    m.partition_specs = {floe_partition_spec()};
    m.default_spec_id = 0;
    m.last_partition_id = 1000;
    m.sort_orders = {sort_order{0, {}}, floe_sort_order()};
    m.default_sort_order_id = floe_sort_order().order_id;
    m.properties = std::move(properties);
    m.properties.emplace("write.format.default", "parquet");
    m.properties.emplace("write.parquet.compression-codec", "zstd");
    return m;
}

namespace {

// JSON text is written directly, without building a document tree: a table with a long
// history has thousands of snapshot and log entries, and a commit writes all of them.

// The length of the well-formed UTF-8 sequence starting at s[i], or 0.
size_t utf8_sequence(std::string_view s, size_t i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
        return k < s.size() && b(k) >= lo && b(k) <= hi;
    };
    unsigned c = b(i);
    if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;  // no overlongs, no surrogates
        return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
    }
    return 0;
}

// A JSON string literal. Invalid UTF-8 becomes U+FFFD (the text must stay valid JSON).
void put_string(std::string& out, std::string_view s) {
    out.push_back('"');
    size_t i = 0;
    while (i < s.size()) {
        size_t j = i;
        while (j < s.size()) {
            auto c = static_cast<unsigned char>(s[j]);
            if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
            ++j;
        }
        out.append(s.data() + i, j - i);
        if (j == s.size()) break;
        i = j;
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            if (size_t n = utf8_sequence(s, i)) {
                out.append(s.data() + i, n);
                i += n;
            } else {
                out += "\xEF\xBF\xBD";
                ++i;
            }
            continue;
        }
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default: fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        }
        ++i;
    }
    out.push_back('"');
}

void put_int(std::string& out, int64_t v) {
    char buf[24];
    auto r = fmt::format_to_n(buf, sizeof buf, "{}", v);
    out.append(buf, r.out);
}

// `"key":` — keys are literals of this file, plain ASCII.
void put_key(std::string& out, std::string_view key) {
    out.push_back('"');
    out.append(key);
    out += "\":";
}

void put_member(std::string& out, std::string_view key, int64_t v) {
    put_key(out, key);
    put_int(out, v);
    out.push_back(',');
}

void put_member(std::string& out, std::string_view key, std::string_view v) {
    put_key(out, key);
    put_string(out, v);
    out.push_back(',');
}

void put_tree(std::string& out, const ojson& j) {
    out += j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

void put_snapshot(std::string& out, const snapshot& s) {
    out.push_back('{');
    put_member(out, "sequence-number", s.sequence_number);
    put_member(out, "snapshot-id", s.snapshot_id);
    if (s.parent_snapshot_id) put_member(out, "parent-snapshot-id", *s.parent_snapshot_id);
    put_member(out, "timestamp-ms", s.timestamp_ms);
    put_key(out, "summary");
    out.push_back('{');
    bool first = true;
    auto entry = [&](const std::string& k, const std::string& v) {
        if (!first) out.push_back(',');
        first = false;
        put_string(out, k);
        out.push_back(':');
        put_string(out, v);
    };
    // The spec wants "operation" in the summary; write it first like Java does.
    if (auto it = s.summary.find("operation"); it != s.summary.end()) entry(it->first, it->second);
    for (auto& [k, v] : s.summary)
        if (k != "operation") entry(k, v);
    out += "},";
    put_key(out, "manifest-list");
    put_string(out, s.manifest_list);
    if (s.schema_id) {
        out.push_back(',');
        put_key(out, "schema-id");
        put_int(out, *s.schema_id);
    }
    out.push_back('}');
}

void metadata_text(const table_metadata& m, snapshot_json_cache* cache, std::string& out) {
    out.clear();
    size_t snapshot_bytes = 0;
    if (cache) {
        if (cache->texts.size() > m.snapshots.size()) cache->texts.resize(m.snapshots.size());
        for (size_t i = 0; i < m.snapshots.size(); ++i) {
            auto id = m.snapshots[i].snapshot_id;
            if (i == cache->texts.size()) cache->texts.emplace_back(id, std::string());
            auto& [cached_id, text] = cache->texts[i];
            if (cached_id != id || text.empty()) {
                cached_id = id;
                text.clear();
                put_snapshot(text, m.snapshots[i]);
            }
            snapshot_bytes += text.size() + 1;
        }
    } else {
        snapshot_bytes = 400 * m.snapshots.size();
    }
    size_t log_bytes = 80 * m.snapshot_log.size();
    for (auto& e : m.metadata_log) log_bytes += e.metadata_file.size() + 48;
    out.reserve(8192 + snapshot_bytes + log_bytes);
    out.push_back('{');
    put_member(out, "format-version", m.format_version);
    put_member(out, "table-uuid", m.table_uuid);
    put_member(out, "location", m.location);
    put_member(out, "last-sequence-number", m.last_sequence_number);
    put_member(out, "last-updated-ms", m.last_updated_ms);
    put_member(out, "last-column-id", m.last_column_id);
    put_member(out, "current-schema-id", m.current_schema_id);
    put_key(out, "schemas");
    out.push_back('[');
    for (size_t i = 0; i < m.schemas.size(); ++i) {
        if (i) out.push_back(',');
        put_tree(out, to_json(m.schemas[i]));
    }
    out += "],";
    put_member(out, "default-spec-id", m.default_spec_id);
    put_key(out, "partition-specs");
    out.push_back('[');
    for (size_t i = 0; i < m.partition_specs.size(); ++i) {
        if (i) out.push_back(',');
        put_tree(out, to_json(m.partition_specs[i]));
    }
    out += "],";
    put_member(out, "last-partition-id", m.last_partition_id);
    put_member(out, "default-sort-order-id", m.default_sort_order_id);
    put_key(out, "sort-orders");
    out.push_back('[');
    for (size_t i = 0; i < m.sort_orders.size(); ++i) {
        if (i) out.push_back(',');
        put_tree(out, to_json(m.sort_orders[i]));
    }
    out += "],";
    put_key(out, "properties");
    out.push_back('{');
    bool first = true;
    for (auto& [k, v] : m.properties) {
        if (!first) out.push_back(',');
        first = false;
        put_string(out, k);
        out.push_back(':');
        put_string(out, v);
    }
    out += "},";
    // Java writes -1 for "no current snapshot"; readers accept both forms.
    put_member(out, "current-snapshot-id", m.current_snapshot_id.value_or(-1));
    put_key(out, "refs");
    out.push_back('{');
    first = true;
    for (auto& [name, r] : m.refs) {
        if (!first) out.push_back(',');
        first = false;
        put_string(out, name);
        out += ":{";
        put_member(out, "snapshot-id", r.snapshot_id);
        put_key(out, "type");
        put_string(out, r.type);
        auto optional = [&](std::string_view key, std::optional<int64_t> v) {
            if (!v) return;
            out.push_back(',');
            put_key(out, key);
            put_int(out, *v);
        };
        optional("min-snapshots-to-keep", r.min_snapshots_to_keep);
        optional("max-snapshot-age-ms", r.max_snapshot_age_ms);
        optional("max-ref-age-ms", r.max_ref_age_ms);
        out.push_back('}');
    }
    out += "},";
    put_key(out, "snapshots");
    out.push_back('[');
    for (size_t i = 0; i < m.snapshots.size(); ++i) {
        if (i) out.push_back(',');
        if (cache) out += cache->texts[i].second;
        else put_snapshot(out, m.snapshots[i]);
    }
    out += "],";
    put_key(out, "statistics");
    if (m.statistics_json == "[]") {
        out += "[]";
    } else {
        auto stats = ojson::parse(m.statistics_json, nullptr, false);
        if (stats.is_discarded()) stats = ojson::array();
        put_tree(out, stats);
    }
    out.push_back(',');
    put_key(out, "snapshot-log");
    out.push_back('[');
    for (size_t i = 0; i < m.snapshot_log.size(); ++i) {
        if (i) out.push_back(',');
        out.push_back('{');
        put_member(out, "timestamp-ms", m.snapshot_log[i].timestamp_ms);
        put_key(out, "snapshot-id");
        put_int(out, m.snapshot_log[i].snapshot_id);
        out.push_back('}');
    }
    out += "],";
    put_key(out, "metadata-log");
    out.push_back('[');
    for (size_t i = 0; i < m.metadata_log.size(); ++i) {
        if (i) out.push_back(',');
        out.push_back('{');
        put_member(out, "timestamp-ms", m.metadata_log[i].timestamp_ms);
        put_key(out, "metadata-file");
        put_string(out, m.metadata_log[i].metadata_file);
        out.push_back('}');
    }
    out += "]}";
}

} // namespace

std::string to_json_text(const table_metadata& m) {
    std::string out;
    metadata_text(m, nullptr, out);
    return out;
}

std::string to_json_text(const table_metadata& m, snapshot_json_cache& cache) {
    std::string out;
    metadata_text(m, &cache, out);
    return out;
}

void to_json_text(const table_metadata& m, snapshot_json_cache& cache, std::string& out) {
    metadata_text(m, &cache, out);
}

namespace {

result<snapshot> parse_snapshot_object(const json& sj, bool v2) {
    if (!sj.is_object()) return fail(errc::corrupt, "snapshot is not an object");
    snapshot sn;
    sn.snapshot_id = FLOE_TRY_CTX(json_int<int64_t>(sj, "snapshot-id"), "snapshots");
    if (auto p = sj.find("parent-snapshot-id"); p != sj.end() && !p->is_null())
        sn.parent_snapshot_id = FLOE_TRY_CTX(json_int<int64_t>(sj, "parent-snapshot-id"),
                                             "snapshot {}", sn.snapshot_id);
    if (v2)
        sn.sequence_number = FLOE_TRY_CTX(json_int<int64_t>(sj, "sequence-number"),
                                          "snapshot {}", sn.snapshot_id);
    sn.timestamp_ms = FLOE_TRY_CTX(json_int<int64_t>(sj, "timestamp-ms"), "snapshot {}", sn.snapshot_id);
    if (v2 || sj.contains("manifest-list"))
        sn.manifest_list = FLOE_TRY_CTX(json_string(sj, "manifest-list"), "snapshot {}", sn.snapshot_id);
    if (v2 || sj.contains("summary")) {
        auto sum = sj.find("summary");
        if (sum == sj.end() || !sum->is_object())
            return fail(errc::corrupt, "snapshot {}: missing required field \"summary\"", sn.snapshot_id);
        for (auto& [k, v] : sum->items()) {
            if (!v.is_string())
                return fail(errc::corrupt, "snapshot {}: summary {} is not a string", sn.snapshot_id, k);
            sn.summary[k] = v.get<std::string>();
        }
        if (v2 && !sn.summary.count("operation"))
            return fail(errc::corrupt, "snapshot {}: summary without \"operation\"", sn.snapshot_id);
    }
    if (sj.contains("schema-id")) sn.schema_id = FLOE_TRY(json_int<int32_t>(sj, "schema-id"));
    return sn;
}

result<table_metadata> parse_object(const json& j) {
    if (!j.is_object()) return fail(errc::corrupt, "metadata is not a JSON object");
    table_metadata m;
    m.format_version = FLOE_TRY(json_int<int>(j, "format-version"));
    if (m.format_version < 1 || m.format_version > 2)
        return fail(errc::unsupported, "format-version {}", m.format_version);
    bool v2 = m.format_version == 2;
    if (v2 || j.contains("table-uuid")) m.table_uuid = FLOE_TRY(json_string(j, "table-uuid"));
    m.location = FLOE_TRY(json_string(j, "location"));
    if (v2) m.last_sequence_number = FLOE_TRY(json_int<int64_t>(j, "last-sequence-number"));
    m.last_updated_ms = FLOE_TRY(json_int<int64_t>(j, "last-updated-ms"));
    m.last_column_id = FLOE_TRY(json_int<int32_t>(j, "last-column-id"));

    if (v2 || j.contains("schemas")) {
        for (auto& s : *FLOE_TRY(json_array(j, "schemas")))
            m.schemas.push_back(FLOE_TRY_CTX(schema_from_json(s), "schemas"));
        m.current_schema_id = FLOE_TRY(json_int<int32_t>(j, "current-schema-id"));
    } else {
        if (!j.contains("schema")) return fail(errc::corrupt, "missing required field \"schemas\"");
        m.schemas.push_back(FLOE_TRY_CTX(schema_from_json(j["schema"]), "schema"));
        m.current_schema_id = m.schemas[0].schema_id;
    }
    if (!m.current_schema())
        return fail(errc::corrupt, "current-schema-id {} names no schema", m.current_schema_id);

    if (v2 || j.contains("partition-specs")) {
        for (auto& p : *FLOE_TRY(json_array(j, "partition-specs")))
            m.partition_specs.push_back(FLOE_TRY_CTX(partition_spec_from_json(p), "partition-specs"));
        m.default_spec_id = FLOE_TRY(json_int<int32_t>(j, "default-spec-id"));
    } else {
        return fail(errc::unsupported, "v1 metadata without partition-specs");
    }
    if (!m.default_spec()) return fail(errc::corrupt, "default-spec-id {} names no spec", m.default_spec_id);
    if (v2 || j.contains("last-partition-id"))
        m.last_partition_id = FLOE_TRY(json_int<int32_t>(j, "last-partition-id"));

    if (v2 || j.contains("sort-orders")) {
        for (auto& o : *FLOE_TRY(json_array(j, "sort-orders")))
            m.sort_orders.push_back(FLOE_TRY_CTX(sort_order_from_json(o), "sort-orders"));
        m.default_sort_order_id = FLOE_TRY(json_int<int32_t>(j, "default-sort-order-id"));
        bool found = false;
        for (auto& o : m.sort_orders) found |= o.order_id == m.default_sort_order_id;
        if (!found)
            return fail(errc::corrupt, "default-sort-order-id {} names no sort order", m.default_sort_order_id);
    }

    if (auto p = j.find("properties"); p != j.end()) {
        if (!p->is_object()) return fail(errc::corrupt, "field \"properties\" is not an object");
        for (auto& [k, v] : p->items()) {
            if (!v.is_string()) return fail(errc::corrupt, "property {} is not a string", k);
            m.properties[k] = v.get<std::string>();
        }
    }
    if (auto s = j.find("snapshots"); s != j.end()) {
        if (!s->is_array()) return fail(errc::corrupt, "field \"snapshots\" is not an array");
        for (auto& sj : *s) m.snapshots.push_back(FLOE_TRY(parse_snapshot(sj, v2)));
    }
    if (auto c = j.find("current-snapshot-id"); c != j.end() && !c->is_null()) {
        auto id = FLOE_TRY(json_int<int64_t>(j, "current-snapshot-id"));
        if (id != -1) {
            if (!m.find_snapshot(id))
                return fail(errc::corrupt, "current-snapshot-id {} names no snapshot", id);
            m.current_snapshot_id = id;
        }
    }
    if (auto r = j.find("refs"); r != j.end()) {
        if (!r->is_object()) return fail(errc::corrupt, "field \"refs\" is not an object");
        for (auto& [name, rj] : r->items()) {
            snapshot_ref ref;
            ref.snapshot_id = FLOE_TRY_CTX(json_int<int64_t>(rj, "snapshot-id"), "ref {}", name);
            ref.type = FLOE_TRY_CTX(json_string(rj, "type"), "ref {}", name);
            if (rj.contains("min-snapshots-to-keep"))
                ref.min_snapshots_to_keep = FLOE_TRY(json_int<int32_t>(rj, "min-snapshots-to-keep"));
            if (rj.contains("max-snapshot-age-ms"))
                ref.max_snapshot_age_ms = FLOE_TRY(json_int<int64_t>(rj, "max-snapshot-age-ms"));
            if (rj.contains("max-ref-age-ms"))
                ref.max_ref_age_ms = FLOE_TRY(json_int<int64_t>(rj, "max-ref-age-ms"));
            if (!m.find_snapshot(ref.snapshot_id))
                return fail(errc::corrupt, "ref {} names unknown snapshot {}", name, ref.snapshot_id);
            m.refs[name] = ref;
        }
    } else if (m.current_snapshot_id) {
        m.refs["main"] = snapshot_ref{*m.current_snapshot_id, "branch", {}, {}, {}};
    }
    if (auto it = m.refs.find("main"); it != m.refs.end() && it->second.snapshot_id != m.current_snapshot_id)
        return fail(errc::corrupt, "refs.main ({}) differs from current-snapshot-id", it->second.snapshot_id);
    if (auto s = j.find("statistics"); s != j.end()) m.statistics_json = s->dump();
    if (auto l = j.find("snapshot-log"); l != j.end()) {
        if (!l->is_array()) return fail(errc::corrupt, "field \"snapshot-log\" is not an array");
        for (auto& e : *l)
            m.snapshot_log.push_back({FLOE_TRY_CTX(json_int<int64_t>(e, "timestamp-ms"), "snapshot-log"),
                                      FLOE_TRY_CTX(json_int<int64_t>(e, "snapshot-id"), "snapshot-log")});
    }
    if (auto l = j.find("metadata-log"); l != j.end()) {
        if (!l->is_array()) return fail(errc::corrupt, "field \"metadata-log\" is not an array");
        for (auto& e : *l)
            m.metadata_log.push_back({FLOE_TRY_CTX(json_int<int64_t>(e, "timestamp-ms"), "metadata-log"),
                                      FLOE_TRY_CTX(json_string(e, "metadata-file"), "metadata-log")});
    }
    return m;
}

} // namespace

result<snapshot> parse_snapshot(const nlohmann::json& j, bool v2) {
    try {
        return parse_snapshot_object(j, v2);
    } catch (const json::exception& e) {
        return fail(errc::corrupt, "snapshot JSON: {}", e.what());
    }
}

result<table_metadata> parse_metadata_object(const nlohmann::json& j) {
    try {
        return parse_object(j);
    } catch (const json::exception& e) {
        return fail(errc::corrupt, "metadata JSON: {}", e.what());
    }
}

std::string to_json_text(const snapshot& s) {
    std::string out;
    put_snapshot(out, s);
    return out;
}

result<table_metadata> parse_metadata(std::string_view text) {
    // nlohmann recurses while parsing; refuse absurd nesting first.
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_str) {
            if (c == '\\') ++i;
            else if (c == '"') in_str = false;
        } else if (c == '"') in_str = true;
        else if (c == '{' || c == '[') {
            if (++depth > 128) return fail(errc::corrupt, "metadata JSON nested deeper than 128 levels");
        } else if (c == '}' || c == ']') --depth;
    }
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return fail(errc::corrupt, "metadata is not valid JSON");
    try {
        return parse_object(j);
    } catch (const json::exception& e) {
        return fail(errc::corrupt, "metadata JSON: {}", e.what());
    }
}

} // namespace floe::iceberg
