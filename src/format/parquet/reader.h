#pragma once

// Parquet reader for the files Floe writes (and other simple v1-page files): footer, schema,
// one column chunk at a time (projection), row-group pruning by statistics and by bloom
// filter. Reads only the footer at open; column chunks are read when asked, so a caller streams
// a file one row group at a time. Every error names the file.
//
// A file_reader owns its source; one thread uses it at a time.

#include "base/bytes.h"
#include "base/result.h"
#include "format/parquet/bloom_filter.h"
#include "format/parquet/compression.h"
#include "format/parquet/encryption.h"
#include "format/parquet/io.h"
#include "format/parquet/metadata.h"
#include "format/parquet/schema.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace floe::parquet {

struct reader_options {
    uint32_t max_footer_size = 64u << 20;
    uint32_t max_page_size = 512u << 20;         ///< larger (uncompressed) pages are refused
    uint32_t max_page_values = 16u << 20;        ///< pages with more entries are refused
    int64_t max_chunk_values = int64_t{1} << 28; ///< column chunks with more entries are refused
    bool verify_crc = true;                      ///< check page CRCs where the writer stored one
    uint32_t max_index_size = 16u << 20;         ///< larger ColumnIndex/OffsetIndex are refused
    /// Lookups (find_by_key, read_offset_range) use the page index and dictionaries to read
    /// only the pages they need; false reads whole row groups (the path before page indexes).
    bool use_page_index = true;
    /// Keys for encrypted files (encryption.h). Without it an encrypted footer is an error and
    /// only the plaintext columns of a plaintext-footer file can be read.
    std::optional<decryption_config> decryption;
};

/// What a file_reader found out about a file's encryption.
struct file_encryption_info {
    bool encrypted = false;        ///< some module is encrypted
    bool encrypted_footer = false; ///< "PARE" file
    cipher_algorithm algorithm = cipher_algorithm::aes_gcm_v1;
    /// Plaintext footer: its signature was checked with the footer key (false: no key).
    bool footer_signature_verified = false;
};

namespace detail {
struct file_decryptor;
}

/// The decoded entries of one leaf column chunk. Byte-array values are views into `storage`.
struct column_data {
    std::vector<uint8_t> def; ///< one per entry; empty when the max definition level is 0
    std::vector<uint8_t> rep; ///< one per entry; empty when the max repetition level is 0
    std::vector<int32_t> i32; ///< non-null values only, in order
    std::vector<int64_t> i64;
    std::vector<uint8_t> bools; ///< BOOLEAN values, 0 or 1
    std::vector<float> f32;
    std::vector<double> f64;
    std::vector<std::string_view> bytes; ///< BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY values
    std::vector<byte_buffer> storage;
    int64_t num_entries = 0;
    int64_t first_row = 0; ///< row of the row group where the entries start (page reads)
};

class file_reader {
public:
    static result<std::unique_ptr<file_reader>> open(std::unique_ptr<input_source> src,
                                                     reader_options opts = {});
    static result<std::unique_ptr<file_reader>> open_file(const std::string& path,
                                                          reader_options opts = {});
    ~file_reader();

    const std::string& name() const { return _src->name(); }
    const file_metadata& metadata() const noexcept { return _meta; }
    const schema& file_schema() const noexcept { return _schema; }
    size_t num_row_groups() const noexcept { return _meta.row_groups.size(); }
    int64_t row_group_rows(size_t rg) const { return _meta.row_groups[rg].num_rows; }
    const file_encryption_info& encryption() const noexcept { return _enc_info; }
    /// Ok when the chunk can be read: plaintext, or encrypted with a key the retriever gave.
    /// Otherwise the error says why (no keys, the retriever's error).
    result<void> check_readable(size_t rg, size_t col) const;

    /// Reads and decodes one column chunk.
    result<column_data> read_column(size_t rg, size_t col);

    /// The chunk's OffsetIndex / ColumnIndex, or nullptr when the file has none for it. Read
    /// (bounded, checked against the chunk) on first use and kept; the pointer stays valid for
    /// the reader's life.
    result<const offset_index*> chunk_offset_index(size_t rg, size_t col);
    result<const column_index*> chunk_column_index(size_t rg, size_t col);
    /// Reads and decodes data pages first_page..last_page (OffsetIndex numbering, inclusive) of
    /// a chunk that has an OffsetIndex, with its dictionary page when it has one. The entries
    /// start at row `first_page`'s first_row_index (column_data::first_row).
    result<column_data> read_pages(size_t rg, size_t col, size_t first_page, size_t last_page);
    /// Rows (of the row group) among data pages first_page..last_page of a flat byte-array
    /// chunk with an OffsetIndex whose value equals `value`, appended to `rows` in order.
    /// Streams page by page without materialising the values (lookups scan a whole key
    /// column); dictionary pages whose dictionary lacks the value are not decoded.
    result<void> find_value_in_pages(size_t rg, size_t col, size_t first_page, size_t last_page,
                                     std::string_view value, std::vector<int64_t>& rows);
    /// The chunk's dictionary entries (in `bytes`), nullopt when it has no dictionary page.
    result<std::optional<column_data>> read_dictionary(size_t rg, size_t col);
    /// True when the chunk has a dictionary page and its encoding stats show every data page
    /// dictionary-encoded: a value missing from the dictionary is then in no row.
    bool fully_dictionary_encoded(size_t rg, size_t col) const;

    /// False only when the chunk's min/max statistics prove no entry equals `value`.
    bool stats_may_contain(size_t rg, size_t col, std::string_view value) const;
    bool stats_may_contain(size_t rg, size_t col, int64_t value) const;
    /// False only when the chunk's bloom filter proves `value` absent (true if it has none).
    result<bool> bloom_may_contain(size_t rg, size_t col, std::string_view value);

private:
    file_reader(std::unique_ptr<input_source> src, reader_options opts);
    result<void> load_footer();
    result<void> decode_page_values(const column_descriptor& d, const page_header& ph,
                                    bytes_view page, const std::vector<std::string_view>& dict,
                                    column_data& out);
    /// Decodes the pages in `raw` (read from file offset `at`): a dictionary page fills
    /// `dict`, data pages append to `out`. Stops after `max_values` entries; returns the
    /// entries and counts the data pages in `pages`.
    result<int64_t> decode_pages(size_t rg, size_t col, bytes_view raw, int64_t at,
                                 int64_t max_values, std::vector<std::string_view>& dict,
                                 column_data& out, size_t& pages, int first_page = 0);
    /// The page starting at raw[pos] (file offset at + pos): its header and its (compressed)
    /// body, decrypted when the chunk is encrypted (then a view of a buffer valid until the
    /// next call); `pos` moves past the page, `ordinal` (data pages of the chunk before this
    /// one, for the AAD) past a data page.
    result<bytes_view> next_page(size_t rg, size_t col, bytes_view raw, int64_t at, size_t& pos,
                                 int& ordinal, page_header& ph);
    /// A data page v2's body in v1 layout (levels with length prefixes, values decompressed);
    /// sets ph.data from ph.data_v2.
    result<void> v2_as_v1(const column_descriptor& d, compression_codec codec, page_header& ph,
                          bytes_view body, byte_buffer& page);
    result<void> load_encrypted_footer(bytes_view region);
    result<void> setup_decryptor(const encryption_algorithm& a, bool encrypted_footer);
    result<void> setup_chunk_crypto();
    crypto::module_cipher* chunk_cipher(size_t rg, size_t col) const;
    /// Decrypts an index or bloom module of an encrypted chunk into `out`.
    result<void> decrypt_module(size_t rg, size_t col, module_type t, bytes_view module,
                                byte_buffer& out);
    result<void> load_index(size_t rg, size_t col);
    int64_t chunk_start(size_t rg, size_t col) const;

    std::unique_ptr<input_source> _src;
    reader_options _opts;
    uint64_t _size = 0;
    file_metadata _meta;
    schema _schema;
    decompressor _decomp;
    byte_buffer _buf;
    byte_buffer _page_buf;          // find_value_in_pages: one page at a time
    std::vector<uint32_t> _levels;  // ... its definition levels
    std::vector<uint32_t> _indices; // ... its dictionary indices
    struct chunk_indexes {
        bool loaded = false;
        std::optional<offset_index> offsets;
        std::optional<column_index> columns;
    };
    std::vector<chunk_indexes> _indexes; // [rg * columns + col]
    /// Bloom filters read so far, by rg * columns + col: a reader kept open for lookups reads
    /// each filter once.
    std::unordered_map<size_t, bloom_filter> _blooms;
    file_encryption_info _enc_info;
    std::unique_ptr<detail::file_decryptor> _dec; // encrypted files only
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
    /// Row groups whose `key` chunk is wholly dictionary-encoded without the key in its
    /// dictionary: skipped after reading the dictionary page only.
    size_t skipped_by_dictionary = 0;
    /// Row groups where no page of `key` can hold the key by its ColumnIndex min/max.
    size_t skipped_by_page_index = 0;
    size_t pages_read = 0; ///< data pages read through the page index (all columns)

    lookup_stats& operator+=(const lookup_stats& o) noexcept {
        row_groups += o.row_groups;
        skipped_by_stats += o.skipped_by_stats;
        skipped_by_bloom += o.skipped_by_bloom;
        read += o.read;
        skipped_by_dictionary += o.skipped_by_dictionary;
        skipped_by_page_index += o.skipped_by_page_index;
        pages_read += o.pages_read;
        return *this;
    }
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
    /// With the page index (reader_options::use_page_index and a file that has one) only the
    /// `key` column is read first, after a dictionary check when it is wholly
    /// dictionary-encoded, limited to the pages whose min/max may hold the key; the other
    /// projected columns are read only in the pages holding matching rows. Records carry `key`
    /// (added to the projection) and are the same as without the page index.
    result<std::vector<message_record>> find_by_key(std::string_view key,
                                                    lookup_stats* stats = nullptr);
    /// Appends to `out` up to `limit` rows whose offset is >= `from_offset`, in file order
    /// (`offset` added to the projection). Skips row groups by statistics and, with the page
    /// index, starts at the first page of `offset` whose max reaches `from_offset` and reads
    /// only the pages holding the rows returned. Returns the number of rows appended.
    result<size_t> read_offset_range(int64_t from_offset, size_t limit,
                                     std::vector<message_record>& out,
                                     lookup_stats* stats = nullptr);
    file_reader& file() noexcept { return *_r; }

private:
    explicit message_reader(std::unique_ptr<file_reader> r, std::vector<size_t> proj,
                            bool use_index)
        : _r(std::move(r)), _proj(std::move(proj)), _use_index(use_index) {}
    result<void> read_row_group(size_t rg, std::vector<message_record>& out);
    /// Fills the projected columns other than `done_col` of out[base + i] from row rows[i] of
    /// row group `rg` (rows ascending), reading only the pages that hold them when the
    /// chunks have an OffsetIndex.
    result<void> fill_rows(size_t rg, const std::vector<int64_t>& rows, size_t done_col,
                           std::vector<message_record>& out, size_t base, lookup_stats& st);

    std::unique_ptr<file_reader> _r;
    std::vector<size_t> _proj;
    bool _use_index = true;
    size_t _next = 0;
};

} // namespace floe::parquet
