// Typed offload's CPU cost per core. The same Confluent-framed Avro records (12 fields: a nested
// struct, an array of structs, a decimal, a timestamp-millis, an enum, an optional string, a
// uuid, a date, ...) are written, one thread, into an in-memory Parquet file (zstd):
//   raw        parquet::message_writer: Floe's raw message row, the value as bytes (today's
//              offload; the peer);
//   typed      lake::typed_decoder into the typed columns only;
//   raw+typed  one file with the raw columns and the typed columns (what a typed table writes).
// Timed: opening the writer, every row, closing the file. Input encoded beforehand, untimed.
//
// usage: typed_decode_bench [--rows N] [--codec zstd|snappy|none] [--typed-out PATH]

#include "format/parquet/io.h"
#include "format/parquet/writer.h"
#include "lake/typed_rows.h"
#include "schema/iceberg_mapping.h"
#include "schema/parsed_schema.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

using namespace floe;

namespace {

constexpr std::string_view schema_text = R"({"type":"record","name":"Order","namespace":"bench","fields":[
  {"name":"id","type":"long"},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"customer","type":{"type":"record","name":"Customer","fields":[
    {"name":"name","type":"string"},{"name":"country","type":"string"},{"name":"vip","type":"boolean"}]}},
  {"name":"items","type":{"type":"array","items":{"type":"record","name":"Item","fields":[
    {"name":"sku","type":"string"},{"name":"qty","type":"int"}]}}},
  {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
  {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED","RETURNED"]}},
  {"name":"note","type":["null","string"],"default":null},
  {"name":"score","type":"double"},
  {"name":"session","type":{"type":"string","logicalType":"uuid"}},
  {"name":"channel","type":"string"},
  {"name":"discount","type":"float"},
  {"name":"day","type":{"type":"int","logicalType":"date"}}
]})";

struct enc {
    std::string& b;
    void l(int64_t v) {
        uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
        while (z >= 0x80) {
            b.push_back(static_cast<char>((z & 0x7F) | 0x80));
            z >>= 7;
        }
        b.push_back(static_cast<char>(z));
    }
    void s(std::string_view v) {
        l(static_cast<int64_t>(v.size()));
        b.append(v);
    }
    template<typename T> void raw(T v) { b.append(reinterpret_cast<const char*>(&v), sizeof v); }
};

class one_schema final : public schema::registry_client {
public:
    std::shared_ptr<const schema::parsed_schema> s;
    result<std::shared_ptr<const schema::parsed_schema>> get_by_id(int32_t id) override {
        if (id != 1) return fail(errc::not_found, "no schema {}", id);
        return s;
    }
    result<subject_version> latest(std::string_view) override { return fail(errc::not_found, "none"); }
};

std::vector<std::string> make_values(size_t n) {
    std::mt19937_64 rng(42);
    const char* countries[] = {"DE", "FR", "JP", "US", "BR", "IN", "GB"};
    const char* channels[] = {"web", "app", "store", "partner"};
    std::vector<std::string> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        std::string v("\0\0\0\0\1", 5);
        enc e{v};
        e.l(static_cast<int64_t>(1'000'000'000 + i));
        e.l(1'700'000'000'000 + static_cast<int64_t>(i) * 37);
        e.s(fmt::format("customer {}", rng() % 100000));
        e.s(countries[rng() % 7]);
        v.push_back(static_cast<char>(rng() & 1));
        size_t items = rng() % 4;
        if (items) {
            e.l(static_cast<int64_t>(items));
            for (size_t j = 0; j < items; ++j) {
                e.s(fmt::format("SKU-{:06}", rng() % 1000000));
                e.l(static_cast<int64_t>(rng() % 9 + 1));
            }
        }
        e.l(0);
        uint32_t cents = static_cast<uint32_t>(rng() % 10'000'000);
        char be[4] = {static_cast<char>(cents >> 24), static_cast<char>(cents >> 16), static_cast<char>(cents >> 8),
                      static_cast<char>(cents)};
        e.s(std::string_view(be, 4));
        e.l(static_cast<int64_t>(rng() % 4));
        if (rng() % 3 == 0) {
            e.l(1);
            e.s("leave at the door");
        } else {
            e.l(0);
        }
        e.raw(static_cast<double>(rng() % 1000) / 8);
        uint64_t a = rng(), b = rng();
        e.s(fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFF,
                        b >> 52, b & 0xFFFFFFFFFFFFull));
        e.s(channels[rng() % 4]);
        e.raw(static_cast<float>(rng() % 50) / 100);
        e.l(19000 + static_cast<int64_t>(rng() % 1000));
        out.push_back(std::move(v));
    }
    return out;
}

struct figure {
    double seconds = 0;
    uint64_t bytes = 0;
};

template<typename F>
figure timed(F&& f) {
    auto t0 = std::chrono::steady_clock::now();
    uint64_t bytes = f();
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), bytes};
}

[[noreturn]] void die(const error& e) {
    fmt::print(stderr, "typed_decode_bench: {}\n", e.message());
    std::exit(1);
}

} // namespace

int main(int argc, char** argv) {
    size_t rows = 1'000'000;
    std::string typed_out; // --typed-out PATH: also write the typed-only file there
    parquet::writer_options opts;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string_view a = argv[i];
        if (a == "--rows") rows = std::stoull(argv[i + 1]);
        else if (a == "--typed-out") typed_out = argv[i + 1];
        else if (a == "--codec") {
            std::string_view c = argv[i + 1];
            opts.codec = c == "snappy" ? parquet::compression_codec::snappy
                         : c == "none" ? parquet::compression_codec::uncompressed
                                       : parquet::compression_codec::zstd;
        }
    }
    auto values = make_values(rows);
    uint64_t value_bytes = 0;
    for (auto& v : values) value_bytes += v.size();
    std::vector<std::string> ids(rows);
    for (size_t i = 0; i < rows; ++i) ids[i] = std::to_string(i);
    std::string key = "customer-key-0001";

    one_schema reg;
    auto ps = schema::parsed_schema::parse(schema::schema_type::avro, schema_text);
    if (!ps) die(ps.error());
    reg.s = *ps;
    auto fields = schema::avro_to_iceberg(*reg.s->avro());
    if (!fields) die(fields.error());
    int32_t last = iceberg::floe_table_schema().highest_field_id();
    schema::assign_ids(*fields, nullptr, last);

    auto raw_row = [&](size_t i) {
        parquet::message_row r;
        r.stream_key = "orders-0";
        r.segment_id = 7;
        r.message_id = ids[i];
        r.message_ts = 1'700'000'000'000 + static_cast<int64_t>(i);
        r.kafka_timestamp = r.message_ts;
        r.key = key;
        r.value = values[i];
        r.partition = 0;
        r.offset = static_cast<int64_t>(i);
        return r;
    };

    // raw: today's message rows.
    auto raw = timed([&] {
        byte_buffer out;
        auto w = parquet::message_writer::open(parquet::make_memory_sink(out), opts);
        if (!w) die(w.error());
        for (size_t i = 0; i < rows; ++i)
            if (auto r = w->append(raw_row(i)); !r) die(r.error());
        if (auto s = w->close(); !s) die(s.error());
        return static_cast<uint64_t>(out.size());
    });

    // typed: the decoded columns only.
    auto typed = timed([&] {
        byte_buffer out;
        auto pq = parquet::schema::make(
            parquet::group_node("table", std::nullopt, parquet::repetition::required, lake::parquet_nodes(*fields)));
        if (!pq) die(pq.error());
        auto w = parquet::file_writer::open(parquet::make_memory_sink(out), *pq, opts);
        if (!w) die(w.error());
        lake::typed_decoder dec(reg, *fields, 0);
        for (size_t i = 0; i < rows; ++i) {
            auto st = dec.decode(values[i], **w);
            if (!st) die(st.error());
            if (!st->ok()) {
                fmt::print(stderr, "record {}: {}\n", i, st->failure->detail);
                std::exit(1);
            }
            if (auto r = (*w)->end_row(); !r) die(r.error());
        }
        if (auto s = (*w)->close(); !s) die(s.error());
        if (!typed_out.empty()) {
            // The same typed rows for the DuckDB peer (bench/typed/run.sh loads them into memory).
            std::FILE* f = std::fopen(typed_out.c_str(), "wb");
            if (!f || std::fwrite(out.data(), 1, out.size(), f) != out.size() || std::fclose(f) != 0)
                die(error(errc::io_error, fmt::format("cannot write {}", typed_out)));
        }
        return static_cast<uint64_t>(out.size());
    });

    // raw+typed: one file, the raw columns then the typed ones.
    auto both = timed([&] {
        byte_buffer out;
        auto root = parquet::message_schema_node();
        for (auto& n : lake::parquet_nodes(*fields)) root.children.push_back(std::move(n));
        auto pq = parquet::schema::make(std::move(root));
        if (!pq) die(pq.error());
        auto w = parquet::file_writer::open(parquet::make_memory_sink(out), *pq, opts);
        if (!w) die(w.error());
        auto& fw = **w;
        lake::typed_decoder dec(reg, *fields, parquet::message_col::count);
        std::array<parquet::column_writer*, parquet::message_col::count> cols{};
        for (size_t c = 0; c < cols.size(); ++c) cols[c] = &fw.column(c);
        for (size_t i = 0; i < rows; ++i) {
            parquet::add_message_columns(cols, raw_row(i));
            auto st = dec.decode(values[i], fw);
            if (!st || !st->ok()) {
                fmt::print(stderr, "record {} failed\n", i);
                std::exit(1);
            }
            if (auto e = fw.end_row(); !e) die(e.error());
        }
        if (auto s = fw.close(); !s) die(s.error());
        return static_cast<uint64_t>(out.size());
    });

    auto rate = [&](const figure& f) { return static_cast<double>(rows) / f.seconds; };
    fmt::print("typed decode: {} records of 12 Avro fields (nested struct, array of structs), {:.1f} B per value, "
               "one thread, {} pages\n",
               rows, static_cast<double>(value_bytes) / static_cast<double>(rows),
               opts.codec == parquet::compression_codec::zstd ? "zstd" : "other codec");
    fmt::print("  {:<34} {:>12.0f} records/s   file {:>7.1f} MB\n", "raw (message_writer, the peer)", rate(raw),
               static_cast<double>(raw.bytes) / 1e6);
    fmt::print("  {:<34} {:>12.0f} records/s   file {:>7.1f} MB   {:.2f}x raw\n", "typed columns only", rate(typed),
               static_cast<double>(typed.bytes) / 1e6, rate(typed) / rate(raw));
    fmt::print("  {:<34} {:>12.0f} records/s   file {:>7.1f} MB   {:.2f}x raw\n", "raw+typed in one file", rate(both),
               static_cast<double>(both.bytes) / 1e6, rate(both) / rate(raw));
    return 0;
}
