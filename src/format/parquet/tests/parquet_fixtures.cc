// Writes Parquet files for the independent-reader checks (tests/js/parquet/roundtrip.mjs):
// every dataset with every codec, plus the expected rows (NDJSON, strings and bytes as hex)
// and a manifest with what the writer reported (row groups, split offsets, per-column sizes,
// counts and bounds), which the script compares with what DuckDB and hyparquet see.
//
// usage: parquet_fixtures OUT_DIR

#include "format/parquet/tests/message_rows.h"
#include "format/parquet/tests/typed_rows.h"

#include <nlohmann/json.hpp>

#include <cmath>
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

// ---- the typed table (every Iceberg type, nested): values in the form roundtrip.mjs builds
// from DuckDB's and hyparquet's results: integers, decimals, dates (days), times and
// timestamps (microseconds) as decimal text; floats as numbers or "NaN", "Infinity",
// "-Infinity", "-0"; binary and fixed as hex; UUIDs in their 8-4-4-4-12 form; lists as arrays;
// maps as arrays of {key, value}.

using testing::tval;

json float_json(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    if (v == 0 && std::signbit(v)) return "-0";
    return v;
}

std::string uuid_text(std::string_view b) {
    auto h = hex(b);
    return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
           "-" + h.substr(20);
}

json typed_json(const schema_node& n, const tval& v) {
    if (v.is_null()) return nullptr;
    if (n.is_leaf()) {
        switch (n.logical) {
        case logical_type::decimal:
            return testing::decimal_text(*n.type == physical_type::fixed_len_byte_array
                                             ? testing::decimal_value(v.s)
                                             : static_cast<__int128>(v.i),
                                         n.scale);
        case logical_type::uuid:
            return uuid_text(v.s);
        case logical_type::string:
        case logical_type::enum_:
        case logical_type::json:
            return v.s;
        default:
            break;
        }
        switch (*n.type) {
        case physical_type::boolean:
            return v.b;
        case physical_type::int32:
        case physical_type::int64:
            return std::to_string(v.i);
        case physical_type::float_:
            return float_json(static_cast<double>(static_cast<float>(v.d)));
        case physical_type::double_:
            return float_json(v.d);
        default:
            return hex(v.s);
        }
    }
    if (n.logical == logical_type::list || n.logical == logical_type::map) {
        const auto& entry = n.children[0]; // the repeated group
        json a = json::array();
        for (auto& item : v.items[0].items) {
            if (n.logical == logical_type::list)
                a.push_back(typed_json(entry.children[0], item.items[0]));
            else
                a.push_back({{"key", typed_json(entry.children[0], item.items[0])},
                             {"value", typed_json(entry.children[1], item.items[1])}});
        }
        return a;
    }
    json o = json::object();
    for (size_t i = 0; i < n.children.size(); ++i)
        o[n.children[i].name] = typed_json(n.children[i], v.items[i]);
    return o;
}

/// Writes the typed files and their expected values; adds them to the manifest.
int write_typed(const std::filesystem::path& out, json& manifest) {
    auto sch = schema::make(testing::typed_schema_node());
    if (!sch) {
        std::fprintf(stderr, "%s\n", sch.error().to_string().c_str());
        return 1;
    }
    auto rows = testing::typed_rows(600);
    {
        std::ofstream nd(out / "typed.ndjson");
        for (auto& r : rows)
            nd << typed_json(sch->root(), r).dump() << '\n';
    }
    // Aggregates the SQL checks compare with.
    json agg;
    __int128 s9 = 0, s18 = 0, s38 = 0;
    std::optional<__int128> mn38, mx38;
    int64_t trues = 0, items = 0, n_sum = 0, tags = 0;
    std::optional<int64_t> ts_min, ts_max, tstz_min, tstz_max;
    json lookup = json::array();
    for (auto& r : rows) {
        auto& c = r.items;
        if (!c[4].is_null()) s9 += c[4].i;
        if (!c[5].is_null()) s18 += c[5].i;
        if (!c[6].is_null()) {
            auto x = testing::decimal_value(c[6].s);
            s38 += x;
            if (!mn38 || x < *mn38) mn38 = x;
            if (!mx38 || x > *mx38) mx38 = x;
        }
        if (!c[1].is_null() && c[1].b) ++trues;
        auto minmax = [](std::optional<int64_t>& mn, std::optional<int64_t>& mx, const tval& v) {
            if (v.is_null()) return;
            if (!mn || v.i < *mn) mn = v.i;
            if (!mx || v.i > *mx) mx = v.i;
        };
        minmax(ts_min, ts_max, c[9]);
        minmax(tstz_min, tstz_max, c[10]);
        auto& rec = c[17];
        if (!rec.is_null() && !rec.items[1].is_null())
            for (auto& it : rec.items[1].items[0].items) {
                ++items;
                auto& el = it.items[0];
                if (!el.items[0].is_null()) n_sum += el.items[0].i;
                if (!el.items[2].is_null())
                    for (auto& t : el.items[2].items[0].items)
                        tags += !t.items[0].is_null();
            }
        auto& attrs = c[18];
        if (!attrs.is_null())
            for (auto& kv : attrs.items[0].items)
                if (kv.items[0].s == "k-2")
                    lookup.push_back(
                        {std::to_string(c[0].i),
                         kv.items[1].is_null() || kv.items[1].items[0].is_null()
                             ? json(nullptr)
                             : json(testing::decimal_text(kv.items[1].items[0].i, 2))});
    }
    agg["sum_dec9"] = testing::decimal_text(s9, 2);
    agg["sum_dec18"] = testing::decimal_text(s18, 4);
    agg["sum_dec38"] = testing::decimal_text(s38, 10);
    agg["min_dec38"] = testing::decimal_text(*mn38, 10);
    agg["max_dec38"] = testing::decimal_text(*mx38, 10);
    agg["true_flags"] = trues;
    agg["ts_min"] = std::to_string(*ts_min);
    agg["ts_max"] = std::to_string(*ts_max);
    agg["tstz_min"] = std::to_string(*tstz_min);
    agg["tstz_max"] = std::to_string(*tstz_max);
    agg["items"] = items;
    agg["items_n_sum"] = std::to_string(n_sum);
    agg["tags"] = tags;
    agg["lookup_k2"] = lookup;

    json files = json::array();
    struct variant {
        std::string name;
        compression_codec codec;
        uint64_t row_group_rows;
    };
    for (auto& v : {variant{"typed-zstd", compression_codec::zstd, 0},
                    variant{"typed-snappy-rg", compression_codec::snappy, 256}}) {
        auto path = out / (v.name + ".parquet");
        writer_options o;
        o.codec = v.codec;
        o.page_row_limit = 20;
        o.row_group_rows = v.row_group_rows;
        auto sink = open_file_sink(path.string());
        if (!sink) {
            std::fprintf(stderr, "%s\n", sink.error().to_string().c_str());
            return 1;
        }
        auto w = file_writer::open(std::move(*sink), *sch, o);
        if (!w) {
            std::fprintf(stderr, "%s\n", w.error().to_string().c_str());
            return 1;
        }
        testing::shredder sh(**w, *sch);
        for (auto& r : rows)
            if (auto ok = sh.write_row(r); !ok) {
                std::fprintf(stderr, "%s\n", ok.error().to_string().c_str());
                return 1;
            }
        auto s = (*w)->close();
        if (!s) {
            std::fprintf(stderr, "%s\n", s.error().to_string().c_str());
            return 1;
        }
        // Floe's own reader first: every column's entries as written.
        auto rd = file_reader::open(*open_file_source(path.string()));
        if (!rd) {
            std::fprintf(stderr, "%s\n", rd.error().to_string().c_str());
            return 1;
        }
        for (size_t c = 0; c < sch->columns().size(); ++c) {
            testing::column_entries all;
            for (size_t rg = 0; rg < (*rd)->num_row_groups(); ++rg) {
                auto d = (*rd)->read_column(rg, c);
                if (!d) {
                    std::fprintf(stderr, "%s\n", d.error().to_string().c_str());
                    return 1;
                }
                auto e = testing::entries_of(sch->columns()[c], *d);
                all.def.insert(all.def.end(), e.def.begin(), e.def.end());
                all.rep.insert(all.rep.end(), e.rep.begin(), e.rep.end());
                all.values.insert(all.values.end(), e.values.begin(), e.values.end());
            }
            if (!(all == sh.log()[c])) {
                std::fprintf(stderr, "%s: column %zu reads back different entries\n",
                             path.c_str(), c);
                return 1;
            }
        }
        json f;
        f["path"] = path.string();
        f["codec"] = v.name;
        f["row_group_rows"] = json::array();
        for (auto& rg : s->metadata.row_groups)
            f["row_group_rows"].push_back(rg.num_rows);
        json cols = json::array();
        for (auto& c : s->columns) {
            json cj;
            cj["path"] = c.path;
            cj["field_id"] = c.field_id ? json(*c.field_id) : json(nullptr);
            cj["num_values"] = c.num_values;
            cj["null_count"] = c.null_count;
            cj["compressed_size"] = c.compressed_size;
            cj["min"] = opt_hex(c.min_value);
            cj["max"] = opt_hex(c.max_value);
            cols.push_back(cj);
        }
        f["columns"] = cols;
        files.push_back(f);
    }
    manifest["typed"] = {{"rows", (out / "typed.ndjson").string()}, {"files", files}, {"agg", agg}};
    return 0;
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
    if (int rc = write_typed(out, manifest); rc != 0) return rc;
    std::ofstream(out / "manifest.json") << manifest.dump(1) << '\n';
    std::printf("wrote %zu files to %s\n", manifest["files"].size(), out.c_str());
    return 0;
}
