#include "schema/parsed_schema.h"

#include <set>

namespace floe::schema {

std::string_view to_string(schema_type t) noexcept {
    switch (t) {
    case schema_type::avro: return "AVRO";
    case schema_type::protobuf: return "PROTOBUF";
    case schema_type::json: return "JSON";
    }
    return "?";
}

std::optional<schema_type> parse_schema_type(std::string_view s) noexcept {
    if (s == "AVRO") return schema_type::avro;
    if (s == "PROTOBUF") return schema_type::protobuf;
    if (s == "JSON") return schema_type::json;
    return std::nullopt;
}

const std::string& parsed_schema::canonical() const noexcept {
    switch (_type) {
    case schema_type::avro: return _avro->canonical();
    case schema_type::protobuf: return _protobuf->canonical();
    case schema_type::json: return _json->canonical();
    }
    return _avro->canonical();
}

std::string parsed_schema::normalized() const {
    switch (_type) {
    case schema_type::avro: return _avro->normalized();
    case schema_type::protobuf: return _protobuf->normalized();
    case schema_type::json: return _json->normalized();
    }
    return {};
}

namespace {

// Every Protobuf file the schema's imports reach (references of references too), by import name.
void collect_proto(const std::vector<resolved_reference>& refs, std::vector<protobuf_schema::dependency>& out,
                   std::set<std::string>& seen) {
    for (auto& r : refs) {
        if (!seen.insert(r.name).second) continue;
        out.push_back({r.name, std::string(r.schema->canonical())});
        collect_proto(r.schema->references(), out, seen);
    }
}

} // namespace

result<std::shared_ptr<const parsed_schema>> parsed_schema::parse(schema_type type, std::string_view text,
                                                                  std::vector<resolved_reference> refs,
                                                                  schema_parse_options opts) {
    for (auto& r : refs)
        if (!r.schema || r.schema->type() != type)
            return fail(errc::invalid_argument, "reference \"{}\" is not a {} schema", r.name, to_string(type));
    std::shared_ptr<parsed_schema> p(new parsed_schema());
    p->_type = type;
    switch (type) {
    case schema_type::avro: {
        std::vector<std::shared_ptr<const avro_schema>> deps;
        for (auto& r : refs) deps.push_back(r.schema->avro());
        p->_avro = FLOE_TRY(avro_schema::parse(text, deps, opts.max_depth));
        break;
    }
    case schema_type::protobuf: {
        std::vector<protobuf_schema::dependency> deps;
        std::set<std::string> seen;
        collect_proto(refs, deps, seen);
        p->_protobuf = FLOE_TRY(protobuf_schema::parse(text, deps, opts.max_depth));
        break;
    }
    case schema_type::json: {
        std::vector<json_schema::reference> deps;
        for (auto& r : refs) deps.push_back({r.name, r.schema->json()});
        p->_json = FLOE_TRY(json_schema::parse(text, deps, opts.max_depth));
        break;
    }
    }
    p->_refs = std::move(refs);
    return std::shared_ptr<const parsed_schema>(std::move(p));
}

} // namespace floe::schema
