#include "maintenance/compact.h"

#include "iceberg/bounds.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"
#include "lake/table_reader.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace floe::maintenance {

namespace {

struct candidate {
    std::string uri;
    int64_t size = 0;
    int64_t records = 0;
    int64_t min_offset = 0;
    bool small = false;
    std::optional<std::string> key_metadata; ///< encrypted files: names the key (errors)
};

int64_t lower_offset(const iceberg::data_file& f) {
    auto it = f.lower_bounds.find(iceberg::field_ids::offset);
    if (it == f.lower_bounds.end()) return 0;
    auto v = iceberg::deserialize_long(it->second);
    return v ? *v : 0;
}

} // namespace

namespace {

result<compact_report> compact_table(lake::iceberg_lake& lake, const std::string& topic,
                                     const std::shared_ptr<lake::table_writer>& table, const compact_options& opts) {
    compact_report report;
    const int64_t small = opts.small_file_size > 0 ? opts.small_file_size : opts.target_file_size * 3 / 4;
    iceberg::table_ident ident{lake.options().ns, table->table_name()};
    auto loaded = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), ident));
    auto live = FLOE_TRY(iceberg::live_files(lake.io(), loaded.metadata));
    report.data_files_before = live.size();

    // Files are merged only with files of the same stream, spec and partition tuple: the new
    // file has one partition tuple, and its rows are written in the table's default spec, so
    // files of older specs (partition evolution) are left as they are.
    std::map<std::tuple<std::string, int32_t, std::string>, std::vector<candidate>> by_stream;
    size_t other_spec = 0;
    for (auto& e : live) {
        auto& f = e.file;
        if (f.content != iceberg::file_content::data) continue;
        auto key = iceberg::file_stream_key(f, loaded.metadata.partition_specs);
        if (!key) continue;
        const std::string& stream = *key;
        if (!lake::is_stream_key_of(topic, stream)) continue;
        if (f.spec_id != loaded.metadata.default_spec_id) {
            ++other_spec;
            continue;
        }
        std::string tuple;
        for (auto& v : f.partition) {
            tuple += avro::to_debug_string(v);
            tuple += '\x1f';
        }
        // Typed files (and raw files of a table that became typed, and dead letters) are
        // merged alike: the rewrite copies every column by field id into the current schema.
        const bool is_small = f.file_size_in_bytes < small;
        report.small_files += is_small;
        by_stream[{stream, f.spec_id, std::move(tuple)}].push_back(
            {f.file_path, f.file_size_in_bytes, f.record_count, lower_offset(f), is_small, f.key_metadata});
    }
    // Bin-packing in offset order: runs of consecutive small files until the target is reached.
    // A file that is not small ends a run, so a new file never spans another file's offsets
    // (sequential readers take files by their lowest offset and skip what they passed).
    struct group {
        std::string stream;
        std::vector<candidate> files;
    };
    std::vector<group> groups;
    if (other_spec)
        spdlog::info("compaction of {}: {} file(s) of an older partition spec left as they are", table->table_name(),
                     other_spec);
    for (auto& [where, files] : by_stream) {
        const auto& stream = std::get<0>(where);
        std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.min_offset < b.min_offset; });
        group g{stream, {}};
        int64_t bytes = 0;
        auto flush = [&] {
            if (g.files.size() >= opts.min_input_files) groups.push_back(g);
            g.files.clear();
            bytes = 0;
        };
        for (auto& f : files) {
            if (!f.small) {
                flush();
                continue;
            }
            if (!g.files.empty() && bytes + f.size > opts.target_file_size) flush();
            g.files.push_back(f);
            bytes += f.size;
        }
        flush();
    }
    report.groups = groups.size();
    if (opts.dry_run) {
        for (auto& g : groups) {
            report.files_rewritten += g.files.size();
            for (auto& f : g.files) {
                report.rows += f.records;
                report.bytes_read += f.size;
            }
        }
        return report;
    }
    size_t done = 0;
    for (auto& g : groups) {
        std::vector<std::string> uris;
        for (auto& f : g.files) uris.push_back(f.uri);
        auto rewrite = FLOE_TRY(table->begin_file_rewrite(uris));
        // File by file in offset order, rows straight into the writer: a group's files hold
        // disjoint offset ranges (an offload never adds a row below a committed position), so
        // this is offset order without holding the group in memory; the writer refuses a row
        // out of order, so overlapping files stop the compaction instead of mixing them.
        int64_t bytes_in = 0;
        for (auto& f : g.files) {
            lake::planned_file pf;
            pf.uri = f.uri;
            pf.stream_key = g.stream;
            pf.record_count = f.records;
            pf.file_size = f.size;
            pf.key_metadata = f.key_metadata;
            bytes_in += f.size;
            if (auto added = rewrite->add_file(pf); !added) {
                for (auto& w : rewrite->written_files()) (void)lake.io().remove(w);
                return std::unexpected(std::move(added).error().with_context("compacting {} ({})", g.stream, f.uri));
            }
        }
        auto committed = rewrite->commit();
        if (!committed) {
            for (auto& f : rewrite->written_files()) (void)lake.io().remove(f);
            if (committed.error().code() == errc::not_found) {
                // A concurrent retention or rewrite removed one of these files: nothing lost,
                // the group is simply not compacted this time.
                spdlog::info("compaction of {} skipped a group: {}", g.stream, committed.error().message());
                ++report.conflicts;
                continue;
            }
            return std::unexpected(std::move(committed).error());
        }
        report.files_rewritten += g.files.size();
        report.files_written += committed->data_files.size();
        report.rows += committed->added_rows;
        report.bytes_read += bytes_in;
        report.bytes_written += static_cast<int64_t>(committed->added_bytes);
        if (opts.progress) opts.progress(++done, groups.size());
    }
    return report;
}

} // namespace

result<compact_report> compact(lake::iceberg_lake& lake, const std::string& topic, const compact_options& opts) {
    return compact_table(lake, topic, FLOE_TRY(lake.table_for_topic(topic)), opts);
}

result<compact_report> compact_dead_letters(lake::iceberg_lake& lake, const std::string& topic,
                                            const compact_options& opts) {
    auto dlq = FLOE_TRY(lake.dead_letter_table(topic));
    if (!dlq) return compact_report{};
    return compact_table(lake, topic, dlq, opts);
}

} // namespace floe::maintenance
