#include "lake/value_codec.h"

#include "schema/parsed_schema.h"
#include "schema/registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>

namespace floe::lake {

const std::shared_ptr<const parquet::schema>& dlq_layout() {
    static const std::shared_ptr<const parquet::schema> s = [] {
        using pt = parquet::physical_type;
        using lt = parquet::logical_type;
        auto root = parquet::message_schema_node();
        root.children.push_back(parquet::leaf_node("error_reason", iceberg::field_ids::error_reason,
                                                   parquet::repetition::required, pt::byte_array, lt::string));
        root.children.push_back(parquet::leaf_node("error_detail", iceberg::field_ids::error_detail,
                                                   parquet::repetition::optional, pt::byte_array, lt::string));
        root.children.push_back(parquet::leaf_node("schema_id", iceberg::field_ids::schema_id,
                                                   parquet::repetition::optional, pt::int32));
        auto made = parquet::schema::make(std::move(root));
        FLOE_ASSERT(made.has_value(), "the dead-letter layout is a valid Parquet schema");
        return std::make_shared<const parquet::schema>(std::move(*made));
    }();
    return s;
}

} // namespace floe::lake

namespace floe::lake {

namespace {

/// Confluent's wire format: magic byte 0, then the schema id as 4 bytes big-endian.
constexpr size_t wire_header = 5;

std::string hex_prefix(std::string_view v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 8; ++i) out += fmt::format("{:02x}", static_cast<uint8_t>(v[i]));
    return out;
}

/// The table schema with `data` replaced by a struct of `fields` (added when absent).
iceberg::schema with_data(const iceberg::schema& table, std::vector<iceberg::nested_field> fields, int32_t data_id) {
    iceberg::schema out = table;
    auto t = std::make_shared<iceberg::type>();
    t->id = iceberg::type_id::struct_;
    t->fields = std::move(fields);
    for (auto& f : out.fields)
        if (f.name == data_column) {
            f.field_type = t;
            return out;
        }
    out.fields.push_back({data_id, std::string(data_column), false, t, "the record's value, decoded with the schema registry"});
    return out;
}

/// The struct fields of `data` in a table schema (empty when the table is not typed yet).
std::vector<iceberg::nested_field> data_fields(const iceberg::schema& table) {
    for (auto& f : table.fields)
        if (f.name == data_column && f.field_type && f.field_type->id == iceberg::type_id::struct_)
            return f.field_type->fields;
    return {};
}

/// A schema id's state in this append: decodable against the table schema (a plan), or not (why).
struct schema_state {
    std::shared_ptr<const schema::parsed_schema> parsed;
    std::optional<dead_letter> refused;
    std::unique_ptr<typed_plan> plan;
};

class registry_codec final : public value_codec {
public:
    registry_codec(schema::registry_client& registry, value_decoding how, const iceberg::schema& table,
                   int32_t last_column_id)
        : _registry(registry), _how(std::move(how)), _table(table), _last_id(last_column_id) {
        rebuild_layout();
    }

    result<std::optional<dead_letter>> decode(std::optional<std::string_view> value) override {
        _pending = nullptr;
        _tombstone = !value;
        if (!value) return std::nullopt;
        int32_t id = 0;
        std::string_view payload;
        if (_how.how == value_decoding::mode::schema_id) {
            if (value->size() < wire_header || (*value)[0] != 0)
                return dead_letter{"bad-magic-byte",
                                   value->size() < wire_header
                                       ? fmt::format("{} byte(s) (0x{}): shorter than the 5-byte header of "
                                                     "Confluent's wire format",
                                                     value->size(), hex_prefix(*value))
                                       : fmt::format("first byte 0x{:02x}, expected 0x00 (Confluent's wire format: "
                                                     "magic byte 0, 4-byte schema id)",
                                                     static_cast<uint8_t>((*value)[0])),
                                   std::nullopt};
            auto b = reinterpret_cast<const uint8_t*>(value->data());
            id = static_cast<int32_t>((uint32_t(b[1]) << 24) | (uint32_t(b[2]) << 16) | (uint32_t(b[3]) << 8) | b[4]);
            payload = value->substr(wire_header);
        } else {
            if (!_latest) {
                auto l = _registry.latest(_how.subject);
                if (!l) {
                    if (l.error().code() != errc::not_found) return std::unexpected(l.error());
                    _latest_missing = fmt::format("subject {} has no schema version", _how.subject);
                    _latest = -1;
                } else {
                    _latest = l->id;
                }
            }
            if (*_latest < 0) return dead_letter{"unknown-subject", _latest_missing, std::nullopt};
            id = *_latest;
            payload = *value;
        }
        auto* st = FLOE_TRY(state_for(id));
        if (st->refused) return *st->refused;
        if (auto bad = st->plan->validate(payload); !bad)
            return dead_letter{"decode-error", bad.error().message(), id};
        _pending = st;
        _payload = payload;
        return std::nullopt;
    }

    void write(parquet::file_writer& w) override {
        constexpr size_t first = parquet::message_col::count;
        if (_tombstone || !_pending) {
            // A null `data` struct: every leaf below it is undefined at level 0.
            for (size_t i = first; i < w.num_columns(); ++i) w.column(i).add_null(0, 0);
            return;
        }
        _pending->plan->write(_payload, w, first);
    }

    const iceberg::schema& table_schema() const override { return _table; }
    int32_t last_column_id() const override { return _last_id; }
    bool evolved() const override { return _evolved; }
    const std::shared_ptr<const parquet::schema>& layout() const override { return _layout; }
    uint64_t layout_version() const override { return _layout_version; }

private:
    result<schema_state*> state_for(int32_t id) {
        if (auto it = _states.find(id); it != _states.end()) return it->second.get();
        auto st = std::make_unique<schema_state>();
        auto parsed = _registry.get_by_id(id);
        if (!parsed) {
            if (parsed.error().code() != errc::not_found) return std::unexpected(parsed.error());
            st->refused = dead_letter{"unknown-schema-id", fmt::format("the registry has no schema with id {}", id), id};
        } else if ((*parsed)->type() != schema::schema_type::avro) {
            st->refused = dead_letter{"unsupported-schema-type",
                                      fmt::format("schema {} is {}: only Avro values are decoded into typed columns "
                                                  "so far",
                                                  id, schema::to_string((*parsed)->type())),
                                      id};
        } else {
            st->parsed = *parsed;
            FLOE_TRY(fit_table(id, *st));
        }
        auto* raw = st.get();
        _states.emplace(id, std::move(st));
        return raw;
    }

    /// Maps the schema to Iceberg fields, evolves the table schema if it needs more (new
    /// optional fields, promotions), and builds the decode plan; or says why it cannot.
    result<void> fit_table(int32_t id, schema_state& st) {
        auto fields = avro_to_iceberg(*st.parsed->avro());
        if (!fields) {
            st.refused = dead_letter{"incompatible-schema", fields.error().message(), id};
            return {};
        }
        auto current = data_fields(_table);
        int32_t last = _last_id;
        auto evolved = evolve_fields(current, std::move(*fields), last);
        if (!evolved) {
            st.refused = dead_letter{"incompatible-schema",
                                     fmt::format("schema {} cannot become a version of table column `data`: {}; "
                                                 "its records go to the dead-letter table (register a version "
                                                 "Iceberg can express, or use a new topic)",
                                                 id, evolved.error().message()),
                                     id};
            spdlog::warn("typed tables: {}", st.refused->detail);
            return {};
        }
        if (evolved->changed) {
            auto existing = _table.find(data_column);
            int32_t data_id = existing ? existing->id : ++last;
            // (the new schema's id is given when it is committed: typed_append::commit_schema)
            _table = with_data(_table, std::move(evolved->fields), data_id);
            _last_id = std::max(last, data_id);
            _evolved = true;
            rebuild_layout();
            // Plans are built against the table's leaves: those of other ids are rebuilt.
            for (auto& [other, s] : _states)
                if (s->plan) s->plan = FLOE_TRY(make_plan(*s->parsed->avro(), _table));
        }
        st.plan = FLOE_TRY(make_plan(*st.parsed->avro(), _table));
        return {};
    }

    void rebuild_layout() {
        _layout = std::make_shared<const parquet::schema>(FLOE_ASSERT_OK(typed_layout(_table)));
        ++_layout_version;
    }

    schema::registry_client& _registry;
    value_decoding _how;
    iceberg::schema _table;
    int32_t _last_id;
    bool _evolved = false;
    std::shared_ptr<const parquet::schema> _layout;
    uint64_t _layout_version = 0;
    std::map<int32_t, std::unique_ptr<schema_state>> _states;
    std::optional<int32_t> _latest;
    std::string _latest_missing;
    schema_state* _pending = nullptr;
    std::string_view _payload;
    bool _tombstone = false;
};

} // namespace

result<std::unique_ptr<value_codec>> value_codec::make(schema::registry_client& registry, value_decoding how,
                                                       const iceberg::schema& table, int32_t last_column_id) {
    return std::unique_ptr<value_codec>(std::make_unique<registry_codec>(registry, std::move(how), table, last_column_id));
}

} // namespace floe::lake
