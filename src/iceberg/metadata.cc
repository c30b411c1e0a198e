#include "iceberg/metadata.h"

#include "iceberg/json_util.h"

#include <nlohmann/json.hpp>

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
                              std::map<std::string, std::string> properties) {
    table_metadata m;
    m.table_uuid = std::move(table_uuid);
    m.location = std::move(location);
    m.last_updated_ms = now_ms;
    m.schemas = {floe_table_schema()};
    m.current_schema_id = 0;
    m.last_column_id = floe_table_schema().highest_field_id();
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

std::string to_json_text(const table_metadata& m) {
    ojson j;
    j["format-version"] = m.format_version;
    j["table-uuid"] = m.table_uuid;
    j["location"] = m.location;
    j["last-sequence-number"] = m.last_sequence_number;
    j["last-updated-ms"] = m.last_updated_ms;
    j["last-column-id"] = m.last_column_id;
    j["current-schema-id"] = m.current_schema_id;
    j["schemas"] = ojson::array();
    for (auto& s : m.schemas) j["schemas"].push_back(to_json(s));
    j["default-spec-id"] = m.default_spec_id;
    j["partition-specs"] = ojson::array();
    for (auto& p : m.partition_specs) j["partition-specs"].push_back(to_json(p));
    j["last-partition-id"] = m.last_partition_id;
    j["default-sort-order-id"] = m.default_sort_order_id;
    j["sort-orders"] = ojson::array();
    for (auto& o : m.sort_orders) j["sort-orders"].push_back(to_json(o));
    j["properties"] = ojson::object();
    for (auto& [k, v] : m.properties) j["properties"][k] = v;
    // Java writes -1 for "no current snapshot"; readers accept both forms.
    j["current-snapshot-id"] = m.current_snapshot_id.value_or(-1);
    j["refs"] = ojson::object();
    for (auto& [name, r] : m.refs) {
        ojson rj{{"snapshot-id", r.snapshot_id}, {"type", r.type}};
        if (r.min_snapshots_to_keep) rj["min-snapshots-to-keep"] = *r.min_snapshots_to_keep;
        if (r.max_snapshot_age_ms) rj["max-snapshot-age-ms"] = *r.max_snapshot_age_ms;
        if (r.max_ref_age_ms) rj["max-ref-age-ms"] = *r.max_ref_age_ms;
        j["refs"][name] = std::move(rj);
    }
    j["snapshots"] = ojson::array();
    for (auto& s : m.snapshots) {
        ojson sj;
        sj["sequence-number"] = s.sequence_number;
        sj["snapshot-id"] = s.snapshot_id;
        if (s.parent_snapshot_id) sj["parent-snapshot-id"] = *s.parent_snapshot_id;
        sj["timestamp-ms"] = s.timestamp_ms;
        sj["summary"] = ojson::object();
        // The spec wants "operation" in the summary; write it first like Java does.
        if (auto it = s.summary.find("operation"); it != s.summary.end()) sj["summary"]["operation"] = it->second;
        for (auto& [k, v] : s.summary)
            if (k != "operation") sj["summary"][k] = v;
        sj["manifest-list"] = s.manifest_list;
        if (s.schema_id) sj["schema-id"] = *s.schema_id;
        j["snapshots"].push_back(std::move(sj));
    }
    j["statistics"] = ojson::parse(m.statistics_json, nullptr, false);
    if (j["statistics"].is_discarded()) j["statistics"] = ojson::array();
    j["snapshot-log"] = ojson::array();
    for (auto& e : m.snapshot_log)
        j["snapshot-log"].push_back(ojson{{"timestamp-ms", e.timestamp_ms}, {"snapshot-id", e.snapshot_id}});
    j["metadata-log"] = ojson::array();
    for (auto& e : m.metadata_log)
        j["metadata-log"].push_back(ojson{{"timestamp-ms", e.timestamp_ms}, {"metadata-file", e.metadata_file}});
    return j.dump(2);
}

namespace {

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
        for (auto& sj : *s) {
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
            m.snapshots.push_back(std::move(sn));
        }
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
