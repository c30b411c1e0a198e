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

/// A schema id's state in this append (for Protobuf, one message of it): decodable against the
/// table schema (a plan), or not (why).
struct schema_state {
    std::shared_ptr<const schema::parsed_schema> parsed;
    std::unique_ptr<wrapped_root> root;                   ///< Avro
    const google::protobuf::Descriptor* message = nullptr; ///< Protobuf: the message values hold
    std::optional<dead_letter> refused;
    std::shared_ptr<const row_plan> plan;
};

/// The value's columns, as the one field `data` (a struct of the value's fields).
result<std::vector<iceberg::nested_field>> data_fields(const schema_state& st) {
    if (st.root) return schema::avro_to_iceberg(st.root->node);
    std::vector<iceberg::nested_field> inner;
    if (st.message)
        inner = FLOE_TRY(schema::protobuf_to_iceberg(*st.message));
    else
        inner = FLOE_TRY(schema::json_to_iceberg(*st.parsed->json()));
    if (inner.empty()) return fail(errc::invalid_argument, "the value has no field with data to make a column of");
    auto t = std::make_shared<iceberg::type>();
    t->id = iceberg::type_id::struct_;
    t->fields = std::move(inner);
    return std::vector<iceberg::nested_field>{
        iceberg::nested_field{.id = 0, .name = std::string(data_column), .required = false, .field_type = t}};
}

/// The decode plan of `st` against the table's `data` column.
std::expected<std::shared_ptr<const row_plan>, decode_failure> plan_for(const schema_state& st,
                                                                        const iceberg::schema& table) {
    auto cols = typed_columns_of(table);
    if (st.root) {
        auto p = avro_row_plan::make(st.root->node, cols, parquet::message_col::count);
        if (!p) return std::unexpected(std::move(p.error()));
        return std::shared_ptr<const row_plan>(*p);
    }
    if (cols.empty())
        return std::unexpected(decode_failure{decode_reason::incompatible_schema, "the table has no `data` column", std::nullopt});
    if (st.message) {
        auto p = protobuf_row_plan::make_in_column(*st.message, cols[0], parquet::message_col::count);
        if (!p) return std::unexpected(std::move(p.error()));
        return std::shared_ptr<const row_plan>(*p);
    }
    auto p = json_row_plan::make_in_column(*st.parsed->json(), cols[0], parquet::message_col::count);
    if (!p) return std::unexpected(std::move(p.error()));
    return std::shared_ptr<const row_plan>(*p);
}

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
        auto parsed = FLOE_TRY(schema_by_id(id));
        std::string message; // Protobuf: which message of the schema
        if (parsed && parsed->type() == schema::schema_type::protobuf) {
            if (_how.how == value_decoding::mode::schema_id) {
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
                message = _how.protobuf_message;
            }
        }
        auto* st = FLOE_TRY(state_for(id, parsed, message));
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

    result<schema_state*> state_for(int32_t id, const std::shared_ptr<const schema::parsed_schema>& parsed,
                                    const std::string& message) {
        auto key = std::make_pair(id, message);
        if (auto it = _states.find(key); it != _states.end()) return it->second.get();
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
                st->root = std::make_unique<wrapped_root>(parsed->avro()->root());
                FLOE_TRY(fit_table(id, *st));
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
                FLOE_TRY(fit_table(id, *st));
        } else if (parsed->type() == schema::schema_type::json) {
            FLOE_TRY(fit_table(id, *st));
        } else {
            st->refused = dead_letter{std::string(decode_reason::unsupported_schema_type),
                                      fmt::format("schema {} is {}: it has no typed-column decoder", id,
                                                  schema::to_string(parsed->type())),
                                      id};
        }
        auto* raw = st.get();
        _states.emplace(std::move(key), std::move(st));
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
        auto fields = data_fields(st);
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
            // Plans write the table's leaves: those of the other ids are built again.
            for (auto& [other, s] : _states)
                if (s->plan) {
                    auto p = plan_for(*s, _table);
                    if (!p)
                        return fail(errc::internal, "schema {} no longer fits the evolved table: {}", other.first,
                                    p.error().detail);
                    s->plan = *p;
                }
        }
        auto plan = plan_for(st, _table);
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
    std::map<int32_t, std::shared_ptr<const schema::parsed_schema>> _parsed;
    std::map<std::pair<int32_t, std::string>, std::unique_ptr<schema_state>> _states;
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
