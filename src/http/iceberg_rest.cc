#include "http/iceberg_rest.h"

#include "http/admin.h"
#include "aws/sigv4.h"
#include "iceberg/json_util.h"
#include "iceberg/metadata.h"
#include "iceberg/metadata_cache.h"
#include "iceberg/table.h"
#include "base/clock.h"
#include "base/uuid.h"
#include "lake/iceberg_lake.h"
#include "lake/table_writer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace floe::http {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

response iceberg_error(int status, std::string_view type, std::string_view message) {
    ojson j;
    j["error"]["message"] = std::string(message);
    j["error"]["type"] = std::string(type);
    j["error"]["code"] = status;
    return response::json(status, j.dump(-1, ' ', false, ojson::error_handler_t::replace));
}

response iceberg_forbidden(const request& r, acl_op op, acl_type type, std::string_view name) {
    return iceberg_error(403, "ForbiddenException",
                         fmt::format("{} may not {} {} '{}'", r.principal.empty() ? "User:ANONYMOUS" : r.principal,
                                     to_string(op), to_string(type), name));
}

namespace {

/// A request that cannot go on: the status and the spec's exception type with the reason.
struct refusal {
    int status;
    std::string type;
    std::string message;
};

response to_response(const refusal& r) { return iceberg_error(r.status, r.type, r.message); }

/// Maps a Floe error to the spec's status and exception type.
refusal from_error(const error& e, std::string_view not_found_type = "NoSuchTableException") {
    switch (e.code()) {
    case errc::not_found: return {404, std::string(not_found_type), e.message()};
    case errc::already_exists: return {409, "AlreadyExistsException", e.message()};
    case errc::conflict: return {409, "CommitFailedException", e.message()};
    case errc::invalid_argument:
    case errc::corrupt: return {400, "BadRequestException", e.message()};
    case errc::unsupported: return {400, "BadRequestException", e.message()};
    case errc::unavailable: return {503, "ServiceUnavailableException", e.message()};
    default: return {500, "ServerErrorException", e.message()};
    }
}

std::string decode_segment(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        auto hex = [](char c) -> int {
            if (c >= '0' && c <= '9') return c - '0';
            if (c >= 'a' && c <= 'f') return c - 'a' + 10;
            if (c >= 'A' && c <= 'F') return c - 'A' + 10;
            return -1;
        };
        if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += s[i];
        }
    }
    return out;
}

/// A namespace path parameter: levels joined by 0x1F (the spec's default separator). Floe's
/// catalogs keep one-level names; more levels are joined with '.', as the JDBC catalog does.
std::string namespace_name(std::string_view decoded) {
    std::string out(decoded);
    std::replace(out.begin(), out.end(), '\x1f', '.');
    return out;
}

ojson namespace_json(const std::string& ns) {
    ojson a = ojson::array();
    size_t start = 0;
    for (;;) {
        auto dot = ns.find('.', start);
        a.push_back(ns.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return a;
}

std::string namespace_from_json(const json& j) {
    std::string out;
    for (auto& level : j) {
        if (!out.empty()) out += '.';
        out += level.get<std::string>();
    }
    return out;
}

/// A LoadTableResult / CommitTableResponse around the metadata's JSON text.
std::string answer_text(const std::optional<std::string>& location, std::string_view metadata_json) {
    std::string body = "{\"metadata-location\":";
    body += location ? ojson(*location).dump() : std::string("null");
    body += ",\"metadata\":";
    body += metadata_json;
    body += ",\"config\":{}}";
    return body;
}

response table_result(int status, const std::optional<std::string>& location, const iceberg::table_metadata& m) {
    return response::json(status, answer_text(location, iceberg::to_json_text(m)));
}

std::string answer_key(const iceberg::table_ident& t) { return t.ns + '\x1f' + t.name; }

template<typename T>
result<T> member(const json& j, const char* key) {
    if constexpr (std::is_same_v<T, std::string>) return iceberg::json_string(j, key);
    else return iceberg::json_int<T>(j, key);
}

int32_t highest_partition_field(const iceberg::table_metadata& m) {
    int32_t hi = 999;
    for (auto& s : m.partition_specs)
        for (auto& f : s.fields) hi = std::max(hi, f.field_id);
    return hi;
}

/// Ids assigned by add-schema/add-spec/add-sort-order in this change ("-1": the last added).
struct change_state {
    std::optional<int32_t> last_schema, last_spec, last_order;
    std::set<int64_t> added_snapshots;
    int64_t now_ms = 0;
};

/// The spec's requirement `r` on the table as it is now (`m`, nullptr when it does not exist).
result<void> check_requirement(const json& r, const iceberg::table_metadata* m) {
    auto type = FLOE_TRY(member<std::string>(r, "type"));
    auto failed = [&](std::string what) -> result<void> {
        return fail(errc::conflict, "Requirement failed: {}", what);
    };
    if (type == "assert-create") {
        if (m) return failed("table already exists");
        return {};
    }
    if (!m) return fail(errc::not_found, "table does not exist");
    if (type == "assert-table-uuid") {
        auto u = FLOE_TRY(member<std::string>(r, "uuid"));
        if (u != m->table_uuid) return failed(fmt::format("UUID does not match: expected {} != {}", m->table_uuid, u));
    } else if (type == "assert-ref-snapshot-id") {
        auto ref = FLOE_TRY(member<std::string>(r, "ref"));
        auto it = r.find("snapshot-id");
        if (it == r.end()) return fail(errc::invalid_argument, "assert-ref-snapshot-id without snapshot-id");
        auto have = m->refs.find(ref);
        if (it->is_null()) {
            if (have != m->refs.end())
                return failed(fmt::format("reference {} was created concurrently: {}", ref, have->second.snapshot_id));
        } else {
            auto want = FLOE_TRY(member<int64_t>(r, "snapshot-id"));
            if (have == m->refs.end()) return failed(fmt::format("reference {} is missing, expected {}", ref, want));
            if (have->second.snapshot_id != want)
                return failed(fmt::format("reference {} has changed: expected id {} != {}", ref, want,
                                          have->second.snapshot_id));
        }
    } else if (type == "assert-last-assigned-field-id") {
        auto v = FLOE_TRY(member<int32_t>(r, "last-assigned-field-id"));
        if (v != m->last_column_id)
            return failed(fmt::format("last assigned field id changed: expected id {} != {}", v, m->last_column_id));
    } else if (type == "assert-current-schema-id") {
        auto v = FLOE_TRY(member<int32_t>(r, "current-schema-id"));
        if (v != m->current_schema_id)
            return failed(fmt::format("current schema changed: expected id {} != {}", v, m->current_schema_id));
    } else if (type == "assert-last-assigned-partition-id") {
        auto v = FLOE_TRY(member<int32_t>(r, "last-assigned-partition-id"));
        if (v != m->last_partition_id)
            return failed(fmt::format("last assigned partition id changed: expected id {} != {}", v,
                                      m->last_partition_id));
    } else if (type == "assert-default-spec-id") {
        auto v = FLOE_TRY(member<int32_t>(r, "default-spec-id"));
        if (v != m->default_spec_id)
            return failed(fmt::format("default partition spec changed: expected id {} != {}", v, m->default_spec_id));
    } else if (type == "assert-default-sort-order-id") {
        auto v = FLOE_TRY(member<int32_t>(r, "default-sort-order-id"));
        if (v != m->default_sort_order_id)
            return failed(fmt::format("default sort order changed: expected id {} != {}", v,
                                      m->default_sort_order_id));
    } else {
        return fail(errc::invalid_argument, "unknown requirement type {}", type);
    }
    return {};
}

/// -1 names the id the same change added last.
result<int32_t> resolve_last(int32_t id, const std::optional<int32_t>& last, const char* what) {
    if (id != -1) return id;
    if (!last) return fail(errc::invalid_argument, "{} -1 without an earlier add in this change", what);
    return *last;
}

/// Applies one TableUpdate to `m` in place.
result<void> apply_update(const json& u, iceberg::table_metadata& m, change_state& st) {
    auto action = FLOE_TRY(member<std::string>(u, "action"));
    if (action == "assign-uuid") {
        auto id = FLOE_TRY(member<std::string>(u, "uuid"));
        if (!m.table_uuid.empty() && m.table_uuid != id)
            return fail(errc::invalid_argument, "cannot reassign table UUID {} to {}", m.table_uuid, id);
        m.table_uuid = id;
    } else if (action == "upgrade-format-version") {
        auto v = FLOE_TRY(member<int>(u, "format-version"));
        if (v < m.format_version)
            return fail(errc::invalid_argument, "cannot downgrade format version {} to {}", m.format_version, v);
        if (v > 2) return fail(errc::unsupported, "format version {} (this catalog writes version 2)", v);
        m.format_version = v;
    } else if (action == "add-schema") {
        auto it = u.find("schema");
        if (it == u.end()) return fail(errc::invalid_argument, "add-schema without schema");
        auto s = FLOE_TRY_CTX(iceberg::schema_from_json(*it), "add-schema");
        // An identical schema is reused; a new one gets the next id.
        json bare = iceberg::to_json(s);
        bare.erase("schema-id");
        std::optional<int32_t> same;
        int32_t next_id = 0;
        for (auto& have : m.schemas) {
            json hb = iceberg::to_json(have);
            hb.erase("schema-id");
            if (hb == bare) same = have.schema_id;
            next_id = std::max(next_id, have.schema_id + 1);
        }
        if (same) {
            st.last_schema = *same;
        } else {
            s.schema_id = next_id;
            m.last_column_id = std::max(m.last_column_id, s.highest_field_id());
            if (u.contains("last-column-id"))
                m.last_column_id = std::max(m.last_column_id, FLOE_TRY(member<int32_t>(u, "last-column-id")));
            st.last_schema = s.schema_id;
            m.schemas.push_back(std::move(s));
        }
    } else if (action == "set-current-schema") {
        auto id = FLOE_TRY(resolve_last(FLOE_TRY(member<int32_t>(u, "schema-id")), st.last_schema, "schema-id"));
        auto found = std::any_of(m.schemas.begin(), m.schemas.end(), [&](auto& s) { return s.schema_id == id; });
        if (!found) return fail(errc::invalid_argument, "set-current-schema: no schema {}", id);
        m.current_schema_id = id;
    } else if (action == "add-spec") {
        auto it = u.find("spec");
        if (it == u.end() || !it->is_object()) return fail(errc::invalid_argument, "add-spec without spec");
        json spec = *it;
        if (!spec.contains("spec-id")) spec["spec-id"] = 0;
        int32_t next_field = highest_partition_field(m);
        if (spec.contains("fields") && spec["fields"].is_array())
            for (auto& f : spec["fields"])
                if (f.is_object() && !f.contains("field-id")) f["field-id"] = ++next_field;
        auto p = FLOE_TRY_CTX(iceberg::partition_spec_from_json(spec), "add-spec");
        std::optional<int32_t> same;
        int32_t next_id = 0;
        for (auto& have : m.partition_specs) {
            bool eq = have.fields.size() == p.fields.size();
            for (size_t i = 0; eq && i < p.fields.size(); ++i)
                eq = have.fields[i].source_id == p.fields[i].source_id
                     && have.fields[i].transform == p.fields[i].transform && have.fields[i].name == p.fields[i].name;
            if (eq) same = have.spec_id;
            next_id = std::max(next_id, have.spec_id + 1);
        }
        if (same) {
            st.last_spec = *same;
        } else {
            p.spec_id = next_id;
            for (auto& f : p.fields) m.last_partition_id = std::max(m.last_partition_id, f.field_id);
            st.last_spec = p.spec_id;
            m.partition_specs.push_back(std::move(p));
        }
    } else if (action == "set-default-spec") {
        auto id = FLOE_TRY(resolve_last(FLOE_TRY(member<int32_t>(u, "spec-id")), st.last_spec, "spec-id"));
        auto found = std::any_of(m.partition_specs.begin(), m.partition_specs.end(),
                                 [&](auto& s) { return s.spec_id == id; });
        if (!found) return fail(errc::invalid_argument, "set-default-spec: no partition spec {}", id);
        m.default_spec_id = id;
    } else if (action == "add-sort-order") {
        auto it = u.find("sort-order");
        if (it == u.end() || !it->is_object()) return fail(errc::invalid_argument, "add-sort-order without sort-order");
        json order = *it;
        if (!order.contains("order-id")) order["order-id"] = 0;
        auto o = FLOE_TRY_CTX(iceberg::sort_order_from_json(order), "add-sort-order");
        std::optional<int32_t> same;
        int32_t next_id = 1;  // 0 is the unsorted order
        for (auto& have : m.sort_orders) {
            bool eq = have.fields.size() == o.fields.size();
            for (size_t i = 0; eq && i < o.fields.size(); ++i)
                eq = have.fields[i].source_id == o.fields[i].source_id
                     && have.fields[i].transform == o.fields[i].transform
                     && have.fields[i].direction == o.fields[i].direction
                     && have.fields[i].null_order == o.fields[i].null_order;
            if (eq) same = have.order_id;
            next_id = std::max(next_id, have.order_id + 1);
        }
        if (same) {
            st.last_order = *same;
        } else {
            o.order_id = o.fields.empty() ? 0 : next_id;
            st.last_order = o.order_id;
            m.sort_orders.push_back(std::move(o));
        }
    } else if (action == "set-default-sort-order") {
        auto id =
            FLOE_TRY(resolve_last(FLOE_TRY(member<int32_t>(u, "sort-order-id")), st.last_order, "sort-order-id"));
        auto found =
            std::any_of(m.sort_orders.begin(), m.sort_orders.end(), [&](auto& s) { return s.order_id == id; });
        if (!found) return fail(errc::invalid_argument, "set-default-sort-order: no sort order {}", id);
        m.default_sort_order_id = id;
    } else if (action == "add-snapshot") {
        auto it = u.find("snapshot");
        if (it == u.end()) return fail(errc::invalid_argument, "add-snapshot without snapshot");
        auto s = FLOE_TRY_CTX(iceberg::parse_snapshot(*it, m.format_version >= 2), "add-snapshot");
        if (m.find_snapshot(s.snapshot_id))
            return fail(errc::invalid_argument, "snapshot {} already exists", s.snapshot_id);
        if (m.format_version >= 2 && s.parent_snapshot_id && s.sequence_number <= m.last_sequence_number)
            return fail(errc::conflict, "cannot add snapshot with sequence number {} older than last sequence number {}",
                        s.sequence_number, m.last_sequence_number);
        m.last_sequence_number = std::max(m.last_sequence_number, s.sequence_number);
        st.added_snapshots.insert(s.snapshot_id);
        m.snapshots.push_back(std::move(s));
    } else if (action == "set-snapshot-ref") {
        auto name = FLOE_TRY(member<std::string>(u, "ref-name"));
        iceberg::snapshot_ref ref;
        ref.snapshot_id = FLOE_TRY(member<int64_t>(u, "snapshot-id"));
        ref.type = FLOE_TRY(member<std::string>(u, "type"));
        if (ref.type != "branch" && ref.type != "tag")
            return fail(errc::invalid_argument, "reference type {} (branch or tag)", ref.type);
        if (u.contains("min-snapshots-to-keep") && !u["min-snapshots-to-keep"].is_null())
            ref.min_snapshots_to_keep = FLOE_TRY(member<int32_t>(u, "min-snapshots-to-keep"));
        if (u.contains("max-snapshot-age-ms") && !u["max-snapshot-age-ms"].is_null())
            ref.max_snapshot_age_ms = FLOE_TRY(member<int64_t>(u, "max-snapshot-age-ms"));
        if (u.contains("max-ref-age-ms") && !u["max-ref-age-ms"].is_null())
            ref.max_ref_age_ms = FLOE_TRY(member<int64_t>(u, "max-ref-age-ms"));
        auto* snap = m.find_snapshot(ref.snapshot_id);
        if (!snap) return fail(errc::invalid_argument, "set-snapshot-ref {}: no snapshot {}", name, ref.snapshot_id);
        if (name == "main") {
            if (ref.type != "branch") return fail(errc::invalid_argument, "main must be a branch");
            if (m.current_snapshot_id != ref.snapshot_id) {
                int64_t ts = st.added_snapshots.count(ref.snapshot_id) ? snap->timestamp_ms : st.now_ms;
                m.snapshot_log.push_back({ts, ref.snapshot_id});
            }
            m.current_snapshot_id = ref.snapshot_id;
        }
        m.refs[name] = ref;
    } else if (action == "remove-snapshot-ref") {
        auto name = FLOE_TRY(member<std::string>(u, "ref-name"));
        m.refs.erase(name);
        if (name == "main") m.current_snapshot_id.reset();
    } else if (action == "remove-snapshots") {
        auto it = u.find("snapshot-ids");
        if (it == u.end() || !it->is_array()) return fail(errc::invalid_argument, "remove-snapshots without snapshot-ids");
        std::set<int64_t> gone;
        for (auto& v : *it) {
            if (!v.is_number_integer()) return fail(errc::invalid_argument, "snapshot-ids holds a non-integer");
            gone.insert(v.get<int64_t>());
        }
        std::erase_if(m.snapshots, [&](auto& s) { return gone.count(s.snapshot_id) > 0; });
        std::erase_if(m.snapshot_log, [&](auto& e) { return gone.count(e.snapshot_id) > 0; });
        for (auto r = m.refs.begin(); r != m.refs.end();) {
            if (gone.count(r->second.snapshot_id)) {
                if (r->first == "main") m.current_snapshot_id.reset();
                r = m.refs.erase(r);
            } else {
                ++r;
            }
        }
        auto stats = json::parse(m.statistics_json, nullptr, false);
        if (stats.is_array()) {
            json kept = json::array();
            for (auto& e : stats)
                if (!(e.is_object() && e.contains("snapshot-id") && e["snapshot-id"].is_number_integer()
                      && gone.count(e["snapshot-id"].get<int64_t>())))
                    kept.push_back(e);
            m.statistics_json = kept.dump();
        }
    } else if (action == "set-location") {
        m.location = FLOE_TRY(member<std::string>(u, "location"));
        while (m.location.ends_with("/")) m.location.pop_back();
    } else if (action == "set-properties") {
        auto it = u.find("updates");
        if (it == u.end() || !it->is_object()) return fail(errc::invalid_argument, "set-properties without updates");
        for (auto& [k, v] : it->items()) {
            if (!v.is_string()) return fail(errc::invalid_argument, "property {} is not a string", k);
            m.properties[k] = v.get<std::string>();
        }
    } else if (action == "remove-properties") {
        auto it = u.find("removals");
        if (it == u.end() || !it->is_array()) return fail(errc::invalid_argument, "remove-properties without removals");
        for (auto& k : *it) {
            if (!k.is_string()) return fail(errc::invalid_argument, "removals holds a non-string");
            m.properties.erase(k.get<std::string>());
        }
    } else if (action == "set-statistics" || action == "remove-statistics") {
        auto id = FLOE_TRY(member<int64_t>(u, "snapshot-id"));
        auto stats = json::parse(m.statistics_json, nullptr, false);
        if (!stats.is_array()) stats = json::array();
        json kept = json::array();
        for (auto& e : stats)
            if (!(e.is_object() && e.value("snapshot-id", int64_t{-1}) == id)) kept.push_back(e);
        if (action == "set-statistics") {
            auto s = u.find("statistics");
            if (s == u.end() || !s->is_object()) return fail(errc::invalid_argument, "set-statistics without statistics");
            kept.push_back(*s);
        }
        m.statistics_json = kept.dump();
    } else if (action == "remove-partition-specs") {
        auto it = u.find("spec-ids");
        if (it == u.end() || !it->is_array()) return fail(errc::invalid_argument, "remove-partition-specs without spec-ids");
        for (auto& v : *it) {
            if (!v.is_number_integer()) return fail(errc::invalid_argument, "spec-ids holds a non-integer");
            auto id = v.get<int32_t>();
            if (id == m.default_spec_id) return fail(errc::invalid_argument, "cannot remove the default spec {}", id);
            std::erase_if(m.partition_specs, [&](auto& s) { return s.spec_id == id; });
        }
    } else if (action == "remove-schemas") {
        auto it = u.find("schema-ids");
        if (it == u.end() || !it->is_array()) return fail(errc::invalid_argument, "remove-schemas without schema-ids");
        for (auto& v : *it) {
            if (!v.is_number_integer()) return fail(errc::invalid_argument, "schema-ids holds a non-integer");
            auto id = v.get<int32_t>();
            if (id == m.current_schema_id) return fail(errc::invalid_argument, "cannot remove the current schema {}", id);
            std::erase_if(m.schemas, [&](auto& s) { return s.schema_id == id; });
        }
    } else {
        // set-partition-statistics, encryption keys, view updates: this catalog's metadata
        // does not keep them, and accepting them would drop them silently.
        return fail(errc::unsupported, "update {} is not supported by this catalog", action);
    }
    return {};
}

/// Exactly-once guard: the main branch's floe.committed-positions may only move forward.
result<void> check_positions(const std::map<std::string, int64_t>& before, const iceberg::table_metadata& after) {
    if (before.empty()) return {};
    auto* snap = after.current_snapshot();
    if (!snap)
        return fail(errc::invalid_argument,
                    "refused: the change leaves the table without a current snapshot, dropping {} that Floe's "
                    "exactly-once offload depends on",
                    lake::positions_summary_key);
    auto now = lake::positions_from_summary(snap->summary);
    if (!now) return fail(errc::invalid_argument, "refused: {}", now.error().message());
    for (auto& [stream, pos] : before) {
        auto it = now->find(stream);
        if (it == now->end())
            return fail(errc::invalid_argument,
                        "refused: snapshot {} drops {} of stream '{}' (at {}); carry the summary entry {} forward "
                        "from the parent snapshot (Floe's exactly-once offload depends on it)",
                        snap->snapshot_id, lake::positions_summary_key, stream, pos, lake::positions_summary_key);
        if (it->second < pos)
            return fail(errc::invalid_argument,
                        "refused: snapshot {} moves {} of stream '{}' back from {} to {}; rows would be offloaded "
                        "twice",
                        snap->snapshot_id, lake::positions_summary_key, stream, pos, it->second);
    }
    return {};
}

result<std::map<std::string, int64_t>> positions_of(const iceberg::table_metadata& m) {
    auto* s = m.current_snapshot();
    if (!s) return std::map<std::string, int64_t>{};
    return lake::positions_from_summary(s->summary);
}

/// nlohmann recurses while parsing: absurd nesting is refused before parsing.
result<json> parse_body(std::string_view text) {
    int depth = 0;
    bool in_str = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_str) {
            if (c == '\\') ++i;
            else if (c == '"') in_str = false;
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > 64) return fail(errc::invalid_argument, "request body nested deeper than 64 levels");
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
    auto j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail(errc::invalid_argument, "request body is not a JSON object");
    return j;
}

/// Checks the requirements on `m` and applies the updates in place; false when there are
/// none. Requirement failures are errc::conflict; refusals (bad updates, the positions guard)
/// other codes.
result<bool> apply_changes(const json& reqs, const json& ups, iceberg::table_metadata& m, int64_t now_ms) {
    if (!reqs.is_array() || !ups.is_array())
        return fail(errc::invalid_argument, "a commit needs \"requirements\" and \"updates\" arrays");
    for (auto& r : reqs) {
        if (!r.is_object()) return fail(errc::invalid_argument, "a requirement is not an object");
        FLOE_TRY(check_requirement(r, &m));
    }
    if (ups.empty()) return false;
    auto before = FLOE_TRY(positions_of(m));
    change_state st;
    st.now_ms = now_ms;
    for (auto& u : ups) {
        if (!u.is_object()) return fail(errc::invalid_argument, "an update is not an object");
        FLOE_TRY(apply_update(u, m, st));
    }
    // A compaction ("replace": the same rows in other files) by an engine that does not know
    // Floe's summary entry keeps the positions of its parent: they are carried forward here.
    if (!before.empty() && m.current_snapshot_id && st.added_snapshots.count(*m.current_snapshot_id)) {
        auto& snap = *std::find_if(m.snapshots.begin(), m.snapshots.end(),
                                   [&](auto& s) { return s.snapshot_id == *m.current_snapshot_id; });
        if (snap.operation() == "replace" && !snap.summary.contains(lake::positions_summary_key))
            snap.summary[lake::positions_summary_key] = lake::positions_to_json(before);
    }
    FLOE_TRY(check_positions(before, m));
    return true;
}

} // namespace

result<iceberg::table_metadata> apply_commit(iceberg::table_metadata base, std::string_view body, int64_t now_ms) {
    auto j = FLOE_TRY(parse_body(body));
    try {
        auto reqs = j.find("requirements"), ups = j.find("updates");
        if (reqs == j.end() || ups == j.end())
            return fail(errc::invalid_argument, "a commit needs \"requirements\" and \"updates\" arrays");
        FLOE_TRY(apply_changes(*reqs, *ups, base, now_ms));
        return base;
    } catch (const json::exception& e) {
        return fail(errc::invalid_argument, "malformed request: {}", e.what());
    }
}

std::string iceberg_etag(std::string_view metadata_location) {
    return fmt::format("\"{}\"", aws::sha256_hex(metadata_location).substr(0, 32));
}

iceberg_rest::iceberg_rest(std::shared_ptr<iceberg::catalog> cat, std::shared_ptr<iceberg::file_io> io,
                           iceberg_rest_options opts)
    : _cat(std::move(cat)), _io(std::move(io)), _opts(std::move(opts)),
      _cache(std::make_unique<iceberg::metadata_cache>()) {
    while (_opts.warehouse.ends_with("/")) _opts.warehouse.pop_back();
}

iceberg_rest::~iceberg_rest() = default;

std::shared_ptr<const std::string> iceberg_rest::kept_answer(const iceberg::table_ident& t,
                                                             const std::string& location) const {
    std::lock_guard g(_answers_mu);
    auto it = _answers.find(answer_key(t));
    if (it == _answers.end() || it->second.first != location) return nullptr;
    return it->second.second;
}

void iceberg_rest::keep_answer(const iceberg::table_ident& t, const std::string& location,
                               std::shared_ptr<const std::string> body) {
    auto k = answer_key(t);
    std::lock_guard g(_answers_mu);
    if (_answers.size() >= 256 && !_answers.contains(k)) _answers.erase(_answers.begin());
    _answers[k] = {location, std::move(body)};
}

response iceberg_rest::load(const request& r, const iceberg::table_ident& t) {
    // A location names one content, except where the filesystem catalog reuses v<N> names (a
    // table dropped and created again): there no ETag is given and no answer kept.
    if (_cat->commit_by_create()) {
        auto loaded = iceberg::load_table(*_cat, *_io, t, _cache.get());
        if (!loaded) {
            if (loaded.error().code() == errc::not_found) return no_such_table(t);
            return to_response(from_error(loaded.error()));
        }
        return table_result(200, loaded->metadata_location, loaded->metadata);
    }
    auto loc = _cat->metadata_location(t);
    if (!loc) return to_response(from_error(loc.error()));
    if (!*loc) return no_such_table(t);
    auto etag = iceberg_etag(**loc);
    if (auto inm = r.headers.find("if-none-match");
        inm != r.headers.end() && (inm->second == "*" || inm->second.find(etag) != std::string::npos)) {
        response not_modified;
        not_modified.status = 304;
        not_modified.headers.emplace_back("ETag", etag);
        return not_modified;
    }
    auto body = kept_answer(t, **loc);
    if (!body) {
        auto loaded = iceberg::load_table(*_cat, *_io, t, _cache.get());
        if (!loaded) {
            if (loaded.error().code() == errc::not_found) return no_such_table(t);
            return to_response(from_error(loaded.error()));
        }
        if (loaded->metadata_location != **loc) etag = iceberg_etag(loaded->metadata_location);  // moved meanwhile
        body = std::make_shared<const std::string>(
            answer_text(loaded->metadata_location, iceberg::to_json_text(loaded->metadata)));
        keep_answer(t, loaded->metadata_location, body);
    }
    auto resp = response::json(200, *body);
    resp.headers.emplace_back("ETag", std::move(etag));
    return resp;
}

void iceberg_rest::add_routes(server& s) {
    auto h = [this](const request& r) { return handle(r); };
    s.route_prefix("GET", _opts.mount + "/", h);
    s.route_prefix("POST", _opts.mount + "/", h);
    s.route_prefix("DELETE", _opts.mount + "/", h);
}

std::pair<acl_type, std::string> iceberg_rest::resource_of(const iceberg::table_ident& t) const {
    if (_topic_of)
        if (auto topic = _topic_of(t.ns, t.name)) return {acl_type::topic, *topic};
    return {acl_type::cluster, std::string(access_control::cluster_name)};
}

std::optional<response> iceberg_rest::denied(const request& r, const iceberg::table_ident& t, acl_op topic_op,
                                             acl_op cluster_op, bool quiet) const {
    if (!_access.enabled()) return std::nullopt;
    auto [type, name] = resource_of(t);
    auto op = type == acl_type::topic ? topic_op : cluster_op;
    if (_access.allows(r, op, type, name, quiet)) return std::nullopt;
    return iceberg_forbidden(r, op, type, name);
}

std::optional<response> iceberg_rest::denied_on_cluster(const request& r, acl_op op, bool quiet) const {
    if (_access.allows(r, op, acl_type::cluster, access_control::cluster_name, quiet)) return std::nullopt;
    return iceberg_forbidden(r, op, acl_type::cluster, access_control::cluster_name);
}

std::optional<response> iceberg_rest::denied_namespace(const request& r, const std::string& ns, bool quiet) const {
    if (ns == _opts.topics_namespace) return std::nullopt;
    return denied_on_cluster(r, acl_op::describe, quiet);
}

response iceberg_rest::no_such_table(const iceberg::table_ident& t) const {
    auto message = fmt::format("Table does not exist: {}.{}", t.ns, t.name);
    // A topic's name given for its table: say which name the table has.
    auto table = lake::table_name_for_topic(t.name);
    if (table != t.name) {
        auto there = _cat->metadata_location({t.ns, table});
        if (there && *there)
            message += fmt::format("; the table of topic '{}' is {}.{} ('.', '-' and ':' in a topic name become '_')",
                                   t.name, t.ns, table);
    }
    return iceberg_error(404, "NoSuchTableException", message);
}

response iceberg_rest::handle(const request& r) {
    // Split the raw target, so an encoded '/' (%2F) or separator (%1F) stays inside its segment.
    std::string_view raw(r.target);
    raw = raw.substr(0, raw.find('?'));
    auto base = _opts.mount + "/v1/";
    if (!raw.starts_with(base)) return iceberg_error(404, "NotFoundException", fmt::format("no such endpoint: {}", r.path));
    raw.remove_prefix(base.size());
    std::vector<std::string> seg;
    for (;;) {
        auto slash = raw.find('/');
        seg.push_back(decode_segment(raw.substr(0, slash)));
        if (slash == std::string_view::npos) break;
        raw.remove_prefix(slash + 1);
    }
    const bool head = r.method == "HEAD";
    const bool get = r.method == "GET" || head;
    const bool post = r.method == "POST";
    auto not_allowed = [&] {
        return iceberg_error(405, "MethodNotAllowedException", fmt::format("method {} not allowed on {}", r.method, r.path));
    };
    if (seg.size() == 1 && seg[0] == "config") {
        if (!get) return not_allowed();
        count_request("/iceberg/v1/config");
        ojson j;
        j["defaults"] = ojson::object();
        j["overrides"] = ojson::object();
        j["endpoints"] = {"GET /v1/{prefix}/namespaces",
                          "POST /v1/{prefix}/namespaces",
                          "GET /v1/{prefix}/namespaces/{namespace}",
                          "HEAD /v1/{prefix}/namespaces/{namespace}",
                          "GET /v1/{prefix}/namespaces/{namespace}/tables",
                          "POST /v1/{prefix}/namespaces/{namespace}/tables",
                          "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                          "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                          "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"};
        return response::json(200, j.dump());
    }
    // An optional {prefix} before "namespaces": any prefix names this one catalog.
    if (!seg.empty() && seg[0] != "namespaces" && seg.size() > 1 && seg[1] == "namespaces") seg.erase(seg.begin());
    if (seg.empty() || seg[0] != "namespaces")
        return iceberg_error(404, "NotFoundException", fmt::format("no such endpoint: {}", r.path));

    json body;
    if (post) {
        auto parsed = parse_body(r.body);
        if (!parsed) return iceberg_error(400, "BadRequestException", parsed.error().message());
        body = std::move(*parsed);
    }
    try {
        if (seg.size() == 1) {
            count_request("/iceberg/v1/namespaces");
            if (get) {
                if (auto parent = r.param("parent"); parent && !parent->empty())
                    return response::json(200, R"({"namespaces":[]})");  // one level only
                auto list = _cat->list_namespaces();
                if (!list) return to_response(from_error(list.error()));
                ojson j;
                j["namespaces"] = ojson::array();
                const bool sees_all = !denied_on_cluster(r, acl_op::describe, /*quiet=*/true);
                for (auto& ns : *list)
                    if (sees_all || ns == _opts.topics_namespace) j["namespaces"].push_back(namespace_json(ns));
                return response::json(200, j.dump());
            }
            if (!post) return not_allowed();
            if (auto no = denied_on_cluster(r, acl_op::create)) return *no;
            auto it = body.find("namespace");
            if (it == body.end() || !it->is_array() || it->empty())
                return iceberg_error(400, "BadRequestException", "createNamespace needs \"namespace\": [levels]");
            for (auto& l : *it)
                if (!l.is_string() || l.get<std::string>().empty())
                    return iceberg_error(400, "BadRequestException", "namespace levels must be non-empty strings");
            auto ns = namespace_from_json(*it);
            if (auto p = body.find("properties"); p != body.end() && p->is_object() && !p->empty())
                return iceberg_error(406, "UnsupportedOperationException", "namespace properties are not supported");
            auto exists = _cat->namespace_exists(ns);
            if (!exists) return to_response(from_error(exists.error()));
            if (*exists)
                return iceberg_error(409, "AlreadyExistsException", fmt::format("Namespace already exists: {}", ns));
            if (auto c = _cat->create_namespace_if_missing(ns); !c) return to_response(from_error(c.error()));
            ojson j;
            j["namespace"] = namespace_json(ns);
            j["properties"] = ojson::object();
            return response::json(200, j.dump());
        }
        auto ns = namespace_name(seg[1]);
        if (seg.size() == 2) {
            count_request("/iceberg/v1/namespaces/{namespace}");
            if (!get) return not_allowed();
            if (auto no = denied_namespace(r, ns)) return *no;
            auto exists = _cat->namespace_exists(ns);
            if (!exists) return to_response(from_error(exists.error()));
            if (!*exists)
                return iceberg_error(404, "NoSuchNamespaceException", fmt::format("Namespace does not exist: {}", ns));
            if (head) return response::json(204, "");
            ojson j;
            j["namespace"] = namespace_json(ns);
            j["properties"] = ojson::object();
            return response::json(200, j.dump());
        }
        if (seg[2] != "tables")
            return iceberg_error(404, "NotFoundException", fmt::format("no such endpoint: {}", r.path));
        if (seg.size() == 3) {
            count_request("/iceberg/v1/namespaces/{namespace}/tables");
            if (get) {
                if (auto no = denied_namespace(r, ns)) return *no;
                auto exists = _cat->namespace_exists(ns);
                if (!exists) return to_response(from_error(exists.error()));
                if (!*exists)
                    return iceberg_error(404, "NoSuchNamespaceException", fmt::format("Namespace does not exist: {}", ns));
                auto list = _cat->list_tables(ns);
                if (!list) return to_response(from_error(list.error(), "NoSuchNamespaceException"));
                ojson j;
                j["identifiers"] = ojson::array();
                // Only the tables the principal may describe, as Kafka's Metadata lists topics.
                for (auto& t : *list)
                    if (!denied(r, {ns, t}, acl_op::describe, acl_op::describe, /*quiet=*/true))
                        j["identifiers"].push_back({{"namespace", namespace_json(ns)}, {"name", t}});
                return response::json(200, j.dump());
            }
            if (!post) return not_allowed();
            return create(r, ns, body);
        }
        if (seg.size() > 5 || seg[3].empty())
            return iceberg_error(404, "NotFoundException", fmt::format("no such endpoint: {}", r.path));
        iceberg::table_ident t{ns, seg[3]};
        if (seg.size() == 5) {
            if (seg[4] != "metrics" || !post)
                return iceberg_error(404, "NotFoundException", fmt::format("no such endpoint: {}", r.path));
            count_request("/iceberg/v1/namespaces/{namespace}/tables/{table}/metrics");
            if (auto no = denied(r, t, acl_op::describe, acl_op::describe)) return *no;
            return response::json(204, "");  // scan and commit reports are accepted and not kept
        }
        count_request("/iceberg/v1/namespaces/{namespace}/tables/{table}");
        if (get) {
            if (head) {
                if (auto no = denied(r, t, acl_op::describe, acl_op::describe)) return *no;
                auto loc = _cat->metadata_location(t);
                if (!loc) return to_response(from_error(loc.error()));
                if (!*loc) return iceberg_error(404, "NoSuchTableException", "no such table");
                return response::json(204, "");
            }
            // Loading hands out the metadata and every data file's location: the topic's data.
            if (auto no = denied(r, t, acl_op::read, acl_op::describe)) return *no;
            return load(r, t);
        }
        if (!post) return not_allowed();
        return commit(r, t, body);
    } catch (const json::exception& e) {
        return iceberg_error(400, "BadRequestException", fmt::format("malformed request: {}", e.what()));
    }
}

response iceberg_rest::create(const request& r, const std::string& ns, const json& body) {
    // Creating a table is the cluster's (CREATE), and a table that a topic will write to is
    // also that topic's (ALTER): nobody prepares a topic's table with a schema of their own.
    if (auto no = denied_on_cluster(r, acl_op::create)) return *no;
    auto name = member<std::string>(body, "name");
    if (!name || name->empty() || name->find('/') != std::string::npos)
        return iceberg_error(400, "BadRequestException", "createTable needs a \"name\" without '/'");
    if (_access.enabled())
        if (auto [type, res] = resource_of({ns, *name}); type == acl_type::topic)
            if (!_access.allows(r, acl_op::alter, type, res)) return iceberg_forbidden(r, acl_op::alter, type, res);
    // The filesystem catalog keeps no namespace records (a namespace is the directory its first
    // table makes), so there any namespace takes a table.
    if (!_cat->commit_by_create()) {
        auto exists = _cat->namespace_exists(ns);
        if (!exists) return to_response(from_error(exists.error()));
        if (!*exists)
            return iceberg_error(404, "NoSuchNamespaceException", fmt::format("Namespace does not exist: {}", ns));
    }
    iceberg::table_ident t{ns, *name};
    iceberg::table_metadata m;
    m.table_uuid = uuid::random().to_string();
    m.location = body.contains("location") && body["location"].is_string() && !body["location"].get<std::string>().empty()
                     ? body["location"].get<std::string>()
                     : fmt::format("{}/{}/{}", _opts.warehouse, ns, *name);
    while (m.location.ends_with("/")) m.location.pop_back();
    m.last_updated_ms = system_clock_source::instance().now_ms();
    m.last_partition_id = 999;
    change_state st;
    st.now_ms = m.last_updated_ms;
    auto sch = body.find("schema");
    if (sch == body.end()) return iceberg_error(400, "BadRequestException", "createTable needs a \"schema\"");
    json updates = json::array();
    updates.push_back({{"action", "add-schema"}, {"schema", *sch}});
    updates.push_back({{"action", "set-current-schema"}, {"schema-id", -1}});
    json spec = body.contains("partition-spec") ? body["partition-spec"] : json{{"spec-id", 0}, {"fields", json::array()}};
    updates.push_back({{"action", "add-spec"}, {"spec", spec}});
    updates.push_back({{"action", "set-default-spec"}, {"spec-id", -1}});
    m.sort_orders.push_back(iceberg::sort_order{0, {}});
    if (body.contains("write-order")) {
        updates.push_back({{"action", "add-sort-order"}, {"sort-order", body["write-order"]}});
        updates.push_back({{"action", "set-default-sort-order"}, {"sort-order-id", -1}});
    }
    if (body.contains("properties")) updates.push_back({{"action", "set-properties"}, {"updates", body["properties"]}});
    for (auto& u : updates)
        if (auto r = apply_update(u, m, st); !r) return to_response(from_error(r.error()));
    if (body.value("stage-create", false)) return table_result(200, std::nullopt, m);
    auto created = iceberg::create_table(*_cat, *_io, t, m);
    if (!created) {
        if (created.error().code() == errc::already_exists)
            return iceberg_error(409, "AlreadyExistsException", fmt::format("Table already exists: {}.{}", ns, *name));
        return to_response(from_error(created.error()));
    }
    spdlog::info("iceberg rest: created table {}.{} at {}", ns, *name, m.location);
    return table_result(200, created->metadata_location, created->metadata);
}

response iceberg_rest::commit(const request& r, const iceberg::table_ident& t, const json& body) {
    auto reqs = body.find("requirements");
    auto ups = body.find("updates");
    if (reqs == body.end() || !reqs->is_array() || ups == body.end() || !ups->is_array())
        return iceberg_error(400, "BadRequestException", "a commit needs \"requirements\" and \"updates\" arrays");
    bool create = std::any_of(reqs->begin(), reqs->end(),
                              [](auto& q) { return q.is_object() && q.value("type", "") == "assert-create"; });
    auto current = _cat->metadata_location(t);
    if (!current) return to_response(from_error(current.error()));
    // Committing changes the table (its topic's, or the cluster's): ALTER; a create transaction
    // creates it: as createTable. Checked before anything is changed or answered about the table.
    if (create && !*current) {
        if (auto no = denied_on_cluster(r, acl_op::create)) return *no;
        if (resource_of(t).first == acl_type::topic)
            if (auto no = denied(r, t, acl_op::alter, acl_op::alter)) return *no;
    } else if (auto no = denied(r, t, acl_op::alter, acl_op::alter)) {
        return *no;
    }
    if (create && !*current) {
        // A create transaction: the table's first metadata is built from the updates.
        iceberg::table_metadata m;
        m.last_updated_ms = system_clock_source::instance().now_ms();
        m.last_partition_id = 999;
        m.location = fmt::format("{}/{}/{}", _opts.warehouse, t.ns, t.name);
        change_state st;
        st.now_ms = m.last_updated_ms;
        for (auto& q : *reqs)
            if (auto c = check_requirement(q, nullptr); !c) return to_response(from_error(c.error()));
        for (auto& u : *ups)
            if (auto a = apply_update(u, m, st); !a) return to_response(from_error(a.error()));
        if (m.table_uuid.empty()) m.table_uuid = uuid::random().to_string();
        if (m.schemas.empty() || m.partition_specs.empty())
            return iceberg_error(400, "BadRequestException", "a create transaction needs add-schema and add-spec");
        if (m.sort_orders.empty()) m.sort_orders.push_back(iceberg::sort_order{0, {}});
        auto exists = _cat->namespace_exists(t.ns);
        if (!exists) return to_response(from_error(exists.error()));
        if (!*exists)
            return iceberg_error(404, "NoSuchNamespaceException", fmt::format("Namespace does not exist: {}", t.ns));
        auto created = iceberg::create_table(*_cat, *_io, t, m);
        if (!created) {
            if (created.error().code() == errc::already_exists)
                return iceberg_error(409, "CommitFailedException", "Requirement failed: table already exists");
            return to_response(from_error(created.error()));
        }
        return table_result(200, created->metadata_location, created->metadata);
    }
    if (!*current) return no_such_table(t);

    std::optional<refusal> refused;
    iceberg::metadata_update update = [&](iceberg::table_metadata& m) -> result<bool> {
        refused.reset();
        auto changed = apply_changes(*reqs, *ups, m, system_clock_source::instance().now_ms());
        if (!changed) refused = from_error(changed.error());
        return changed;
    };
    iceberg::commit_options opts;
    opts.cache = _cache.get();
    auto done = iceberg::commit_metadata(*_cat, *_io, t, update, opts);
    if (!done) {
        if (refused) return to_response(*refused);
        spdlog::warn("iceberg rest: commit to {}.{} failed: {}", t.ns, t.name, done.error().message());
        auto code = done.error().code();
        if (code == errc::conflict || code == errc::already_exists || code == errc::not_found)
            return to_response(from_error(done.error()));
        // Anything else may have happened after the swap: the client must reload to know.
        return iceberg_error(500, "CommitStateUnknownException", done.error().message());
    }
    if (*done && !(*done)->metadata_json.empty() && !_cat->commit_by_create()) {
        // The text of the file this commit wrote: not serialised again, and kept for loads.
        auto answer = std::make_shared<const std::string>(answer_text((*done)->metadata_location, (*done)->metadata_json));
        keep_answer(t, (*done)->metadata_location, answer);
        auto resp = response::json(200, *answer);
        resp.headers.emplace_back("ETag", iceberg_etag((*done)->metadata_location));
        return resp;
    }
    auto loaded = iceberg::load_table(*_cat, *_io, t, _cache.get());  // from the cache the commit filled
    if (loaded && (!*done || loaded->metadata_location == (*done)->metadata_location))
        return table_result(200, loaded->metadata_location, loaded->metadata);
    if (*done) {
        // The version this commit made (a later commit has already followed it).
        auto bytes = _io->read((*done)->metadata_location);
        if (bytes) {
            auto m = iceberg::parse_metadata(as_chars(*bytes));
            if (m) return table_result(200, (*done)->metadata_location, *m);
        }
    }
    if (!loaded) return to_response(from_error(loaded.error()));
    return table_result(200, loaded->metadata_location, loaded->metadata);
}

} // namespace floe::http
