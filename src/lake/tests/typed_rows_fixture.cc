// Decodes Confluent-framed Avro values written by an independent encoder (avsc, through
// tests/js/lake/typed_rows.mjs) into a typed Parquet file for DuckDB to check.
//
// usage: typed_rows_fixture DIR
//   reads  DIR/schemas.json  ({"<id>": "<avro schema text>", ...}; the first id's schema is the
//                             table's), DIR/values.bin (each value: 4-byte big-endian length,
//                             then the bytes)
//   writes DIR/typed.parquet (the typed columns of the good values, field ids from 1) and
//          DIR/result.json   ({"rows": N, "failures": [{"index", "reason", "detail"}]})

#include "format/parquet/io.h"
#include "lake/typed_rows.h"
#include "schema/iceberg_mapping.h"
#include "schema/parsed_schema.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

using namespace floe;

namespace {

class map_registry final : public schema::registry_client {
public:
    std::map<int32_t, std::shared_ptr<const schema::parsed_schema>> by_id;
    result<std::shared_ptr<const schema::parsed_schema>> get_by_id(int32_t id) override {
        auto it = by_id.find(id);
        if (it == by_id.end()) return fail(errc::not_found, "no schema {}", id);
        return it->second;
    }
    result<subject_version> latest(std::string_view) override { return fail(errc::not_found, "none"); }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int die(const std::string& msg) {
    std::cerr << "typed_rows_fixture: " << msg << "\n";
    return 1;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) return die("usage: typed_rows_fixture DIR");
    std::string dir = argv[1];
    auto schemas = nlohmann::json::parse(slurp(dir + "/schemas.json"));
    map_registry reg;
    std::shared_ptr<const schema::parsed_schema> table_schema;
    for (auto& [id, text] : schemas.items()) {
        auto p = schema::parsed_schema::parse(schema::schema_type::avro, text.get<std::string>());
        if (!p) return die(p.error().message());
        reg.by_id[std::stoi(id)] = *p;
        if (!table_schema) table_schema = *p;
    }
    if (!table_schema) return die("no schema");
    auto fields = schema::avro_to_iceberg(*table_schema->avro());
    if (!fields) return die(fields.error().message());
    int32_t last = 0;
    schema::assign_ids(*fields, nullptr, last);
    auto pq = parquet::schema::make(
        parquet::group_node("table", std::nullopt, parquet::repetition::required, lake::parquet_nodes(*fields)));
    if (!pq) return die(pq.error().message());
    auto sink = parquet::open_file_sink(dir + "/typed.parquet");
    if (!sink) return die(sink.error().message());
    parquet::writer_options opts;
    opts.page_row_limit = 300; // several pages per column
    auto w = parquet::file_writer::open(std::move(*sink), *pq, opts);
    if (!w) return die(w.error().message());
    lake::typed_decoder dec(reg, *fields, 0);

    std::string values = slurp(dir + "/values.bin");
    nlohmann::json failures = nlohmann::json::array();
    size_t pos = 0, index = 0;
    int64_t rows = 0;
    while (pos + 4 <= values.size()) {
        auto b = reinterpret_cast<const uint8_t*>(values.data() + pos);
        size_t n = (size_t{b[0]} << 24) | (size_t{b[1]} << 16) | (size_t{b[2]} << 8) | b[3];
        pos += 4;
        if (pos + n > values.size()) return die("values.bin is cut");
        auto st = dec.decode(std::string_view(values).substr(pos, n), **w);
        if (!st) return die(st.error().message());
        if (st->ok()) {
            if (auto r = (*w)->end_row(); !r) return die(r.error().message());
            ++rows;
        } else {
            failures.push_back({{"index", index}, {"reason", std::string(st->failure->reason)}, {"detail", st->failure->detail}});
        }
        pos += n;
        ++index;
    }
    auto sum = (*w)->close();
    if (!sum) return die(sum.error().message());
    nlohmann::json out = {{"rows", rows}, {"failures", failures}};
    std::ofstream(dir + "/result.json") << out.dump(2);
    fmt::print("typed_rows_fixture: {} rows, {} failures\n", rows, failures.size());
    return 0;
}
