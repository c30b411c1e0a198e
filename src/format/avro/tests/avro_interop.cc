// Interop driver for tests/python_interop.py (Apache Avro's Python library on the other side).
//   avro_interop write <dir>          writes floe-<codec>.avro files with the sample schema plus
//                                     the expected records as floe-<codec>.json
//   avro_interop dump <file> <json>   reads any container file with Floe's reader and writes its
//                                     records as JSON (bytes/fixed as {"hex": ...})
#include "format/avro/container.h"
#include "format/avro/tests/sample.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace floe;
using namespace floe::avro;
using json = nlohmann::ordered_json;

namespace {

std::string hex(std::string_view s) {
    std::string out;
    out.reserve(s.size() * 2);
    for (unsigned char c : s) out += fmt::format("{:02x}", c);
    return out;
}

json to_json(const node& s, const datum& d) {
    switch (s.kind) {
    case type::null: return nullptr;
    case type::boolean: return d.as_bool();
    case type::int_:
    case type::long_: return d.as_long();
    case type::float_: return static_cast<double>(d.as_float());
    case type::double_: return d.as_double();
    case type::string: return d.as_string();
    case type::bytes:
    case type::fixed: return json{{"hex", hex(d.as_string())}};
    case type::enum_: return s.symbols.at(static_cast<size_t>(d.as_int()));
    case type::array: {
        json a = json::array();
        for (auto& c : d.children()) a.push_back(to_json(*s.items, c));
        return a;
    }
    case type::map: {
        json o = json::object();
        for (size_t i = 0; i < d.children().size(); ++i)
            o[d.keys()[i]] = to_json(*s.items, d.children()[i]);
        return o;
    }
    case type::union_: return to_json(*s.branches.at(resolve_branch(s, d).value()), d);
    case type::record: {
        json o = json::object();
        for (size_t i = 0; i < s.fields.size(); ++i)
            o[s.fields[i].name] = to_json(*s.fields[i].type, d.children()[i]);
        return o;
    }
    }
    return nullptr;
}

void put(const std::filesystem::path& p, std::string_view bytes) {
    std::ofstream out(p, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Writes the records and the JSON the reader must produce for them. The JSON is built from the
// values we meant to write, not from reading the file back.
int write_files(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    auto s = schema::parse(test_data::sample_schema_json);
    if (!s) return fmt::print(stderr, "{}\n", s.error()), 1;
    put(dir / "schema.json", s->json());
    struct job {
        std::string name;
        codec c;
        size_t n;
        size_t big;
    };
    std::vector<job> jobs = {{"floe-null", codec::null, 600, 100},
                             {"floe-deflate", codec::deflate, 600, 100},
                             {"floe-zstandard", codec::zstd, 600, 100},
                             {"floe-snappy", codec::snappy, 600, 100},
                             {"floe-single", codec::deflate, 1, SIZE_MAX},
                             {"floe-empty", codec::deflate, 0, SIZE_MAX}};
    for (auto& j : jobs) {
        writer_options o;
        o.codec = j.c;
        o.metadata = {{"format-version", "2"}, {"floe.test", j.name}};
        auto w = container_writer::create(*s, o);
        if (!w) return fmt::print(stderr, "{}\n", w.error()), 1;
        test_data::sample_gen g(1234);
        json expected = json::array();
        for (size_t i = 0; i < j.n; ++i) {
            auto rec = g.record(i, j.big);
            expected.push_back(to_json(s->root(), rec));
            if (auto r = w->append(rec); !r) return fmt::print(stderr, "{}\n", r.error()), 1;
        }
        auto bytes = w->finish();
        if (!bytes) return fmt::print(stderr, "{}\n", bytes.error()), 1;
        put(dir / (j.name + ".avro"), as_chars(*bytes));
        put(dir / (j.name + ".json"), expected.dump(-1, ' ', false, json::error_handler_t::strict));
    }
    return 0;
}

int dump(const std::filesystem::path& file, const std::filesystem::path& out) {
    std::ifstream in(file, std::ios::binary);
    byte_buffer bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = container_reader::open_owned(std::move(bytes), file.string());
    if (!r) return fmt::print(stderr, "{}\n", r.error()), 1;
    json all = json::array();
    datum d;
    for (;;) {
        auto n = r->next(d);
        if (!n) return fmt::print(stderr, "{}\n", n.error()), 1;
        if (!*n) break;
        all.push_back(to_json(r->writer_schema().root(), d));
    }
    put(out, all.dump(-1, ' ', false, json::error_handler_t::replace));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::string_view mode = argc > 1 ? argv[1] : "";
    if (mode == "write" && argc == 3) return write_files(argv[2]);
    if (mode == "dump" && argc == 4) return dump(argv[2], argv[3]);
    fmt::print(stderr, "usage: avro_interop write <dir> | dump <file.avro> <out.json>\n");
    return 2;
}
