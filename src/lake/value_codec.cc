#include "lake/value_codec.h"

#include "lake/typed_rows.h"
#include "schema/iceberg_mapping.h"
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

/// The schema root seen as one field `data` of a wrapper record: the mapping, the evolution and
/// the decode plan then put the value's fields inside the `data` struct column (the bytes of a
/// record are its fields' bytes: the wrapper reads the same payload).
struct wrapped_root {
    schema::avro_node node;
    explicit wrapped_root(const schema::avro_node& root) {
        node.kind = schema::avro_kind::record;
        node.name = node.full_name = "floe_value";
        schema::avro_field f;
        f.name = std::string(data_column);
        f.type = &root;
        node.fields.push_back(std::move(f));
    }
};

/// The `data` field of a table schema, as the one typed column a plan writes (empty: none yet).
std::vector<iceberg::nested_field> typed_columns_of(const iceberg::schema& table) {
    for (auto& f : table.fields)
        if (f.name == data_column) return {f};
    return {};
}

/// A schema id's state in this append: decodable against the table schema (a plan), or not (why).
struct schema_state {
    std::shared_ptr<const schema::parsed_schema> parsed;
    std::unique_ptr<wrapped_root> root;
    std::optional<dead_letter> refused;
    std::shared_ptr<const avro_row_plan> plan;
};

class registry_codec final : public value_codec {
public:
    registry_codec(schema::registry_client& registry, value_decoding how, const iceberg::schema& table,
                   int32_t last_column_id)
        : _registry(registry), _how(std::move(how)), _table(table), _last_id(last_column_id) {}

    result<void> init() { return rebuild_layout(); }

    result<std::optional<dead_letter>> decode(std::optional<std::string_view> value) override {
        _pending = nullptr;
        if (!value) return std::nullopt;
        int32_t id = 0;
        std::string_view payload;
        if (_how.how == value_decoding::mode::schema_id) {
            auto w = parse_confluent(*value);
            if (!w) return dead_letter{std::string(w.error().reason), std::move(w.error().detail), w.error().schema_id};
            id = w->schema_id;
            payload = w->payload;
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
        if (auto bad = st->plan->validate(payload))
            return dead_letter{std::string(decode_reason::decode_error), std::move(*bad), id};
        _pending = st;
        _payload = payload;
        return std::nullopt;
    }

    void write(parquet::file_writer& w) override {
        if (!_pending) {
            // A tombstone: a null `data` struct, every leaf below it undefined at level 0.
            for (size_t i = parquet::message_col::count; i < w.num_columns(); ++i) w.column(i).add_null(0, 0);
            return;
        }
        _pending->plan->write(_payload, w);
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
            st->refused = dead_letter{std::string(decode_reason::unknown_schema_id),
                                      fmt::format("the registry has no schema with id {}", id), id};
        } else if ((*parsed)->type() != schema::schema_type::avro) {
            st->refused = dead_letter{"unsupported-schema-type",
                                      fmt::format("schema {} is {}: only Avro values are decoded into typed columns "
                                                  "so far",
                                                  id, schema::to_string((*parsed)->type())),
                                      id};
        } else if ((*parsed)->avro()->root().kind != schema::avro_kind::record) {
            st->refused = dead_letter{std::string(decode_reason::incompatible_schema),
                                      fmt::format("schema {} is a {}, not a record: it has no fields to make columns of",
                                                  id, schema::to_string((*parsed)->avro()->root().kind)),
                                      id};
        } else {
            st->parsed = *parsed;
            st->root = std::make_unique<wrapped_root>(st->parsed->avro()->root());
            FLOE_TRY(fit_table(id, *st));
        }
        auto* raw = st.get();
        _states.emplace(id, std::move(st));
        return raw;
    }

    /// Maps the schema to Iceberg columns, evolves the table schema when it needs more (new
    /// optional fields, promotions), and builds the decode plan; or says why it cannot.
    result<void> fit_table(int32_t id, schema_state& st) {
        auto refuse = [&](std::string why) {
            st.refused = dead_letter{std::string(decode_reason::incompatible_schema),
                                     fmt::format("schema {} cannot become a version of table column `data`: {}; its "
                                                 "records go to the dead-letter table (register a version Iceberg can "
                                                 "express, or use a new topic)",
                                                 id, why),
                                     id};
        };
        auto fields = schema::avro_to_iceberg(st.root->node);
        if (!fields) {
            refuse(fields.error().message());
            return {};
        }
        auto ev = schema::evolve(_table, *fields, _last_id);
        if (ev.outcome == schema::evolution::kind::incompatible) {
            refuse(ev.reason);
            return {};
        }
        if (ev.outcome == schema::evolution::kind::updated) {
            // (the new schema's id is given when it is committed: commit_evolved_schema)
            _table = std::move(ev.schema);
            _last_id = ev.last_column_id;
            _evolved = true;
            FLOE_TRY(rebuild_layout());
            // Plans write the table's leaves: those of the other ids are built again.
            for (auto& [other, s] : _states)
                if (s->plan) {
                    auto p = avro_row_plan::make(s->root->node, typed_columns_of(_table), parquet::message_col::count);
                    if (!p) return fail(errc::internal, "schema {} no longer fits the evolved table: {}", other, p.error().detail);
                    s->plan = *p;
                }
        }
        auto plan = avro_row_plan::make(st.root->node, typed_columns_of(_table), parquet::message_col::count);
        if (!plan) {
            st.refused = dead_letter{std::string(plan.error().reason), plan.error().detail, id};
            return {};
        }
        st.plan = *plan;
        return {};
    }

    /// Floe's message columns (exactly as a raw file has them) and then `data`.
    result<void> rebuild_layout() {
        auto root = parquet::message_schema_node();
        for (auto& f : typed_columns_of(_table)) root.children.push_back(parquet_node(f));
        auto made = FLOE_TRY_CTX(parquet::schema::make(std::move(root)), "the Parquet layout of table schema");
        _layout = std::make_shared<const parquet::schema>(std::move(made));
        ++_layout_version;
        return {};
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
};

} // namespace

result<std::unique_ptr<value_codec>> value_codec::make(schema::registry_client& registry, value_decoding how,
                                                       const iceberg::schema& table, int32_t last_column_id) {
    auto c = std::make_unique<registry_codec>(registry, std::move(how), table, last_column_id);
    FLOE_TRY(c->init());
    return std::unique_ptr<value_codec>(std::move(c));
}

} // namespace floe::lake
