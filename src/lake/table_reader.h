#pragma once

#include "format/parquet/reader.h"
#include "format/parquet/writer.h"
#include "lake/iceberg_lake.h"

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace floe::lake {

/// A live data file of one stream with the bounds scan planning prunes by.
struct planned_file {
    std::string uri;
    std::string stream_key;
    int64_t record_count = 0;
    int64_t file_size = -1; ///< from the manifest; -1 when unknown
    int64_t min_offset = 0, max_offset = -1;    ///< from the manifest's column bounds
    int64_t min_ts = INT64_MIN, max_ts = INT64_MAX;
    std::optional<std::string> min_key, max_key; ///< key column bounds (max may be truncated up)
    /// The data file entry's key_metadata: set when the file is encrypted (names its key).
    std::optional<std::string> key_metadata;
    /// The AAD prefix its table's files use when they use one (aad_prefix_of its table).
    std::string aad_prefix;
    /// False when the manifest bounds prove no row of the file has this key.
    bool may_contain_key(std::string_view key) const;
};

/// Reads a topic's table (and, for a typed table, its dead-letter table: together they hold
/// every record of the topic that was offloaded): plans scans from the manifests (partition value and column bounds,
/// no data file opened) and reads rows of chosen files. The file list is cached per metadata
/// location: each call asks the catalog where the metadata is, so a commit is seen at once.
/// Thread-safe.
class table_reader {
public:
    table_reader(iceberg_lake& lake, std::string topic);
    /// Reads one table of the topic by name, and only that one (a typed table without its
    /// dead letters, or the dead-letter table itself).
    table_reader(iceberg_lake& lake, std::string topic, std::string table);

    /// Files of `stream_key` whose offsets reach [from, to), ordered by min offset.
    result<std::vector<planned_file>> files_for_offsets(const std::string& stream_key, int64_t from,
                                                        int64_t to);
    /// Files of `stream_key` holding rows with message_ts in [from_ts, to_ts].
    result<std::vector<planned_file>> files_for_time(const std::string& stream_key, int64_t from_ts,
                                                     int64_t to_ts);
    /// Every live file of the table, by stream key then offset.
    result<std::vector<planned_file>> files();
    /// The stream's position in the table's floe.committed-positions (0 when it has none, or
    /// there is no table): every offset below it was offloaded into this table.
    result<int64_t> committed_position(const std::string& stream_key);
    /// Smallest offset of the stream in the table, nullopt when it has none.
    result<std::optional<int64_t>> start_offset(const std::string& stream_key);
    /// Opens one data file for reading: in place for file://, else by ranged reads through the
    /// lake's file_io (`storage` is kept for callers and left empty)
    /// (which must outlive the reader). An encrypted file is decrypted with the lake's key
    /// provider; a key it cannot give (or a wrong one) fails naming the file and the key id.
    result<parquet::message_reader> open_file(const planned_file& f, byte_buffer& storage);
    /// Every row of one file, in file order.
    result<std::vector<parquet::message_record>> read_file(const planned_file& f);

    /// " (encrypted with key 'k1' of the keyring)" for an encrypted file's errors, else "".
    std::string key_note(const planned_file& f) const;

private:
    result<std::vector<planned_file>> all_files();
    result<std::vector<planned_file>> plan_files(const iceberg::loaded_table& t);

    iceberg_lake& _lake;
    std::string _topic;
    std::string _table;
    std::mutex _mu;
    std::string _metadata_location;
    bool _with_dead_letters = true;
    std::string _dlq_table;    ///< the dead-letter table the table names (typed tables), or empty
    std::string _dlq_location; ///< its metadata location when _files was planned
    std::vector<planned_file> _files;
    position_map _positions; ///< of the snapshot _files were planned from
};

/// A record read back as a row to write again (compaction, a dead-letter replay): views into `r`
/// and `headers` (cleared and refilled), valid while both live and unchanged.
parquet::message_row row_of(const parquet::message_record& r, std::vector<parquet::message_header_view>& headers);

} // namespace floe::lake
