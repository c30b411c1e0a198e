#include "iceberg/manifest.h"

#include "format/avro/container.h"
#include "iceberg/bounds.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <map>
#include <memory>
#include <mutex>

namespace floe::iceberg {

using ojson = nlohmann::ordered_json;
using avro::datum;

namespace {

ojson optional_of(ojson t) { return ojson::array({"null", std::move(t)}); }

ojson field(const char* name, int id, ojson t, bool optional = false) {
    ojson f;
    f["name"] = name;
    f["type"] = optional ? optional_of(std::move(t)) : std::move(t);
    if (optional) f["default"] = nullptr;
    f["field-id"] = id;
    return f;
}

// Iceberg maps with non-string keys are Avro arrays of key/value records marked logicalType map.
ojson int_map(int key_id, int value_id, const char* value_type) {
    ojson rec;
    rec["type"] = "record";
    rec["name"] = fmt::format("k{}_v{}", key_id, value_id);
    rec["fields"] = ojson::array({field("key", key_id, "int"), field("value", value_id, value_type)});
    return ojson{{"type", "array"}, {"items", rec}, {"logicalType", "map"}};
}

ojson list_of(const char* item, int element_id) {
    return ojson{{"type", "array"}, {"items", item}, {"element-id", element_id}};
}

result<ojson> avro_type_for(const type& t, int field_id) {
    switch (t.id) {
    case type_id::boolean: return ojson("boolean");
    case type_id::int_: return ojson("int");
    case type_id::long_: return ojson("long");
    case type_id::float_: return ojson("float");
    case type_id::double_: return ojson("double");
    case type_id::string: return ojson("string");
    case type_id::binary: return ojson("bytes");
    case type_id::date: return ojson{{"type", "int"}, {"logicalType", "date"}};
    case type_id::time: return ojson{{"type", "long"}, {"logicalType", "time-micros"}};
    case type_id::timestamp:
        return ojson{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", false}};
    case type_id::timestamptz:
        return ojson{{"type", "long"}, {"logicalType", "timestamp-micros"}, {"adjust-to-utc", true}};
    case type_id::uuid:
        return ojson{{"type", "fixed"}, {"name", fmt::format("uuid_fixed_{}", field_id)}, {"size", 16},
                     {"logicalType", "uuid"}};
    case type_id::fixed:
        return ojson{{"type", "fixed"}, {"name", fmt::format("fixed_{}", field_id)}, {"size", t.length}};
    default: return fail(errc::unsupported, "partition type {} in a manifest", primitive_name(t));
    }
}

ojson data_file_schema(ojson partition_record) {
    ojson fields = ojson::array();
    fields.push_back(field("content", 134, "int"));
    fields.push_back(field("file_path", 100, "string"));
    fields.push_back(field("file_format", 101, "string"));
    fields.push_back(field("partition", 102, std::move(partition_record)));
    fields.push_back(field("record_count", 103, "long"));
    fields.push_back(field("file_size_in_bytes", 104, "long"));
    fields.push_back(field("column_sizes", 108, int_map(117, 118, "long"), true));
    fields.push_back(field("value_counts", 109, int_map(119, 120, "long"), true));
    fields.push_back(field("null_value_counts", 110, int_map(121, 122, "long"), true));
    fields.push_back(field("nan_value_counts", 137, int_map(138, 139, "long"), true));
    fields.push_back(field("lower_bounds", 125, int_map(126, 127, "bytes"), true));
    fields.push_back(field("upper_bounds", 128, int_map(129, 130, "bytes"), true));
    fields.push_back(field("key_metadata", 131, "bytes", true));
    fields.push_back(field("split_offsets", 132, list_of("long", 133), true));
    fields.push_back(field("equality_ids", 135, list_of("int", 136), true));
    fields.push_back(field("sort_order_id", 140, "int", true));
    return ojson{{"type", "record"}, {"name", "r2"}, {"fields", std::move(fields)}};
}

datum opt_long(const std::optional<int64_t>& v) { return v ? datum::int64(*v) : datum::null(); }

template<typename V>
datum int_map_datum(const std::map<int32_t, V>& m) {
    auto a = datum::array();
    for (auto& [k, v] : m) {
        if constexpr (std::is_same_v<V, std::string>)
            a.push(datum::record({datum::int32(k), datum::bytes(v)}));
        else
            a.push(datum::record({datum::int32(k), datum::int64(v)}));
    }
    return a;
}

datum data_file_datum(const data_file& f) {
    std::vector<datum> v;
    v.reserve(16);
    v.push_back(datum::int32(static_cast<int32_t>(f.content)));
    v.push_back(datum::string(f.file_path));
    v.push_back(datum::string(f.file_format));
    v.push_back(datum::record(f.partition));
    v.push_back(datum::int64(f.record_count));
    v.push_back(datum::int64(f.file_size_in_bytes));
    v.push_back(int_map_datum(f.column_sizes));
    v.push_back(int_map_datum(f.value_counts));
    v.push_back(int_map_datum(f.null_value_counts));
    v.push_back(int_map_datum(f.nan_value_counts));
    v.push_back(int_map_datum(f.lower_bounds));
    v.push_back(int_map_datum(f.upper_bounds));
    v.push_back(f.key_metadata ? datum::bytes(*f.key_metadata) : datum::null());
    if (f.split_offsets) {
        auto a = datum::array();
        for (auto o : *f.split_offsets) a.push(datum::int64(o));
        v.push_back(std::move(a));
    } else {
        v.push_back(datum::null());
    }
    if (f.equality_ids) {
        auto a = datum::array();
        for (auto o : *f.equality_ids) a.push(datum::int32(o));
        v.push_back(std::move(a));
    } else {
        v.push_back(datum::null());
    }
    v.push_back(f.sort_order_id ? datum::int32(*f.sort_order_id) : datum::null());
    return datum::record(std::move(v));
}

// Field access by Iceberg field id, so files written by other engines (other field order,
// extra fields) read the same.
int index_of(const avro::node& rec, int32_t id) {
    if (rec.kind != avro::type::record) return -1;
    for (size_t i = 0; i < rec.fields.size(); ++i)
        if (rec.fields[i].field_id == id) return static_cast<int>(i);
    return -1;
}

const avro::node* unwrap(const avro::node* n) {
    if (n && n->kind == avro::type::union_)
        for (auto* b : n->branches)
            if (b->kind != avro::type::null) return b;
    return n;
}

struct view {
    const avro::node* schema;
    const datum* value;

    const datum* get(int32_t id) const {
        int i = index_of(*schema, id);
        if (i < 0 || static_cast<size_t>(i) >= value->children().size()) return nullptr;
        auto* d = &value->children()[static_cast<size_t>(i)];
        return d->is_null() ? nullptr : d;
    }
    view sub(int32_t id) const {
        int i = index_of(*schema, id);
        if (i < 0) return {nullptr, nullptr};
        return {unwrap(schema->fields[static_cast<size_t>(i)].type), get(id)};
    }
};

result<int64_t> need_long(const view& v, int32_t id, const char* name) {
    auto* d = v.get(id);
    if (!d || (d->type() != datum::kind::long_ && d->type() != datum::kind::int_))
        return fail(errc::corrupt, "{} (field id {}) missing or not a number", name, id);
    return d->as_long();
}

result<std::string> need_string(const view& v, int32_t id, const char* name) {
    auto* d = v.get(id);
    if (!d || (d->type() != datum::kind::string && d->type() != datum::kind::bytes))
        return fail(errc::corrupt, "{} (field id {}) missing or not a string", name, id);
    return d->as_string();
}

template<typename V>
result<std::map<int32_t, V>> read_int_map(const view& v, int32_t id) {
    std::map<int32_t, V> out;
    auto* d = v.get(id);
    if (!d) return out;
    if (d->type() != datum::kind::array) return fail(errc::corrupt, "map field {} is not an array", id);
    for (auto& kv : d->children()) {
        if (kv.type() != datum::kind::record || kv.children().size() < 2)
            return fail(errc::corrupt, "map field {} entry is not a key/value record", id);
        auto& key = kv.children()[0];
        auto& val = kv.children()[1];
        if constexpr (std::is_same_v<V, std::string>) out[key.as_int()] = val.as_string();
        else out[key.as_int()] = val.as_long();
    }
    return out;
}

std::optional<int64_t> opt(const view& v, int32_t id) {
    auto* d = v.get(id);
    return d ? std::optional<int64_t>(d->as_long()) : std::nullopt;
}

} // namespace

result<std::string> manifest_entry_avro_schema(const schema& s, const partition_spec& spec) {
    auto types = FLOE_TRY(spec.result_types(s));
    ojson pfields = ojson::array();
    for (size_t i = 0; i < spec.fields.size(); ++i) {
        auto& pf = spec.fields[i];
        pfields.push_back(field(pf.name.c_str(), pf.field_id,
                                FLOE_TRY(avro_type_for(*types[i], pf.field_id)), true));
    }
    ojson partition{{"type", "record"}, {"name", "r102"}, {"fields", std::move(pfields)}};
    ojson fields = ojson::array();
    fields.push_back(field("status", 0, "int"));
    fields.push_back(field("snapshot_id", 1, "long", true));
    fields.push_back(field("sequence_number", 3, "long", true));
    fields.push_back(field("file_sequence_number", 4, "long", true));
    fields.push_back(field("data_file", 2, data_file_schema(std::move(partition))));
    return ojson{{"type", "record"}, {"name", "manifest_entry"}, {"fields", std::move(fields)}}.dump();
}

const std::string& manifest_list_avro_schema() {
    static const std::string text = [] {
        ojson summary{{"type", "record"}, {"name", "r508"}, {"fields", ojson::array({
            field("contains_null", 509, "boolean"),
            field("contains_nan", 518, "boolean", true),
            field("lower_bound", 510, "bytes", true),
            field("upper_bound", 511, "bytes", true)})}};
        ojson partitions{{"type", "array"}, {"items", summary}, {"element-id", 508}};
        ojson fields = ojson::array({
            field("manifest_path", 500, "string"), field("manifest_length", 501, "long"),
            field("partition_spec_id", 502, "int"), field("content", 517, "int"),
            field("sequence_number", 515, "long"), field("min_sequence_number", 516, "long"),
            field("added_snapshot_id", 503, "long"), field("added_files_count", 504, "int"),
            field("existing_files_count", 505, "int"), field("deleted_files_count", 506, "int"),
            field("added_rows_count", 512, "long"), field("existing_rows_count", 513, "long"),
            field("deleted_rows_count", 514, "long"), field("partitions", 507, partitions, true),
            field("key_metadata", 519, "bytes", true)});
        return ojson{{"type", "record"}, {"name", "manifest_file"}, {"fields", fields}}.dump();
    }();
    return text;
}

namespace {

// The parsed Avro schema of manifest entries for a table schema and partition spec (given as
// their JSON text), built and parsed once per process rather than once per manifest: every
// commit writes a manifest with the same schema. Bounded; thread-safe.
result<std::shared_ptr<const avro::schema>> entry_schema_for(const schema& s, const partition_spec& spec,
                                                             const std::string& schema_json,
                                                             const std::string& spec_json) {
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<const avro::schema>> memo;
    auto key = schema_json + '\n' + spec_json;
    {
        std::lock_guard g(mu);
        if (auto it = memo.find(key); it != memo.end()) return it->second;
    }
    auto text = FLOE_TRY(manifest_entry_avro_schema(s, spec));
    auto parsed = std::make_shared<const avro::schema>(FLOE_TRY_CTX(avro::schema::parse(text), "manifest schema"));
    std::lock_guard g(mu);
    if (memo.size() >= 64) memo.clear();
    memo.emplace(std::move(key), parsed);
    return parsed;
}

} // namespace

result<written_manifest> write_manifest(const manifest_context& ctx,
                                        const std::vector<manifest_entry>& entries) {
    FLOE_ASSERT(ctx.table_schema && ctx.spec, "manifest context without schema or spec");
    auto schema_json = to_json(*ctx.table_schema).dump();
    auto spec_json = to_json(*ctx.spec)["fields"].dump();
    auto avro_schema = FLOE_TRY(entry_schema_for(*ctx.table_schema, *ctx.spec, schema_json, spec_json));
    auto types = FLOE_TRY(ctx.spec->result_types(*ctx.table_schema));

    avro::writer_options o;
    o.codec = ctx.codec;
    o.metadata = {{"schema", std::move(schema_json)},
                  {"schema-id", std::to_string(ctx.table_schema->schema_id)},
                  {"partition-spec", std::move(spec_json)},
                  {"partition-spec-id", std::to_string(ctx.spec->spec_id)},
                  {"format-version", "2"},
                  {"content", "data"}};
    auto w = FLOE_TRY(avro::container_writer::create(*avro_schema, o));

    written_manifest out;
    auto& mf = out.entry;
    mf.partition_spec_id = ctx.spec->spec_id;
    mf.content = 0;
    mf.sequence_number = ctx.sequence_number;
    mf.min_sequence_number = ctx.sequence_number;
    mf.added_snapshot_id = ctx.snapshot_id;
    std::vector<field_summary> summaries(ctx.spec->fields.size());
    for (auto& s : summaries) s.contains_nan = false;
    bool first_live = true;

    for (auto& e : entries) {
        if (e.file.partition.size() != ctx.spec->fields.size())
            return fail(errc::invalid_argument, "data file {} has {} partition values, spec has {}",
                        e.file.file_path, e.file.partition.size(), ctx.spec->fields.size());
        bool added = e.status == entry_status::added;
        auto snap = added ? std::optional<int64_t>(ctx.snapshot_id) : e.snapshot_id;
        if (!added && (!e.snapshot_id || !e.sequence_number))
            return fail(errc::invalid_argument, "existing/deleted entry {} without its snapshot id and "
                        "sequence number", e.file.file_path);
        auto seq = added ? e.sequence_number : e.sequence_number;
        auto fseq = added ? e.file_sequence_number : e.file_sequence_number;
        FLOE_TRY_CTX(w.append(datum::record({datum::int32(static_cast<int32_t>(e.status)), opt_long(snap),
                                             opt_long(seq), opt_long(fseq), data_file_datum(e.file)})),
                     "manifest entry {}", e.file.file_path);
        switch (e.status) {
        case entry_status::added:
            ++mf.added_files_count;
            mf.added_rows_count += e.file.record_count;
            break;
        case entry_status::existing:
            ++mf.existing_files_count;
            mf.existing_rows_count += e.file.record_count;
            break;
        case entry_status::deleted:
            ++mf.deleted_files_count;
            mf.deleted_rows_count += e.file.record_count;
            break;
        }
        if (e.status != entry_status::deleted) {
            int64_t data_seq = seq.value_or(ctx.sequence_number);
            mf.min_sequence_number = first_live ? data_seq : std::min(mf.min_sequence_number, data_seq);
            first_live = false;
        }
        for (size_t i = 0; i < summaries.size(); ++i) {
            auto& v = e.file.partition[i];
            auto& s = summaries[i];
            if (v.is_null()) {
                s.contains_null = true;
                continue;
            }
            auto b = FLOE_TRY_CTX(serialize_value(*types[i], v), "partition field {}", ctx.spec->fields[i].name);
            if (!s.lower_bound || compare_serialized(*types[i], b, *s.lower_bound) < 0) s.lower_bound = b;
            if (!s.upper_bound || compare_serialized(*types[i], b, *s.upper_bound) > 0) s.upper_bound = b;
        }
    }
    mf.partitions = std::move(summaries);
    out.bytes = FLOE_TRY(w.finish());
    mf.manifest_length = static_cast<int64_t>(out.bytes.size());
    return out;
}

result<std::vector<manifest_entry>> read_manifest(bytes_view bytes, const std::string& name,
                                                  const manifest_file* list_entry) {
    auto r = FLOE_TRY(avro::container_reader::open(bytes, name));
    auto& root = r.writer_schema().root();
    if (root.kind != avro::type::record || index_of(root, 2) < 0 || index_of(root, 0) < 0)
        return fail(errc::corrupt, "manifest {}: schema has no status/data_file fields", name);
    // The manifest's spec: its list entry says, else its own "partition-spec-id" metadata.
    int32_t spec_id = 0;
    if (list_entry) {
        spec_id = list_entry->partition_spec_id;
    } else {
        for (auto& [k, v] : r.metadata())
            if (k == "partition-spec-id") {
                int32_t n = 0;
                auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
                if (ec == std::errc() && p == v.data() + v.size()) spec_id = n;
            }
    }
    std::vector<manifest_entry> out;
    datum d;
    while (FLOE_TRY(r.next(d))) {
        auto ctx_err = [&](error e) {
            return std::unexpected(std::move(e).with_context("manifest {}: entry {}", name, out.size()));
        };
        view top{&root, &d};
        manifest_entry e;
        auto st = need_long(top, 0, "status");
        if (!st) return ctx_err(st.error());
        if (*st < 0 || *st > 2) return ctx_err(make_error(errc::corrupt, "status {}", *st));
        e.status = static_cast<entry_status>(*st);
        e.snapshot_id = opt(top, 1);
        e.sequence_number = opt(top, 3);
        e.file_sequence_number = opt(top, 4);
        auto df = top.sub(2);
        if (!df.value || !df.schema || df.schema->kind != avro::type::record)
            return ctx_err(make_error(errc::corrupt, "no data_file"));
        auto& f = e.file;
        auto read_file = [&]() -> result<void> {
            if (auto* c = df.get(134)) f.content = static_cast<file_content>(c->as_int());
            f.file_path = FLOE_TRY(need_string(df, 100, "file_path"));
            f.file_format = FLOE_TRY(need_string(df, 101, "file_format"));
            if (auto* p = df.get(102)) f.partition = p->children();
            f.record_count = FLOE_TRY(need_long(df, 103, "record_count"));
            f.file_size_in_bytes = FLOE_TRY(need_long(df, 104, "file_size_in_bytes"));
            f.column_sizes = FLOE_TRY(read_int_map<int64_t>(df, 108));
            f.value_counts = FLOE_TRY(read_int_map<int64_t>(df, 109));
            f.null_value_counts = FLOE_TRY(read_int_map<int64_t>(df, 110));
            f.nan_value_counts = FLOE_TRY(read_int_map<int64_t>(df, 137));
            f.lower_bounds = FLOE_TRY(read_int_map<std::string>(df, 125));
            f.upper_bounds = FLOE_TRY(read_int_map<std::string>(df, 128));
            if (auto* k = df.get(131)) f.key_metadata = k->as_string();
            if (auto* s = df.get(132)) {
                f.split_offsets.emplace();
                for (auto& o : s->children()) f.split_offsets->push_back(o.as_long());
            }
            if (auto* s = df.get(135)) {
                f.equality_ids.emplace();
                for (auto& o : s->children()) f.equality_ids->push_back(o.as_int());
            }
            if (auto* s = df.get(140)) f.sort_order_id = s->as_int();
            return {};
        };
        if (auto ok = read_file(); !ok) return ctx_err(ok.error());
        f.spec_id = spec_id;
        // v2 inheritance: added entries take what they left null from the list entry.
        if (list_entry) {
            if (!e.snapshot_id) e.snapshot_id = list_entry->added_snapshot_id;
            if (e.status == entry_status::added) {
                if (!e.sequence_number) e.sequence_number = list_entry->sequence_number;
                if (!e.file_sequence_number) e.file_sequence_number = list_entry->sequence_number;
            }
        }
        out.push_back(std::move(e));
    }
    return out;
}

result<byte_buffer> write_manifest_list(int64_t snapshot_id, std::optional<int64_t> parent_id,
                                        int64_t sequence_number,
                                        const std::vector<manifest_file>& manifests, avro::codec codec) {
    static const auto s = std::move(*avro::schema::parse(manifest_list_avro_schema()));
    avro::writer_options o;
    o.codec = codec;
    o.metadata = {{"snapshot-id", std::to_string(snapshot_id)},
                  {"parent-snapshot-id", parent_id ? std::to_string(*parent_id) : "null"},
                  {"sequence-number", std::to_string(sequence_number)},
                  {"format-version", "2"}};
    auto w = FLOE_TRY(avro::container_writer::create(s, o));
    for (auto& m : manifests) {
        datum parts = datum::null();
        if (m.partitions) {
            parts = datum::array();
            for (auto& p : *m.partitions)
                parts.push(datum::record({datum::boolean(p.contains_null),
                                          p.contains_nan ? datum::boolean(*p.contains_nan) : datum::null(),
                                          p.lower_bound ? datum::bytes(*p.lower_bound) : datum::null(),
                                          p.upper_bound ? datum::bytes(*p.upper_bound) : datum::null()}));
        }
        FLOE_TRY_CTX(w.append(datum::record(
                         {datum::string(m.manifest_path), datum::int64(m.manifest_length),
                          datum::int32(m.partition_spec_id), datum::int32(m.content),
                          datum::int64(m.sequence_number), datum::int64(m.min_sequence_number),
                          datum::int64(m.added_snapshot_id), datum::int32(m.added_files_count),
                          datum::int32(m.existing_files_count), datum::int32(m.deleted_files_count),
                          datum::int64(m.added_rows_count), datum::int64(m.existing_rows_count),
                          datum::int64(m.deleted_rows_count), std::move(parts),
                          m.key_metadata ? datum::bytes(*m.key_metadata) : datum::null()})),
                     "manifest list entry {}", m.manifest_path);
    }
    return w.finish();
}

result<std::vector<manifest_file>> read_manifest_list(bytes_view bytes, const std::string& name) {
    auto r = FLOE_TRY(avro::container_reader::open(bytes, name));
    auto& root = r.writer_schema().root();
    if (root.kind != avro::type::record || index_of(root, 500) < 0)
        return fail(errc::corrupt, "manifest list {}: schema has no manifest_path", name);
    std::vector<manifest_file> out;
    datum d;
    while (FLOE_TRY(r.next(d))) {
        view v{&root, &d};
        auto read_one = [&]() -> result<manifest_file> {
            manifest_file m;
            m.manifest_path = FLOE_TRY(need_string(v, 500, "manifest_path"));
            m.manifest_length = FLOE_TRY(need_long(v, 501, "manifest_length"));
            m.partition_spec_id = static_cast<int32_t>(FLOE_TRY(need_long(v, 502, "partition_spec_id")));
            m.content = static_cast<int32_t>(opt(v, 517).value_or(0));
            m.sequence_number = opt(v, 515).value_or(0);
            m.min_sequence_number = opt(v, 516).value_or(0);
            m.added_snapshot_id = FLOE_TRY(need_long(v, 503, "added_snapshot_id"));
            m.added_files_count = static_cast<int32_t>(opt(v, 504).value_or(0));
            m.existing_files_count = static_cast<int32_t>(opt(v, 505).value_or(0));
            m.deleted_files_count = static_cast<int32_t>(opt(v, 506).value_or(0));
            m.added_rows_count = opt(v, 512).value_or(0);
            m.existing_rows_count = opt(v, 513).value_or(0);
            m.deleted_rows_count = opt(v, 514).value_or(0);
            if (auto* p = v.get(507)) {
                auto ps = v.sub(507);
                const avro::node* item =
                    ps.schema && ps.schema->kind == avro::type::array ? ps.schema->items : nullptr;
                if (!item || p->type() != datum::kind::array)
                    return fail(errc::corrupt, "partitions is not an array");
                m.partitions.emplace();
                for (auto& s : p->children()) {
                    view sv{item, &s};
                    field_summary fs;
                    auto* cn = sv.get(509);
                    if (!cn || cn->type() != datum::kind::boolean)
                        return fail(errc::corrupt, "partition summary without contains_null");
                    fs.contains_null = cn->as_bool();
                    if (auto* x = sv.get(518)) fs.contains_nan = x->as_bool();
                    if (auto* x = sv.get(510)) fs.lower_bound = x->as_string();
                    if (auto* x = sv.get(511)) fs.upper_bound = x->as_string();
                    m.partitions->push_back(std::move(fs));
                }
            }
            if (auto* k = v.get(519)) m.key_metadata = k->as_string();
            return m;
        };
        auto m = read_one();
        if (!m) return std::unexpected(std::move(m).error().with_context("manifest list {}: entry {}", name, out.size()));
        out.push_back(std::move(*m));
    }
    return out;
}

} // namespace floe::iceberg
