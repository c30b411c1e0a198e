#include "maintenance/reencrypt.h"

#include "iceberg/transform.h"
#include "lake/table_reader.h"

#include <spdlog/spdlog.h>

namespace floe::maintenance {

result<reencrypt_report> reencrypt(lake::iceberg_lake& lake, const std::string& topic,
                                   const reencrypt_options& opts) {
    reencrypt_report report;
    const iceberg::table_ident main{lake.options().ns, lake::table_name_for_topic(topic)};
    const iceberg::table_ident ident = opts.dead_letters ? iceberg::table_ident{main.ns, lake::dlq_table_name(main.name)} : main;
    if (opts.dead_letters && !FLOE_TRY(lake.catalog().metadata_location(ident))) return report;
    // Dead letters are encrypted as their main table's properties say.
    auto loaded = FLOE_TRY(iceberg::load_table(lake.catalog(), lake.io(), main));
    auto enc = FLOE_TRY_CTX(lake::encryption_from_properties(loaded.metadata.properties), "table {}", ident.name);
    report.encryption = lake::describe(enc);
    if (enc.enabled()) {
        auto keys = lake.key_provider();
        if (!keys)
            return fail(errc::invalid_argument, "table {} is encrypted ({}): re-encrypting needs a key provider "
                        "(floe.encryption.provider)", ident.name, report.encryption);
        // The id new files get (KMS: one GenerateDataKey whose key is thrown away).
        auto probe = FLOE_TRY_CTX(keys->data_key_for_new_file(ident.name), "the current key of {}", ident.name);
        report.current_key = probe.key_id;
    }
    auto current = FLOE_TRY(lake::current_data_files(lake.catalog(), lake.io(), ident));
    std::vector<lake::planned_file> stale;
    for (auto& df : current.files) {
        auto key = iceberg::file_stream_key(df, current.specs);
        if (!key) continue;
        auto stream = std::move(*key);
        if (!lake::is_stream_key_of(topic, stream)) continue; // another topic's rows in a shared table
        ++report.data_files;
        std::string key_id;
        if (df.key_metadata)
            if (auto info = crypto::parse_key_metadata(as_bytes(*df.key_metadata))) key_id = info->key_id;
        bool keep = enc.enabled() ? df.key_metadata && key_id == report.current_key : !df.key_metadata;
        if (keep) continue;
        lake::planned_file pf;
        pf.uri = df.file_path;
        pf.stream_key = stream;
        pf.record_count = df.record_count;
        pf.file_size = df.file_size_in_bytes;
        pf.key_metadata = df.key_metadata;
        stale.push_back(std::move(pf));
    }
    report.to_rewrite = stale.size();
    if (opts.dry_run || stale.empty()) return report;
    auto table = FLOE_TRY(opts.dead_letters ? lake.dead_letter_table(topic) : lake.table_for_topic(topic));
    if (!table) return report;
    for (auto& f : stale) {
        // Copied whole: a typed table's decoded columns go into the new file too.
        auto rewrite = FLOE_TRY(table->begin_file_rewrite({f.uri}));
        if (auto added = rewrite->add_file(f); !added) {
            for (auto& w : rewrite->written_files()) (void)lake.io().remove(w);
            return std::unexpected(std::move(added).error().with_context("re-encrypting {}", f.uri));
        }
        auto committed = rewrite->commit();
        if (!committed) {
            for (auto& w : rewrite->written_files()) (void)lake.io().remove(w);
            if (committed.error().code() == errc::not_found) { // compaction or retention took it meanwhile
                ++report.conflicts;
                continue;
            }
            return std::unexpected(std::move(committed).error().with_context("re-encrypting {}", f.uri));
        }
        ++report.rewritten;
        report.rows += committed->added_rows;
    }
    spdlog::info("re-encryption of {}: {} of {} data files rewritten ({} rows) to {}{}", ident.name,
                 report.rewritten, report.data_files, report.rows, report.encryption,
                 report.current_key.empty() ? "" : fmt::format(" with key '{}'", report.current_key));
    return report;
}

} // namespace floe::maintenance
