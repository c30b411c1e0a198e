#pragma once

// Parquet reader for the files Floe writes (and other simple v1-page files): footer, schema,
// one column chunk at a time (projection), row-group pruning by statistics and by bloom
// filter. Reads only the footer at open; column chunks are read when asked, so a caller streams
// a file one row group at a time. Every error names the file.
//
// A file_reader owns its source; one thread uses it at a time.

#include "base/bytes.h"
#include "base/result.h"
#include "format/parquet/compression.h"
#include "format/parquet/io.h"
#include "format/parquet/metadata.h"
#include "format/parquet/schema.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace floe::parquet {

struct reader_options {
    uint32_t max_footer_size = 64u << 20;
    uint32_t max_page_size = 512u << 20;         ///< larger (uncompressed) pages are refused
    uint32_t max_page_values = 16u << 20;        ///< pages with more entries are refused
    int64_t max_chunk_values = int64_t{1} << 28; ///< column chunks with more entries are refused
    bool verify_crc = true;                      ///< check page CRCs where the writer stored one
};

/// The decoded entries of one leaf column chunk. Byte-array values are views into `storage`.
struct column_data {
    std::vector<uint8_t> def; ///< one per entry; empty when the max definition level is 0
    std::vector<uint8_t> rep; ///< one per entry; empty when the max repetition level is 0
    std::vector<int32_t> i32; ///< non-null values only, in order
    std::vector<int64_t> i64;
    std::vector<std::string_view> bytes;
    std::vector<byte_buffer> storage;
    int64_t num_entries = 0;
};

class file_reader {
public:
    static result<std::unique_ptr<file_reader>> open(std::unique_ptr<input_source> src,
                                                     reader_options opts = {});
    static result<std::unique_ptr<file_reader>> open_file(const std::string& path,
                                                          reader_options opts = {});

    const std::string& name() const { return _src->name(); }
    const file_metadata& metadata() const noexcept { return _meta; }
    const schema& file_schema() const noexcept { return _schema; }
    size_t num_row_groups() const noexcept { return _meta.row_groups.size(); }
    int64_t row_group_rows(size_t rg) const { return _meta.row_groups[rg].num_rows; }

    /// Reads and decodes one column chunk.
    result<column_data> read_column(size_t rg, size_t col);

    /// False only when the chunk's min/max statistics prove no entry equals `value`.
    bool stats_may_contain(size_t rg, size_t col, std::string_view value) const;
    bool stats_may_contain(size_t rg, size_t col, int64_t value) const;
    /// False only when the chunk's bloom filter proves `value` absent (true if it has none).
    result<bool> bloom_may_contain(size_t rg, size_t col, std::string_view value);

private:
    file_reader(std::unique_ptr<input_source> src, reader_options opts)
        : _src(std::move(src)), _opts(opts) {}
    result<void> load_footer();
    result<void> decode_page_values(const column_descriptor& d, const page_header& ph,
                                    bytes_view page, const std::vector<std::string_view>& dict,
                                    column_data& out);

    std::unique_ptr<input_source> _src;
    reader_options _opts;
    uint64_t _size = 0;
    file_metadata _meta;
    schema _schema;
    decompressor _decomp;
    byte_buffer _buf;
};

/// One row of Floe's message table, owned.
struct message_record {
    std::string stream_key;
    int64_t segment_id = 0;
    std::string message_id;
    int64_t message_ts = 0;
    int64_t kafka_timestamp = 0;
    std::optional<std::string> key;
    std::optional<std::string> value;
    struct header {
        std::string key;
        std::optional<std::string> value;
        bool operator==(const header&) const = default;
    };
    std::optional<std::vector<header>> headers;
    int32_t partition = 0;
    int64_t offset = 0;
    bool operator==(const message_record&) const = default;
};

struct lookup_stats {
    size_t row_groups = 0;
    size_t skipped_by_stats = 0;
    size_t skipped_by_bloom = 0;
    size_t read = 0;
};

/// Reads files written with message_schema(), a row group at a time, with an optional
/// projection (leaf columns of message_col; columns left out keep default values).
class message_reader {
public:
    static result<message_reader> open(std::unique_ptr<input_source> src,
                                       std::vector<size_t> projection = {},
                                       reader_options opts = {});
    /// Appends the next row group's rows to `out`; false when none are left.
    result<bool> next_row_group(std::vector<message_record>& out);
    /// Every row whose key equals `key`, skipping row groups by statistics and bloom filter.
    result<std::vector<message_record>> find_by_key(std::string_view key,
                                                    lookup_stats* stats = nullptr);
    file_reader& file() noexcept { return *_r; }

private:
    explicit message_reader(std::unique_ptr<file_reader> r, std::vector<size_t> proj)
        : _r(std::move(r)), _proj(std::move(proj)) {}
    result<void> read_row_group(size_t rg, std::vector<message_record>& out);

    std::unique_ptr<file_reader> _r;
    std::vector<size_t> _proj;
    size_t _next = 0;
};

} // namespace floe::parquet
