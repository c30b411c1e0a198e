// Writes a small Floe table (SQLite catalog + file:// warehouse under <dir>) for
// python_check.py, and <dir>/expected.json with what its manifests must contain.
#include "base/uuid.h"
#include "iceberg/bounds.h"
#include "iceberg/table.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace floe;
using namespace floe::iceberg;

namespace {

std::string hex(std::string_view s) {
    std::string out;
    for (unsigned char c : s) out += fmt::format("{:02x}", c);
    return out;
}

int run(const std::filesystem::path& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto cat = open_sql_catalog("sqlite://" + (dir / "catalog.db").string(), "floe");
    if (!cat) return fmt::print(stderr, "{}\n", cat.error()), 1;
    local_file_io io;
    table_ident t{"floe", "orders_created_v1"};
    auto location = file_uri((dir / "warehouse/floe/orders_created_v1").string());
    if (auto r = create_table_if_missing(**cat, io, t, location); !r)
        return fmt::print(stderr, "{}\n", r.error()), 1;
    nlohmann::json expected = nlohmann::json::array();
    const char* streams[] = {"orders.created-v1-0", "orders.created-v1-1", "ünicode-2"};
    int64_t offset = 0;
    for (int commit = 0; commit < 4; ++commit) {
        append_request req;
        for (int k = 0; k < 2; ++k) {
            std::string stream = streams[(commit + k) % 3];
            data_file f;
            f.file_path = fmt::format("{}/data/stream_key={}/segment-{}-{}.parquet", location, stream, commit,
                                      uuid::random().to_string());
            f.partition = {avro::datum::string(stream)};
            f.record_count = 10 + commit;
            f.file_size_in_bytes = 4096 + commit;
            for (int id = 1; id <= 10; ++id) {
                f.column_sizes[id] = 100 + id;
                f.value_counts[id] = f.record_count;
                f.null_value_counts[id] = id == 6 || id == 7 ? 1 : 0;
            }
            f.lower_bounds = {{field_ids::stream_key, stream}, {field_ids::offset, serialize_long(offset)},
                              {field_ids::message_ts, serialize_long(1767225600000 + offset)}};
            f.upper_bounds = {{field_ids::stream_key, stream},
                              {field_ids::offset, serialize_long(offset + f.record_count - 1)},
                              {field_ids::message_ts, serialize_long(1767225600000 + offset + 5)}};
            f.split_offsets = std::vector<int64_t>{4, 2048};
            f.sort_order_id = 1;
            offset += f.record_count;
            nlohmann::json e;
            e["file_path"] = f.file_path;
            e["partition"] = stream;
            e["record_count"] = f.record_count;
            e["file_size_in_bytes"] = f.file_size_in_bytes;
            e["lower_offset_hex"] = hex(f.lower_bounds[field_ids::offset]);
            e["upper_offset_hex"] = hex(f.upper_bounds[field_ids::offset]);
            e["split_offsets"] = *f.split_offsets;
            e["sequence_number"] = commit + 1;
            expected.push_back(e);
            req.files.push_back(std::move(f));
        }
        auto r = append_files(**cat, io, t, std::move(req));
        if (!r) return fmt::print(stderr, "{}\n", r.error()), 1;
    }
    std::ofstream(dir / "expected.json") << expected.dump(2);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) return fmt::print(stderr, "usage: iceberg_write_table <dir>\n"), 2;
    return run(argv[1]);
}
