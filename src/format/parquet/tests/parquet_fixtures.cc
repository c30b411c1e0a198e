// Writes Parquet files for the independent-reader checks (tests/js/parquet/roundtrip.mjs):
// every dataset with every codec, plus the expected rows (NDJSON, strings and bytes as hex)
// and a manifest with what the writer reported (row groups, split offsets, per-column sizes,
// counts and bounds), which the script compares with what DuckDB and hyparquet see.
//
// usage: parquet_fixtures OUT_DIR

#include "format/parquet/tests/message_rows.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace floe;
using namespace floe::parquet;
using nlohmann::json;

namespace {

std::string hex(std::string_view s) {
    static const char* d = "0123456789abcdef";
    std::string o;
    o.reserve(s.size() * 2);
    for (unsigned char c : s) {
        o.push_back(d[c >> 4]);
        o.push_back(d[c & 15]);
    }
    return o;
}

json opt_hex(const std::optional<std::string>& s) {
    return s ? json(hex(*s)) : json(nullptr);
}

json row_json(const message_record& r) {
    json j;
    j["stream_key"] = hex(r.stream_key);
    j["segment_id"] = std::to_string(r.segment_id);
    j["message_id"] = hex(r.message_id);
    j["message_ts"] = std::to_string(r.message_ts);
    j["kafka_timestamp"] = std::to_string(r.kafka_timestamp);
    j["key"] = opt_hex(r.key);
    j["value"] = opt_hex(r.value);
    if (!r.headers)
        j["headers"] = nullptr;
    else {
        json a = json::array();
        for (auto& h : *r.headers)
            a.push_back({{"header_key", hex(h.key)}, {"header_value", opt_hex(h.value)}});
        j["headers"] = a;
    }
    j["partition"] = std::to_string(r.partition);
    j["offset"] = std::to_string(r.offset);
    return j;
}

struct dataset {
    std::string name;
    std::vector<message_record> rows;
    writer_options opts;
};

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    std::filesystem::path out(argv[1]);
    std::filesystem::create_directories(out);

    std::vector<dataset> sets;
    {
        // Edge cases mixed into generated rows; small row groups and pages so there are many
        // of each; page CRCs on.
        dataset d;
        d.name = "edge";
        auto gen = testing::generate_rows(3000, {.seed = 7, .value_size = 200});
        auto edge = testing::edge_rows(0);
        for (size_t i = 0; i < edge.size(); ++i)
            d.rows.push_back(edge[i]);
        for (auto& r : gen)
            d.rows.push_back(r);
        // more edge rows in the middle and at the end, offsets kept increasing
        auto edge2 = testing::edge_rows(0);
        for (auto& r : edge2)
            d.rows.push_back(r);
        for (size_t i = 0; i < d.rows.size(); ++i) {
            d.rows[i].offset = 1000 + static_cast<int64_t>(i);
            if (!d.rows[i].message_id.empty()
                && d.rows[i].message_id.find("世界") == std::string::npos)
                d.rows[i].message_id = fmt::format("orders-0/{}", d.rows[i].offset);
        }
        d.opts.row_group_size = 256 << 10;
        d.opts.page_size = 16 << 10;
        d.opts.page_row_limit = 500;
        d.opts.page_crc = true;
        d.opts.key_value_metadata.push_back({"floe.test", std::string("edge")});
        sets.push_back(std::move(d));
    }
    {
        dataset d;
        d.name = "single";
        d.rows = testing::generate_rows(1, {.seed = 3});
        sets.push_back(std::move(d));
    }
    {
        dataset d;
        d.name = "empty"; // no rows: no row groups, a valid footer
        sets.push_back(std::move(d));
    }
    {
        dataset d;
        d.name = "gen";
        d.rows = testing::generate_rows(20000, {.seed = 11, .value_size = 100}, "payments", 3,
                                        500000, 499000);
        sets.push_back(std::move(d));
    }

    const std::vector<std::pair<std::string, compression_codec>> codecs = {
        {"none", compression_codec::uncompressed},
        {"snappy", compression_codec::snappy},
        {"gzip", compression_codec::gzip},
        {"lz4", compression_codec::lz4_raw},
        {"zstd", compression_codec::zstd}};

    json manifest;
    manifest["files"] = json::array();
    for (auto& d : sets) {
        std::ofstream nd(out / (d.name + ".ndjson"));
        for (auto& r : d.rows)
            nd << row_json(r).dump() << '\n';
        manifest["datasets"][d.name] = (out / (d.name + ".ndjson")).string();
        for (auto& [cname, codec] : codecs) {
            auto path = out / fmt::format("{}-{}.parquet", d.name, cname);
            auto opts = d.opts;
            opts.codec = codec;
            auto sink = open_file_sink(path.string());
            if (!sink) {
                std::fprintf(stderr, "%s\n", sink.error().to_string().c_str());
                return 1;
            }
            auto s = testing::write_rows(std::move(*sink), d.rows, opts);
            if (!s) {
                std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
                return 1;
            }
            // Our own reader must agree too (the JS script checks the independent ones).
            auto rd = message_reader::open(*open_file_source(path.string()));
            if (!rd) {
                std::fprintf(stderr, "%s\n", rd.error().to_string().c_str());
                return 1;
            }
            std::vector<message_record> back;
            for (;;) {
                auto more = rd->next_row_group(back);
                if (!more) {
                    std::fprintf(stderr, "%s\n", more.error().to_string().c_str());
                    return 1;
                }
                if (!*more) break;
            }
            if (back != d.rows) {
                std::fprintf(stderr, "%s: floe's own reader read back different rows\n",
                             path.c_str());
                return 1;
            }
            json f;
            f["path"] = path.string();
            f["dataset"] = d.name;
            f["codec"] = cname;
            f["rows"] = s->row_count;
            f["file_size"] = s->file_size;
            f["split_offsets"] = s->split_offsets;
            json rgs = json::array();
            for (auto& rg : s->metadata.row_groups)
                rgs.push_back(rg.num_rows);
            f["row_group_rows"] = rgs;
            f["page_crc"] = opts.page_crc;
            json cols = json::array();
            for (auto& c : s->columns) {
                json cj;
                cj["path"] = c.path;
                cj["field_id"] = c.field_id ? json(*c.field_id) : json(nullptr);
                cj["compressed_size"] = c.compressed_size;
                cj["num_values"] = c.num_values;
                cj["null_count"] = c.null_count;
                cj["min"] = opt_hex(c.min_value);
                cj["max"] = opt_hex(c.max_value);
                cj["min_exact"] = c.min_exact;
                cj["max_exact"] = c.max_exact;
                cols.push_back(cj);
            }
            f["columns"] = cols;
            manifest["files"].push_back(f);
        }
    }
    std::ofstream(out / "manifest.json") << manifest.dump(1) << '\n';
    std::printf("wrote %zu files to %s\n", manifest["files"].size(), out.c_str());
    return 0;
}
