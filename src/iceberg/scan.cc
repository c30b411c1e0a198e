#include "iceberg/scan.h"

#include "iceberg/bounds.h"

namespace floe::iceberg {

namespace {

// Index of the identity(stream_key) field in the spec, or -1 if the table is not partitioned so.
int stream_partition_index(const table_metadata& m, int32_t spec_id) {
    for (auto& spec : m.partition_specs) {
        if (spec.spec_id != spec_id) continue;
        for (size_t i = 0; i < spec.fields.size(); ++i)
            if (spec.fields[i].source_id == field_ids::stream_key && spec.fields[i].transform == "identity")
                return static_cast<int>(i);
    }
    return -1;
}

// False only when the file's [lower, upper] for `id` cannot meet [lo, hi].
bool may_overlap(const data_file& f, int32_t id, std::optional<int64_t> lo, std::optional<int64_t> hi) {
    if (hi) {
        auto it = f.lower_bounds.find(id);
        if (it != f.lower_bounds.end())
            if (auto v = deserialize_long(it->second); v && *v > *hi) return false;
    }
    if (lo) {
        auto it = f.upper_bounds.find(id);
        if (it != f.upper_bounds.end())
            if (auto v = deserialize_long(it->second); v && *v < *lo) return false;
    }
    return true;
}

} // namespace

result<std::vector<manifest_entry>> plan_files(file_io& io, const table_metadata& m,
                                               const scan_filter& f, scan_stats* stats) {
    scan_stats local;
    auto& st = stats ? *stats : local;
    std::vector<manifest_entry> out;
    auto* snap = m.current_snapshot();
    if (!snap) return out;
    auto list = FLOE_TRY(read_manifest_list(FLOE_TRY(io.read(snap->manifest_list)), snap->manifest_list));
    for (auto& mf : list) {
        ++st.manifests;
        if (mf.content != 0) continue;  // delete manifests: Floe writes none
        int pi = stream_partition_index(m, mf.partition_spec_id);
        if (f.stream_key && pi >= 0 && mf.partitions && static_cast<size_t>(pi) < mf.partitions->size()) {
            auto& s = (*mf.partitions)[static_cast<size_t>(pi)];
            // Strings compare as unsigned bytes (UTF-8 code point order), as the bounds do.
            bool outside = (s.lower_bound && *f.stream_key < *s.lower_bound)
                           || (s.upper_bound && *f.stream_key > *s.upper_bound)
                           || (!s.lower_bound && !s.upper_bound && !s.contains_null);
            if (outside) {
                ++st.manifests_skipped;
                continue;
            }
        }
        auto entries = FLOE_TRY(read_manifest(FLOE_TRY(io.read(mf.manifest_path)), mf.manifest_path, &mf));
        for (auto& e : entries) {
            if (e.status == entry_status::deleted) continue;
            ++st.files;
            bool keep = true;
            if (f.stream_key && pi >= 0 && static_cast<size_t>(pi) < e.file.partition.size()) {
                auto& v = e.file.partition[static_cast<size_t>(pi)];
                keep = !v.is_null() && v.as_string() == *f.stream_key;
            } else if (f.stream_key) {
                // A spec without identity(stream_key): Floe's files carry the stream key as
                // exact bounds of the stream_key column.
                auto lo = e.file.lower_bounds.find(field_ids::stream_key);
                auto hi = e.file.upper_bounds.find(field_ids::stream_key);
                keep = (lo == e.file.lower_bounds.end() || lo->second <= *f.stream_key)
                       && (hi == e.file.upper_bounds.end() || *f.stream_key <= hi->second);
            }
            keep = keep && may_overlap(e.file, field_ids::offset, f.min_offset, f.max_offset)
                   && may_overlap(e.file, field_ids::message_ts, f.min_message_ts, f.max_message_ts);
            if (!keep) {
                ++st.files_skipped;
                continue;
            }
            out.push_back(std::move(e));
        }
    }
    return out;
}

} // namespace floe::iceberg
