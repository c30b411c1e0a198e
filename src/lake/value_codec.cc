#include "lake/value_codec.h"

#include "lake/typed_rows.h"
#include "lake/typed_rows_json.h"
#include "lake/typed_rows_protobuf.h"
#include "schema/json_mapping.h"
#include "schema/protobuf_mapping.h"
#include "schema/iceberg_mapping.h"
#include "schema/parsed_schema.h"
#include "schema/registry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fmt/ranges.h>

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

result<std::shared_ptr<const parquet::schema>> table_layout(const iceberg::schema& s) {
    if (s.find("error_reason")) return dlq_layout();
    const auto& floe = iceberg::floe_table_schema();
    auto root = parquet::message_schema_node();
    for (auto& f : s.fields)
        if (!floe.find(f.name)) root.children.push_back(parquet_node(f));
    auto made = FLOE_TRY_CTX(parquet::schema::make(std::move(root)), "the Parquet layout of table schema {}", s.schema_id);
    return std::make_shared<const parquet::schema>(std::move(made));
}

} // namespace floe::lake

namespace floe::lake {

namespace {

/// The schema root seen as one field `data` (or `key_data`) of a wrapper record: the mapping,
/// the evolution and the decode plan then put the record's fields inside that struct column
/// (the bytes of a record are its fields' bytes: the wrapper reads the same payload).
struct wrapped_root {
    schema::avro_node node;
    wrapped_root(const schema::avro_node& root, std::string_view column) {
        node.kind = schema::avro_kind::record;
        node.name = node.full_name = "floe_value";
        schema::avro_field f;
        f.name = std::string(column);
        f.type = &root;
        node.fields.push_back(std::move(f));
    }
};

/// The field `column` of a table schema, as the one typed column a plan writes (empty: none yet).
std::vector<iceberg::nested_field> typed_columns_of(const iceberg::schema& table, std::string_view column) {
    for (auto& f : table.fields)
        if (f.name == column) return {f};
    return {};
}

/// The leaf index where `column` starts in table_layout(table) (Floe's leaves, then each further
/// top-level field's in schema order); nullopt when the table has no such column.
std::optional<size_t> first_leaf_of(const iceberg::schema& table, std::string_view column) {
    const auto& floe = iceberg::floe_table_schema();
    size_t at = parquet::message_col::count;
    for (auto& f : table.fields) {
        if (floe.find(f.name)) continue;
        if (f.name == column) return at;
        at += leaf_count(*f.field_type);
    }
    return std::nullopt;
}

/// A schema id's state in this append (for Protobuf, one message of it): decodable against the
/// table schema (a plan), or not (why).
struct schema_state {
    std::shared_ptr<const schema::parsed_schema> parsed;
    std::unique_ptr<wrapped_root> root;                   ///< Avro
    const google::protobuf::Descriptor* message = nullptr; ///< Protobuf: the message values hold
    std::optional<dead_letter> refused;
    std::shared_ptr<const row_plan> plan;
};

/// The record's columns, as the one field `column` (a struct of the record's fields).
result<std::vector<iceberg::nested_field>> column_fields(const schema_state& st, std::string_view column) {
    if (st.root) return schema::avro_to_iceberg(st.root->node);
    std::vector<iceberg::nested_field> inner;
    if (st.message)
        inner = FLOE_TRY(schema::protobuf_to_iceberg(*st.message));
    else
        inner = FLOE_TRY(schema::json_to_iceberg(*st.parsed->json()));
    if (inner.empty()) return fail(errc::invalid_argument, "the record has no field with data to make a column of");
    auto t = std::make_shared<iceberg::type>();
    t->id = iceberg::type_id::struct_;
    t->fields = std::move(inner);
    return std::vector<iceberg::nested_field>{
        iceberg::nested_field{.id = 0, .name = std::string(column), .required = false, .field_type = t}};
}

/// The decode plan of `st` against the table's column `column`.
std::expected<std::shared_ptr<const row_plan>, decode_failure> plan_for(const schema_state& st,
                                                                        const iceberg::schema& table,
                                                                        std::string_view column) {
    auto cols = typed_columns_of(table, column);
    auto first = first_leaf_of(table, column);
    if (cols.empty() || !first)
        return std::unexpected(decode_failure{decode_reason::incompatible_schema,
                                              fmt::format("the table has no `{}` column", column), std::nullopt});
    if (st.root) {
        auto p = avro_row_plan::make(st.root->node, cols, *first);
        if (!p) return std::unexpected(std::move(p.error()));
        return std::shared_ptr<const row_plan>(*p);
    }
    if (st.message) {
        auto p = protobuf_row_plan::make_in_column(*st.message, cols[0], *first);
        if (!p) return std::unexpected(std::move(p.error()));
        return std::shared_ptr<const row_plan>(*p);
    }
    auto p = json_row_plan::make_in_column(*st.parsed->json(), cols[0], *first);
    if (!p) return std::unexpected(std::move(p.error()));
    return std::shared_ptr<const row_plan>(*p);
}

/// What a record's value (or key) decodes through: its mode, subject, column, and the states
/// of the schema ids met.
struct codec_side {
    std::string column;
    value_decoding::mode how = value_decoding::mode::raw;
    std::string subject;
    std::string protobuf_message;
    std::string what; ///< "value" or "key": error details say which
    std::map<std::pair<int32_t, std::string>, std::unique_ptr<schema_state>> states;
    std::optional<int32_t> latest;
    std::string latest_missing;
    schema_state* pending = nullptr; ///< the accepted record's plan (nullptr: a null record)
    std::string_view payload;
    bool active() const noexcept { return how != value_decoding::mode::raw; }
};

class registry_codec final : public value_codec {
public:
    registry_codec(schema::registry_client& registry, const value_decoding& how, const iceberg::schema& table,
                   int32_t last_column_id)
        : _registry(registry), _table(table), _last_id(last_column_id) {
        _value.column = std::string(data_column);
        _value.how = how.how;
        _value.subject = how.subject;
        _value.protobuf_message = how.protobuf_message;
        _value.what = "value";
        _key.column = std::string(key_data_column);
        _key.how = how.key_how;
        _key.subject = how.key_subject;
        _key.protobuf_message = how.key_protobuf_message;
        _key.what = "key";
    }

    result<void> init() { return rebuild_layout(); }

    result<std::optional<dead_letter>> decode(std::optional<std::string_view> value,
                                              std::optional<std::string_view> key) override {
        _value.pending = _key.pending = nullptr;
        if (_value.active())
            if (auto dead = FLOE_TRY(decode_side(_value, value))) return dead;
        if (_key.active())
            if (auto dead = FLOE_TRY(decode_side(_key, key))) {
                // Keys fail with the same reasons as values; the detail says it was the key.
                dead->detail = "key: " + dead->detail;
                return dead;
            }
        return std::nullopt;
    }

    void write(parquet::file_writer& w) override {
        for (auto* side : {&_value, &_key}) {
            if (side->active() && side->pending) {
                side->pending->plan->write(side->payload, w);
                continue;
            }
            // A null value (a tombstone) or key, or a side no longer decoded whose column the
            // table has: a null struct, every leaf below it undefined at level 0. No column (no
            // record of this side decoded so far): nothing to write.
            auto cols = typed_columns_of(_table, side->column);
            auto first = first_leaf_of(_table, side->column);
            if (cols.empty() || !first) continue;
            for (size_t i = *first, n = *first + leaf_count(*cols[0].field_type); i < n; ++i) w.column(i).add_null(0, 0);
        }
    }

    const iceberg::schema& table_schema() const override { return _table; }
    int32_t last_column_id() const override { return _last_id; }
    bool evolved() const override { return _evolved; }
    const std::shared_ptr<const parquet::schema>& layout() const override { return _layout; }
    uint64_t layout_version() const override { return _layout_version; }

private:
    /// Validates one side's record; sets side.pending when it decodes.
    result<std::optional<dead_letter>> decode_side(codec_side& side, std::optional<std::string_view> value) {
        side.pending = nullptr;
        if (!value) return std::nullopt;
        int32_t id = 0;
        std::string_view payload;
        if (side.how == value_decoding::mode::schema_id) {
            auto w = parse_confluent(*value);
            if (!w) return dead_letter{std::string(w.error().reason), std::move(w.error().detail), w.error().schema_id};
            id = w->schema_id;
            payload = w->payload;
        } else {
            if (!side.latest) {
                auto l = _registry.latest(side.subject);
                if (!l) {
                    if (l.error().code() != errc::not_found) return std::unexpected(l.error());
                    side.latest_missing = fmt::format("subject {} has no schema version", side.subject);
                    side.latest = -1;
                } else {
                    side.latest = l->id;
                }
            }
            if (*side.latest < 0) return dead_letter{"unknown-subject", side.latest_missing, std::nullopt};
            id = *side.latest;
            payload = *value;
        }
        auto parsed = FLOE_TRY(schema_by_id(id));
        std::string message; // Protobuf: which message of the schema
        if (parsed && parsed->type() == schema::schema_type::protobuf) {
            if (side.how == value_decoding::mode::schema_id) {
                auto f = parse_message_indexes(payload);
                if (!f)
                    return dead_letter{std::string(decode_reason::decode_error),
                                       fmt::format("Protobuf message indexes: {}", f.error()), id};
                auto* d = parsed->protobuf()->message_at(f->indexes);
                if (!d)
                    return dead_letter{std::string(decode_reason::decode_error),
                                       fmt::format("message indexes [{}] name no message of schema {}",
                                                   fmt::join(f->indexes, ", "), id),
                                       id};
                message = d->full_name();
                payload = f->payload;
            } else {
                message = side.protobuf_message;
            }
        }
        auto* st = FLOE_TRY(state_for(side, id, parsed, message));
        if (st->refused) return *st->refused;
        if (auto bad = st->plan->validate(payload))
            return dead_letter{std::string(decode_reason::decode_error), std::move(*bad), id};
        side.pending = st;
        side.payload = payload;
        return std::nullopt;
    }

    /// The registry's schema `id` (cached for the append); nullptr when it has none.
    result<std::shared_ptr<const schema::parsed_schema>> schema_by_id(int32_t id) {
        if (auto it = _parsed.find(id); it != _parsed.end()) return it->second;
        auto parsed = _registry.get_by_id(id);
        if (!parsed) {
            if (parsed.error().code() != errc::not_found) return std::unexpected(parsed.error());
            return std::shared_ptr<const schema::parsed_schema>{};
        }
        _parsed.emplace(id, *parsed);
        return *parsed;
    }

    result<schema_state*> state_for(codec_side& side, int32_t id,
                                    const std::shared_ptr<const schema::parsed_schema>& parsed,
                                    const std::string& message) {
        auto key = std::make_pair(id, message);
        if (auto it = side.states.find(key); it != side.states.end()) return it->second.get();
        auto st = std::make_unique<schema_state>();
        st->parsed = parsed;
        if (!parsed) {
            st->refused = dead_letter{std::string(decode_reason::unknown_schema_id),
                                      fmt::format("the registry has no schema with id {}", id), id};
        } else if (parsed->type() == schema::schema_type::avro) {
            if (parsed->avro()->root().kind != schema::avro_kind::record) {
                st->refused = dead_letter{std::string(decode_reason::incompatible_schema),
                                          fmt::format("schema {} is a {}, not a record: it has no fields to make columns of",
                                                      id, schema::to_string(parsed->avro()->root().kind)),
                                          id};
            } else {
                st->root = std::make_unique<wrapped_root>(parsed->avro()->root(), side.column);
                FLOE_TRY(fit_table(side, id, *st));
            }
        } else if (parsed->type() == schema::schema_type::protobuf) {
            const auto& pb = *parsed->protobuf();
            st->message = message.empty() ? pb.message_at({}) : pb.find_message(message);
            if (!st->message)
                st->refused = dead_letter{std::string(decode_reason::incompatible_schema),
                                          message.empty() ? fmt::format("schema {} declares no message", id)
                                                          : fmt::format("schema {} has no message {} (topic config "
                                                                        "floe.iceberg.protobuf-message)",
                                                                        id, message),
                                          id};
            else
                FLOE_TRY(fit_table(side, id, *st));
        } else if (parsed->type() == schema::schema_type::json) {
            FLOE_TRY(fit_table(side, id, *st));
        } else {
            st->refused = dead_letter{std::string(decode_reason::unsupported_schema_type),
                                      fmt::format("schema {} is {}: it has no typed-column decoder", id,
                                                  schema::to_string(parsed->type())),
                                      id};
        }
        auto* raw = st.get();
        side.states.emplace(std::move(key), std::move(st));
        return raw;
    }

    /// Maps the schema to Iceberg columns, evolves the table schema when it needs more (new
    /// optional fields, promotions), and builds the decode plan; or says why it cannot.
    result<void> fit_table(codec_side& side, int32_t id, schema_state& st) {
        auto refuse = [&](std::string why) {
            st.refused = dead_letter{std::string(decode_reason::incompatible_schema),
                                     fmt::format("schema {} cannot become a version of table column `{}`: {}; its "
                                                 "records go to the dead-letter table (register a version Iceberg can "
                                                 "express, or use a new topic)",
                                                 id, side.column, why),
                                     id};
        };
        auto fields = column_fields(st, side.column);
        if (!fields) {
            if (fields.error().code() == errc::unsupported)
                st.refused = dead_letter{std::string(decode_reason::unsupported_schema_type),
                                         fmt::format("schema {}: {}; its records go to the dead-letter table", id,
                                                     fields.error().message()),
                                         id};
            else
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
            // Plans write the table's leaves (and the other column's may have moved): those of
            // the other ids are built again, on both sides.
            for (auto* other_side : {&_value, &_key})
                for (auto& [other, s] : other_side->states)
                    if (s->plan) {
                        auto p = plan_for(*s, _table, other_side->column);
                        if (!p)
                            return fail(errc::internal, "schema {} no longer fits the evolved table: {}", other.first,
                                        p.error().detail);
                        s->plan = *p;
                    }
        }
        auto plan = plan_for(st, _table, side.column);
        if (!plan) {
            st.refused = dead_letter{std::string(plan.error().reason), plan.error().detail, id};
            return {};
        }
        st.plan = *plan;
        return {};
    }

    /// Floe's message columns (exactly as a raw file has them), then `data` and `key_data` in
    /// the table schema's order.
    result<void> rebuild_layout() {
        _layout = FLOE_TRY(table_layout(_table));
        ++_layout_version;
        return {};
    }

    schema::registry_client& _registry;
    iceberg::schema _table;
    int32_t _last_id;
    bool _evolved = false;
    std::shared_ptr<const parquet::schema> _layout;
    uint64_t _layout_version = 0;
    std::map<int32_t, std::shared_ptr<const schema::parsed_schema>> _parsed;
    codec_side _value, _key;
};

} // namespace

result<std::unique_ptr<value_codec>> value_codec::make(schema::registry_client& registry, value_decoding how,
                                                       const iceberg::schema& table, int32_t last_column_id) {
    auto c = std::make_unique<registry_codec>(registry, how, table, last_column_id);
    FLOE_TRY(c->init());
    return std::unique_ptr<value_codec>(std::move(c));
}

} // namespace floe::lake
