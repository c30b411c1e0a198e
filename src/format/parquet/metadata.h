#pragma once

// Parquet file and page metadata (the subset of parquet.thrift Floe writes and reads), with
// compact-protocol encode/decode. Field numbers follow parquet-format's parquet.thrift.
// Plain values; decode() never trusts its input (bounded, depth-limited).

#include "base/bytes.h"
#include "base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace floe::parquet {

enum class physical_type : int32_t {
    boolean = 0,
    int32 = 1,
    int64 = 2,
    int96 = 3,
    float_ = 4,
    double_ = 5,
    byte_array = 6,
    fixed_len_byte_array = 7,
};

enum class repetition : int32_t { required = 0, optional = 1, repeated = 2 };

enum class encoding : int32_t {
    plain = 0,
    plain_dictionary = 2,
    rle = 3,
    bit_packed = 4,
    delta_binary_packed = 5,
    delta_length_byte_array = 6,
    delta_byte_array = 7,
    rle_dictionary = 8,
    byte_stream_split = 9,
};

enum class compression_codec : int32_t {
    uncompressed = 0,
    snappy = 1,
    gzip = 2,
    lzo = 3,
    brotli = 4,
    lz4 = 5,
    zstd = 6,
    lz4_raw = 7,
};

enum class page_type : int32_t {
    data_page = 0,
    index_page = 1,
    dictionary_page = 2,
    data_page_v2 = 3
};

/// ConvertedType values Floe writes or recognises.
enum class converted_type : int32_t {
    utf8 = 0,
    map = 1,
    map_key_value = 2,
    list = 3,
    enum_ = 4,
    decimal = 5,
    date = 6,
    time_millis = 7,
    time_micros = 8,
    timestamp_millis = 9,
    timestamp_micros = 10,
    json = 19,
};

/// LogicalType union member Floe writes or recognises (others, and TIME/TIMESTAMP in units
/// other than microseconds, decode as `other`). Parameters (decimal scale and precision,
/// isAdjustedToUTC) live beside it in schema_element / schema_node.
enum class logical_type : int8_t {
    none = 0,
    string = 1,
    map = 2,
    list = 3,
    enum_ = 4,
    decimal = 5,
    date = 6,
    time_micros = 7,
    timestamp_micros = 8,
    uuid = 9,
    json = 10,
    other = 100
};

struct statistics {
    std::optional<std::string> max_value; ///< field 5 (or legacy field 1 when decoding)
    std::optional<std::string> min_value; ///< field 6 (or legacy field 2)
    std::optional<int64_t> null_count;
    std::optional<int64_t> distinct_count;
    std::optional<bool> is_max_value_exact;
    std::optional<bool> is_min_value_exact;
    std::optional<int64_t> nan_count; ///< field 9: float and double columns
    bool legacy_min_max = false; ///< decoded from the deprecated signed-order fields
};

struct schema_element {
    std::optional<physical_type> type;
    std::optional<int32_t> type_length;
    std::optional<repetition> repetition_type;
    std::string name;
    std::optional<int32_t> num_children;
    std::optional<int32_t> converted;
    std::optional<int32_t> scale;     ///< field 7 (DECIMAL)
    std::optional<int32_t> precision; ///< field 8 (DECIMAL)
    std::optional<int32_t> field_id;
    logical_type logical = logical_type::none;
    /// LogicalType parameters: DECIMAL(scale, precision), TIME/TIMESTAMP isAdjustedToUTC.
    int32_t logical_scale = 0, logical_precision = 0;
    bool logical_utc = true;
};

struct page_encoding_stats {
    page_type type;
    encoding enc;
    int32_t count;
};

struct column_metadata {
    physical_type type = physical_type::int32;
    std::vector<encoding> encodings;
    std::vector<std::string> path_in_schema;
    compression_codec codec = compression_codec::uncompressed;
    int64_t num_values = 0;
    int64_t total_uncompressed_size = 0;
    int64_t total_compressed_size = 0;
    int64_t data_page_offset = 0;
    std::optional<int64_t> dictionary_page_offset;
    std::optional<statistics> stats;
    std::vector<page_encoding_stats> encoding_stats;
    std::optional<int64_t> bloom_filter_offset;
    std::optional<int32_t> bloom_filter_length;
};

/// Parquet Modular Encryption algorithms (Encryption.md 4.2): AES_GCM_V1 encrypts every module
/// with AES-GCM; AES_GCM_CTR_V1 encrypts pages with AES-CTR and the other modules with GCM.
enum class cipher_algorithm : int8_t { aes_gcm_v1 = 1, aes_gcm_ctr_v1 = 2 };

/// The EncryptionAlgorithm union with its AesGcmV1 / AesGcmCtrV1 member (same fields).
struct encryption_algorithm {
    cipher_algorithm cipher = cipher_algorithm::aes_gcm_v1;
    std::optional<std::string> aad_prefix;      ///< stored AAD prefix
    std::optional<std::string> aad_file_unique; ///< the file's unique id (AAD suffix part)
    bool supply_aad_prefix = false;             ///< readers must supply the prefix
};

/// ColumnCryptoMetaData: encrypted with the footer key, or with a column key of its own.
struct column_crypto_metadata {
    bool with_footer_key = true;
    std::vector<std::string> path_in_schema;  ///< column key only
    std::optional<std::string> key_metadata;  ///< column key only
};

/// FileCryptoMetaData: written in front of an encrypted footer.
struct file_crypto_metadata {
    encryption_algorithm algorithm;
    std::optional<std::string> key_metadata; ///< of the footer key
};

struct column_chunk {
    int64_t file_offset = 0;
    std::optional<column_metadata> meta_data;
    /// Page index locations (PageIndex.md): absent in files written without one.
    std::optional<int64_t> offset_index_offset;
    std::optional<int32_t> offset_index_length;
    std::optional<int64_t> column_index_offset;
    std::optional<int32_t> column_index_length;
    std::optional<column_crypto_metadata> crypto_metadata; ///< field 8: encrypted columns
    std::optional<std::string> encrypted_column_metadata;  ///< field 9: a ColumnMetaData module
};

struct row_group {
    std::vector<column_chunk> columns;
    int64_t total_byte_size = 0;
    int64_t num_rows = 0;
    std::optional<int64_t> file_offset;
    std::optional<int64_t> total_compressed_size;
    std::optional<int16_t> ordinal;
};

struct key_value {
    std::string key;
    std::optional<std::string> value;
};

struct file_metadata {
    int32_t version = 1;
    std::vector<schema_element> schema;
    int64_t num_rows = 0;
    std::vector<row_group> row_groups;
    std::vector<key_value> key_value_metadata;
    std::optional<std::string> created_by;
    /// Number of ColumnOrder entries (all TYPE_ORDER when Floe writes them).
    size_t column_orders = 0;
    /// Fields 8 and 9: set only in encrypted files with a plaintext (signed) footer.
    std::optional<encryption_algorithm> encryption;
    std::optional<std::string> footer_signing_key_metadata;
};

struct data_page_header {
    int32_t num_values = 0;
    encoding enc = encoding::plain;
    encoding definition_level_encoding = encoding::rle;
    encoding repetition_level_encoding = encoding::rle;
    std::optional<statistics> stats;
};

struct dictionary_page_header {
    int32_t num_values = 0;
    encoding enc = encoding::plain;
    std::optional<bool> is_sorted;
};

struct data_page_header_v2 {
    int32_t num_values = 0;
    int32_t num_nulls = 0;
    int32_t num_rows = 0;
    encoding enc = encoding::plain;
    int32_t definition_levels_byte_length = 0;
    int32_t repetition_levels_byte_length = 0;
    bool is_compressed = true;
};

struct page_header {
    page_type type = page_type::data_page;
    int32_t uncompressed_page_size = 0;
    int32_t compressed_page_size = 0;
    std::optional<uint32_t> crc;
    std::optional<data_page_header> data;
    std::optional<dictionary_page_header> dictionary;
    std::optional<data_page_header_v2> data_v2;
};

/// One data page of a column chunk in its OffsetIndex.
struct page_location {
    int64_t offset = 0;               ///< of the page header, from the file start
    int32_t compressed_page_size = 0; ///< header included
    int64_t first_row_index = 0;      ///< rows (not entries) of the chunk before this page
};

/// OffsetIndex: where each data page of a chunk is (dictionary page excluded), in order.
struct offset_index {
    std::vector<page_location> page_locations;
};

enum class boundary_order : int32_t { unordered = 0, ascending = 1, descending = 2 };

/// ColumnIndex: per data page, whether it holds only nulls and its min/max (plain bytes, the
/// same truncation as page statistics; empty for null pages), plus null counts.
struct column_index {
    std::vector<bool> null_pages;
    std::vector<std::string> min_values;
    std::vector<std::string> max_values;
    boundary_order order = boundary_order::unordered;
    std::vector<int64_t> null_counts; ///< empty when the writer stored none
    std::vector<int64_t> nan_counts;  ///< float/double columns; empty when not stored
};

/// Split-block bloom filter header (algorithm BLOCK, hash XXHASH, UNCOMPRESSED are the only
/// members the spec defines; decode() checks them).
struct bloom_filter_header {
    int32_t num_bytes = 0;
};

void encode(const file_metadata& m, byte_buffer& out);
void encode(const page_header& h, byte_buffer& out);
void encode(const bloom_filter_header& h, byte_buffer& out);
void encode(const offset_index& i, byte_buffer& out);
void encode(const column_index& i, byte_buffer& out);
void encode(const column_metadata& m, byte_buffer& out);
void encode(const file_crypto_metadata& m, byte_buffer& out);

/// Decodes from the front of `in`; `consumed` receives the header's encoded size.
result<file_metadata> decode_file_metadata(bytes_view in);
/// ... reporting how many bytes the struct took (a signed plaintext footer is followed by its
/// signature).
result<file_metadata> decode_file_metadata(bytes_view in, size_t& consumed);
/// A ColumnMetaData struct on its own (a decrypted encrypted_column_metadata module).
result<column_metadata> decode_column_metadata(bytes_view in);
result<file_crypto_metadata> decode_file_crypto_metadata(bytes_view in, size_t& consumed);
result<page_header> decode_page_header(bytes_view in, size_t& consumed);
result<bloom_filter_header> decode_bloom_filter_header(bytes_view in, size_t& consumed);
/// Decode a whole OffsetIndex / ColumnIndex (the bytes the ColumnChunk's offset and length
/// name). Lists are checked for consistency: equal lengths, offsets and first rows ascending.
result<offset_index> decode_offset_index(bytes_view in);
result<column_index> decode_column_index(bytes_view in);

std::string_view to_string(encoding e);
std::string_view to_string(compression_codec c);

} // namespace floe::parquet
