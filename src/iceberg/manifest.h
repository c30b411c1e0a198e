#pragma once

#include "base/bytes.h"
#include "format/avro/codec.h"
#include "format/avro/datum.h"
#include "iceberg/schema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

enum class entry_status : int32_t { existing = 0, added = 1, deleted = 2 };
enum class file_content : int32_t { data = 0, position_deletes = 1, equality_deletes = 2 };

/// One data file as a manifest describes it (spec "data_file" struct, v2).
struct data_file {
    file_content content = file_content::data;
    std::string file_path;            ///< absolute URI
    std::string file_format = "PARQUET";
    std::vector<avro::datum> partition;  ///< one value per partition field (null datum for null)
    int64_t record_count = 0;
    int64_t file_size_in_bytes = 0;
    std::map<int32_t, int64_t> column_sizes;
    std::map<int32_t, int64_t> value_counts;
    std::map<int32_t, int64_t> null_value_counts;
    std::map<int32_t, int64_t> nan_value_counts;
    std::map<int32_t, std::string> lower_bounds;  ///< single-value serialised (bounds.h)
    std::map<int32_t, std::string> upper_bounds;
    std::optional<std::string> key_metadata;
    std::optional<std::vector<int64_t>> split_offsets;
    std::optional<std::vector<int32_t>> equality_ids;
    std::optional<int32_t> sort_order_id;
    /// The partition spec of `partition` (not a manifest field: the manifest's own spec, from
    /// its list entry or its "partition-spec-id" metadata; append commits group files by it).
    int32_t spec_id = 0;
};

struct manifest_entry {
    entry_status status = entry_status::added;
    std::optional<int64_t> snapshot_id;
    /// Data sequence number; null in a new manifest (inherited from the manifest list entry).
    std::optional<int64_t> sequence_number;
    std::optional<int64_t> file_sequence_number;
    data_file file;
};

struct field_summary {
    bool contains_null = false;
    std::optional<bool> contains_nan;
    std::optional<std::string> lower_bound;
    std::optional<std::string> upper_bound;
};

/// A manifest list entry (spec "manifest_file", v2).
struct manifest_file {
    std::string manifest_path;
    int64_t manifest_length = 0;
    int32_t partition_spec_id = 0;
    int32_t content = 0;  ///< 0 data, 1 deletes
    int64_t sequence_number = 0;
    int64_t min_sequence_number = 0;
    int64_t added_snapshot_id = 0;
    int32_t added_files_count = 0;
    int32_t existing_files_count = 0;
    int32_t deleted_files_count = 0;
    int64_t added_rows_count = 0;
    int64_t existing_rows_count = 0;
    int64_t deleted_rows_count = 0;
    std::optional<std::vector<field_summary>> partitions;
    std::optional<std::string> key_metadata;
};

/// What a manifest is written for.
struct manifest_context {
    const iceberg::schema* table_schema = nullptr;
    const partition_spec* spec = nullptr;
    int64_t snapshot_id = 0;      ///< the snapshot adding this manifest
    int64_t sequence_number = 0;  ///< that snapshot's sequence number (for the list entry)
    avro::codec codec = avro::codec::deflate;
};

/// The Avro schema (JSON text) of manifest entries for a partition spec, with the spec's field
/// ids, names and optionality (as Java/Spark write it).
result<std::string> manifest_entry_avro_schema(const iceberg::schema& s, const partition_spec& spec);
/// The Avro schema (JSON text) of manifest list entries.
const std::string& manifest_list_avro_schema();

struct written_manifest {
    byte_buffer bytes;
    manifest_file entry;  ///< everything but manifest_path filled in (length = bytes.size())
};

/// Encodes a manifest. Added entries get this snapshot's id and null sequence numbers (they
/// inherit); existing and deleted entries must carry their own. The returned list entry has the
/// counts, the partition field summaries and min_sequence_number computed from the entries.
result<written_manifest> write_manifest(const manifest_context& ctx,
                                        const std::vector<manifest_entry>& entries);

/// Decodes a manifest. With `list_entry`, applies the v2 inheritance rules: an added entry with
/// null sequence numbers or snapshot id takes them from the manifest list entry.
result<std::vector<manifest_entry>> read_manifest(bytes_view bytes, const std::string& name,
                                                  const manifest_file* list_entry = nullptr);

result<byte_buffer> write_manifest_list(int64_t snapshot_id, std::optional<int64_t> parent_id,
                                        int64_t sequence_number,
                                        const std::vector<manifest_file>& manifests,
                                        avro::codec codec = avro::codec::deflate);
result<std::vector<manifest_file>> read_manifest_list(bytes_view bytes, const std::string& name);

} // namespace floe::iceberg
