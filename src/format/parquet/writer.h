#pragma once

// Parquet writer, built in stages: per-leaf column writers take (value, definition level,
// repetition level) triplets and cut pages (levels RLE-encoded, values PLAIN / dictionary /
// DELTA_BINARY_PACKED, then compressed); a row group is encoded in memory and then written to
// the output sink in one pass (encode apart from I/O); close() writes the footer and returns
// the summary Iceberg needs (sizes, counts, bounds, split offsets).
//
// A file_writer owns its sink and column writers; one thread drives it.

#include "base/bytes.h"
#include "base/result.h"
#include "format/parquet/compression.h"
#include "format/parquet/encryption.h"
#include "format/parquet/io.h"
#include "format/parquet/metadata.h"
#include "format/parquet/schema.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::parquet {

struct writer_options {
    compression_codec codec = compression_codec::zstd;
    int compression_level = 0;                ///< 0: codec default
    uint64_t row_group_size = 128ull << 20;   ///< cut a row group at this many encoded bytes
    /// ... or at this many rows (0: no limit). Lookups by key read the `key` column of every row
    /// group whose bloom filter cannot rule the key out, so this bounds their cost.
    uint64_t row_group_rows = 0;
    uint64_t target_file_size = 128ull << 20; ///< should_roll() turns true past this size
    size_t page_size = 1u << 20;              ///< cut a data page at this many raw bytes
    size_t page_row_limit = 20000;            ///< ... or at this many rows
    size_t dictionary_size_limit = 1u << 20;  ///< dictionary bytes before falling back to PLAIN
    size_t stats_truncate_length = 64;        ///< longer binary min/max are truncated (inexact)
    bool page_statistics = true;
    bool page_crc = false;  ///< CRC-32 of each compressed page in its header
    bool page_index = true; ///< write ColumnIndex + OffsetIndex for every column chunk
    double bloom_filter_fpp = 0.01;
    std::vector<key_value> key_value_metadata;
    std::string created_by = "floe version 0.1.0";
    /// Parquet Modular Encryption (encryption.h); nullopt writes a plaintext file.
    std::optional<encryption_config> encryption;
    /// One data page per column chunk: page_size and page_row_limit are ignored, so bound the
    /// row group (row_group_rows / row_group_size) instead. A byte-array chunk is dictionary
    /// encoded (a dictionary page, then the data page) while the dictionary pays; once it
    /// fails the normal fallback tests (dictionary_size_limit, or bigger than PLAIN), the
    /// page so far is re-encoded PLAIN and the chunk is written without a dictionary. For
    /// readers that handle one page per chunk only: DuckDB 1.5 decrypts every data page of a
    /// chunk with page ordinal 0 in its AAD, so it reads encrypted files only when each chunk
    /// has a single data page (and no bloom filter: it fails the tag of any encrypted column
    /// that has one).
    bool single_page_chunks = false;
};

/// Per-leaf figures for one file, summed over row groups (Iceberg's DataFile metrics).
struct column_summary {
    std::string path;
    std::optional<int32_t> field_id;
    physical_type type = physical_type::int32;
    bool repeated = false;       ///< inside a list: Iceberg keeps no bounds for these
    int64_t compressed_size = 0; ///< bytes in the file (pages + headers + dictionary)
    int64_t uncompressed_size = 0;
    int64_t num_values = 0; ///< leaf entries, nulls included
    int64_t null_count = 0;
    /// Bounds as Parquet plain bytes: ints little-endian, byte arrays raw. Binary bounds may be
    /// truncated (then *_exact is false; max is still an upper bound).
    std::optional<std::string> min_value, max_value;
    bool min_exact = true, max_exact = true;
};

struct file_summary {
    std::string name;
    int64_t row_count = 0;
    uint64_t file_size = 0;
    uint32_t footer_size = 0;
    std::vector<int64_t> split_offsets;  ///< start of each row group
    std::vector<column_summary> columns; ///< one per leaf, schema order
    file_metadata metadata;
};

/// What the page index keeps of one data page while its chunk is open.
struct page_index_entry {
    int64_t offset = 0;               ///< from the chunk start, header included
    int32_t size = 0;                 ///< header + compressed body
    int64_t first_row = 0;            ///< rows of the chunk before the page
    int64_t null_count = 0;           ///< entries below the maximum definition level
    bool null_page = true;            ///< no defined value
    std::string min_value, max_value; ///< plain bytes, truncated like page statistics
    int64_t nan_count = -1;           ///< float/double pages: NaN values; -1 otherwise
};

namespace detail {
class byte_dictionary;

/// A page's definition or repetition levels, one byte per entry: appending is a store, and
/// encode_levels() turns the page into RLE/bit-packed runs in one pass when it is flushed.
/// Keeps its capacity from page to page.
class level_buffer {
public:
    [[gnu::always_inline]] void add(uint8_t v) {
        if (_size == _cap) [[unlikely]]
            grow();
        _data[_size++] = v;
    }
    void clear() noexcept { _size = 0; }
    const uint8_t* data() const noexcept { return _data.get(); }
    size_t size() const noexcept { return _size; }

private:
    void grow() {
        size_t cap = std::max<size_t>(_cap * 2, 4096);
        std::unique_ptr<uint8_t[]> d(new uint8_t[cap]);
        if (_size) std::memcpy(d.get(), _data.get(), _size);
        _data = std::move(d);
        _cap = cap;
    }
    std::unique_ptr<uint8_t[]> _data;
    size_t _size = 0, _cap = 0;
};

/// Memory for a column chunk's finished pages (header + compressed body), kept until the row
/// group is written. Pages are bump-allocated back to back in blocks that are kept from chunk
/// to chunk; blocks grow geometrically, and the big ones are mmap'd with transparent huge
/// pages, so the first row group of a file takes a few hundred page faults instead of one per
/// 4 KiB. Memory is not zero-filled. Owned by one column writer.
class page_arena {
public:
    page_arena() = default;
    page_arena(const page_arena&) = delete;
    page_arena& operator=(const page_arena&) = delete;
    ~page_arena();
    /// Room for `n` bytes after the pages kept so far.
    uint8_t* reserve(size_t n);
    /// Keeps the first `n` bytes of the last reserve().
    void commit(size_t n) noexcept { _blocks[_cur].used += n; }
    /// Releases every page (the blocks stay).
    void reset() noexcept;

private:
    struct block {
        uint8_t* data = nullptr;
        size_t cap = 0, used = 0;
        bool mapped = false;
    };
    std::vector<block> _blocks;
    size_t _cur = 0;
};

/// Append-only bytes for a page's PLAIN values, with a reserved gap in front where flush puts
/// the page's levels, so levels + values are contiguous without copying the values. Grows
/// without zero-filling. Owned by one column writer.
class page_buffer {
public:
    static constexpr size_t gap = 16u << 10;
    size_t size() const noexcept { return _size; }
    void clear() noexcept { _size = 0; }
    /// Appends the bytes of `v` as they are (FIXED_LEN_BYTE_ARRAY PLAIN); returns their offset.
    size_t append_raw(std::string_view v) {
        size_t n = v.size();
        if (_size + n > _cap) [[unlikely]]
            grow(_size + n);
        if (n) std::memcpy(_data.get() + gap + _size, v.data(), n);
        _size += n;
        return _size - n;
    }
    /// Appends `v` PLAIN-encoded (4-byte little-endian length, then the bytes) with one
    /// capacity check; returns the offset of the bytes.
    size_t append_plain(std::string_view v) {
        size_t n = v.size();
        if (_size + 4 + n > _cap) [[unlikely]]
            grow(_size + 4 + n);
        uint8_t* d = _data.get() + gap + _size;
        auto len = static_cast<uint32_t>(n);
        if constexpr (std::endian::native == std::endian::big) len = std::byteswap(len);
        std::memcpy(d, &len, 4);
        std::memcpy(d + 4, v.data(), n);
        _size += 4 + n;
        return _size - n;
    }
    /// The bytes; nullptr while nothing was ever appended (no arithmetic on a null pointer).
    const uint8_t* data() const noexcept { return _data ? _data.get() + gap : nullptr; }
    /// The start of the gap (valid once something was appended).
    uint8_t* front() noexcept { return _data.get(); }

private:
    void grow(size_t need) {
        size_t cap = std::max(need, std::max<size_t>(_cap * 2, 64u << 10));
        std::unique_ptr<uint8_t[]> d(new uint8_t[gap + cap]);
        if (_size) std::memcpy(d.get() + gap, _data.get() + gap, _size);
        _data = std::move(d);
        _cap = cap;
    }
    std::unique_ptr<uint8_t[]> _data;
    size_t _size = 0, _cap = 0;
};
} // namespace detail

/// Buffers one leaf column's current page and column chunk. Values go in with their levels:
/// add_*() for a defined value (definition level = max), add_null() for anything less.
/// The hot path is inline and allocation-free once buffers have grown.
class column_writer {
public:
    column_writer(const column_descriptor& desc, const writer_options& opts, compressor& comp);
    ~column_writer();
    column_writer(const column_writer&) = delete;
    column_writer& operator=(const column_writer&) = delete;

    [[gnu::always_inline]] void add_i32(int32_t v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        _i32.push_back(v);
        if (v < _page_imin) _page_imin = v;
        if (v > _page_imax) _page_imax = v;
        if (_bloom) [[unlikely]]
            _bloom_hashes.push_back(hash_i32(v));
    }
    [[gnu::always_inline]] void add_i64(int64_t v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        _i64.push_back(v);
        if (v < _page_imin) _page_imin = v;
        if (v > _page_imax) _page_imax = v;
        if (_bloom) [[unlikely]]
            _bloom_hashes.push_back(hash_i64(v));
    }
    void add_bytes(std::string_view v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        if (_dict_mode) {
            add_dict(v);
        } else {
            size_t off = _plain.append_plain(v);
            _page_bytes += 4 + v.size();
            ++_page_plain_values;
            update_minmax_plain(off, v);
            if (_bloom) _bloom_hashes.push_back(hash_bytes(v));
        }
    }
    /// BOOLEAN: PLAIN (bit-packed) pages; min/max false < true.
    void add_bool(bool v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        _bools.push_back(static_cast<uint8_t>(v));
        if (v < _page_imin) _page_imin = v;
        if (v > _page_imax) _page_imax = v;
    }
    /// FLOAT / DOUBLE: PLAIN pages. NaN is counted (nan_count) and left out of min/max; a zero
    /// min is written as -0.0 and a zero max as +0.0.
    void add_f32(float v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        _i32.push_back(std::bit_cast<int32_t>(v));
        add_float_stats(v);
        if (_bloom) [[unlikely]]
            _bloom_hashes.push_back(hash_i32(std::bit_cast<int32_t>(v)));
    }
    void add_f64(double v, int16_t rep = 0) {
        begin_entry(rep, _desc.max_def);
        _i64.push_back(std::bit_cast<int64_t>(v));
        add_float_stats(v);
        if (_bloom) [[unlikely]]
            _bloom_hashes.push_back(hash_i64(std::bit_cast<int64_t>(v)));
    }
    /// FIXED_LEN_BYTE_ARRAY: PLAIN pages. `v` must be the descriptor's type_length bytes; any
    /// other size is an error reported by finish_chunk() (and so by flush_row_group/close),
    /// the entry written as zero bytes meanwhile. Min/max in unsigned byte order, or as
    /// signed big-endian numbers for DECIMAL; kept whole (not truncated).
    void add_fixed(std::string_view v, int16_t rep = 0);
    /// An undefined entry: `def` < max definition level (null value, null or empty list ...).
    [[gnu::always_inline]] void add_null(int16_t def, int16_t rep = 0) {
        begin_entry(rep, def);
        ++_page_nulls;
    }

    const column_descriptor& descriptor() const noexcept { return _desc; }
    /// Rows started in the current chunk (entries with repetition level 0).
    int64_t chunk_rows() const noexcept { return _chunk_rows; }
    /// Encoded bytes buffered for the current chunk, the open page's raw size included.
    uint64_t buffered_bytes() const noexcept;

    /// Closes the open page and returns the chunk's bytes (dictionary page first) and its
    /// metadata (offsets relative to the chunk start); resets for the next chunk.
    struct chunk {
        byte_buffer dictionary_page;
        std::vector<bytes_view>
            data_pages; ///< views into the writer's page buffers, valid until its next add
        /// Plaintext header bytes at the front of dictionary_page / each data page / bloom,
        /// so an encrypting file writer can make two modules of each. Sizes in `meta` and
        /// `pages` already count the modules' overhead when the column is encrypted.
        size_t dictionary_header_size = 0;
        std::vector<uint32_t> data_header_sizes;
        size_t bloom_header_size = 0;
        column_metadata meta;
        std::optional<byte_buffer> bloom; ///< header + bitset
        std::optional<std::string> min_full, max_full;
        /// One entry per data page, offsets relative to the chunk start.
        std::vector<page_index_entry> pages;
        bool column_index = true; ///< false: some page has values but no min/max (only NaN)
    };
    result<chunk> finish_chunk();

private:
    [[gnu::always_inline]] void begin_entry(int16_t rep, int16_t def) {
        if (rep == 0) [[likely]] {
            if (static_cast<uint64_t>(_page_rows) >= _row_limit || _page_bytes >= _page_size
                || _dict_overflow) [[unlikely]]
                flush_page_or_die();
            ++_page_rows;
            ++_chunk_rows;
        }
        if (_has_rep) _rep.add(static_cast<uint8_t>(rep));
        if (_has_def) _def.add(static_cast<uint8_t>(def));
        ++_page_values;
    }
    size_t page_raw_bytes() const noexcept {
        return _plain.size() + _indices.size() * 2 + _i64.size() * 8 + _i32.size() * 4
               + static_cast<size_t>(_page_values) / 4;
    }
    // PLAIN pages: min/max are positions in the page buffer (no copies per new max, as with
    // increasing ids); turned into strings when the page is flushed. Most values fall strictly
    // between the page's min and max within their first 8 bytes: the order keys settle those
    // with two integer compares, and only ties with a bound go to less().
    void update_minmax_plain(size_t off, std::string_view v) {
        uint64_t k = order_key(v);
        if (!_page_has_bminmax) [[unlikely]] {
            _pmin_off = _pmax_off = off;
            _pmin_len = _pmax_len = v.size();
            _bmin_key = _bmax_key = k;
            _page_has_bminmax = true;
            return;
        }
        if (k > _bmin_key && k < _bmax_key) [[likely]]
            return;
        std::string_view mn(reinterpret_cast<const char*>(_plain.data()) + _pmin_off, _pmin_len);
        std::string_view mx(reinterpret_cast<const char*>(_plain.data()) + _pmax_off, _pmax_len);
        if (k < _bmin_key || (k == _bmin_key && less(v, mn))) {
            _pmin_off = off;
            _pmin_len = v.size();
            _bmin_key = k;
        } else if (k > _bmax_key || (k == _bmax_key && less(mx, v))) {
            _pmax_off = off;
            _pmax_len = v.size();
            _bmax_key = k;
        }
    }
    void update_minmax(std::string_view v) {
        uint64_t k = order_key(v);
        if (!_page_has_bminmax) [[unlikely]] {
            _page_bmin.assign(v);
            _page_bmax.assign(v);
            _bmin_key = _bmax_key = k;
            _page_has_bminmax = true;
            return;
        }
        if (k > _bmin_key && k < _bmax_key) [[likely]]
            return;
        if (k < _bmin_key || (k == _bmin_key && less(v, _page_bmin))) {
            _page_bmin.assign(v);
            _bmin_key = k;
        } else if (k > _bmax_key || (k == _bmax_key && less(_page_bmax, v))) {
            _page_bmax.assign(v);
            _bmax_key = k;
        }
    }
    /// The first 8 bytes of `v` as a big-endian number, zero-padded. Between two values, a
    /// strictly smaller key means a strictly smaller value in unsigned byte order (where the
    /// keys first differ, either both bytes are real, or the smaller one is padding and that
    /// value is a prefix of the other); equal keys decide nothing.
    static uint64_t order_key(std::string_view v) noexcept {
        uint64_t x = 0;
        if (v.size() >= 8) [[likely]] {
            std::memcpy(&x, v.data(), 8);
            if constexpr (std::endian::native == std::endian::little) x = __builtin_bswap64(x);
            return x;
        }
        for (size_t i = 0; i < v.size(); ++i)
            x |= uint64_t{static_cast<uint8_t>(v[i])} << (56 - 8 * i);
        return x;
    }
    /// Unsigned byte-wise order, 8 bytes per step (values often share a prefix, such as
    /// `{"id":`; a memcmp call per value costs more than the compare).
    static bool less(std::string_view a, std::string_view b) noexcept {
        size_t n = std::min(a.size(), b.size());
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t x, y;
            std::memcpy(&x, a.data() + i, 8);
            std::memcpy(&y, b.data() + i, 8);
            if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);
        }
        for (; i < n; ++i)
            if (a[i] != b[i]) return static_cast<uint8_t>(a[i]) < static_cast<uint8_t>(b[i]);
        return a.size() < b.size();
    }
    void add_dict(std::string_view v) {
        // Consecutive repeats (a partition's stream_key) skip the hash lookup and the stats.
        if (_last_dict_idx != UINT32_MAX && v.size() == _last_dict_len
            && same_bytes(v.data(), _last_dict_value, v.size())) [[likely]] {
            _indices.push_back(_last_dict_idx);
            _page_bytes += 2;
            _dict_plain_equiv += 4 + v.size();
            ++_dict_values_in_chunk;
            return;
        }
        add_dict_slow(v);
    }
    /// Equality with the first 8 bytes compared inline: most mismatches end there.
    static bool same_bytes(const char* a, const char* b, size_t n) noexcept {
        if (n < 8) return n == 0 || std::memcmp(a, b, n) == 0;
        uint64_t x, y;
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
        return x == y && (n == 8 || std::memcmp(a + 8, b + 8, n - 8) == 0);
    }
    void add_float_stats(double v) {
        if (v != v) [[unlikely]] {
            ++_page_nans;
            return;
        }
        if (v < _page_fmin) _page_fmin = v;
        if (v > _page_fmax) _page_fmax = v;
        ++_page_fvalues;
    }
    /// Fixed-length values: unsigned byte order, or signed (two's complement) for decimals.
    bool fixed_less(std::string_view a, std::string_view b) const noexcept;
    void add_dict_slow(std::string_view v);
    void flush_page_or_die();
    result<void> flush_page();
    void fallback_to_plain();
    static uint64_t hash_bytes(std::string_view v);
    static uint64_t hash_i32(int32_t v);
    static uint64_t hash_i64(int64_t v);

    const column_descriptor& _desc;
    const writer_options& _opts;
    compressor& _comp;
    uint64_t _row_limit; // rows per page (for integers also page_size / width)
    uint64_t _page_size;
    uint64_t _page_bytes = 0; // raw bytes of the open page's byte-array values (estimate)
    bool _has_def, _has_rep;
    bool _bloom;
    bool _is_bytes;
    bool _use_delta;
    /// What the values are, for the page encoder and statistics (not the add_* hot paths).
    enum class value_kind : uint8_t { i32, i64, bytes, boolean, f32, f64, fixed };
    value_kind _kind = value_kind::i32;
    bool _signed_fixed = false; // DECIMAL in FIXED_LEN_BYTE_ARRAY

    // open page
    detail::level_buffer _def, _rep;
    std::vector<int32_t> _i32;
    std::vector<int64_t> _i64;
    detail::page_buffer _plain;
    std::vector<uint32_t> _indices;
    int64_t _page_values = 0, _page_nulls = 0, _page_rows = 0, _page_plain_values = 0;
    int64_t _page_imin = INT64_MAX, _page_imax = INT64_MIN;
    std::vector<uint8_t> _bools; // BOOLEAN values of the open page, one byte each
    // FLOAT/DOUBLE pages: min/max of the non-NaN values (as doubles: floats convert exactly).
    double _page_fmin = HUGE_VAL, _page_fmax = -HUGE_VAL;
    int64_t _page_nans = 0, _page_fvalues = 0;
    std::string _page_bmin, _page_bmax;
    size_t _pmin_off = 0, _pmin_len = 0, _pmax_off = 0, _pmax_len = 0; // PLAIN pages
    uint64_t _bmin_key = 0, _bmax_key = 0; // order_key() of the page's min and max
    bool _page_has_bminmax = false;

    // dictionary state (byte arrays)
    bool _dict_mode = false;
    bool _dict_overflow = false;
    bool _dict_page_encoded = false; // the page being flushed holds dictionary indices
    // The last value added through the dictionary: its entry (bytes in the dictionary, valid
    // until the next insert, after which they are set again) and index; UINT32_MAX: none.
    const char* _last_dict_value = nullptr;
    size_t _last_dict_len = 0;
    uint32_t _last_dict_idx = UINT32_MAX;
    std::vector<uint32_t> _dict_seen_page; // per entry: the page number that last saw it
    uint32_t _page_no = 1;
    std::unique_ptr<detail::byte_dictionary> _dict;
    uint64_t _dict_indices_total = 0; // values encoded through the dictionary in this chunk
    uint64_t _dict_plain_equiv = 0;   // what they would take as PLAIN
    uint64_t _dict_values_in_chunk = 0;

    // chunk
    // Finished pages of the chunk; the memory is reused from chunk to chunk so steady-state
    // writing neither reallocates nor copies them.
    detail::page_arena _arena;
    std::vector<bytes_view> _pages; // finished pages of the chunk, in _arena
    size_t _pages_used = 0;
    uint64_t _pages_bytes = 0;
    byte_buffer _scratch, _compressed, _header;
    // Page index entries of the chunk's data pages (ColumnIndex and OffsetIndex).
    std::vector<page_index_entry> _page_index;
    int64_t _chunk_rows = 0, _chunk_values = 0, _chunk_nulls = 0, _chunk_uncompressed = 0;
    bool _chunk_has_minmax = false;
    int64_t _chunk_imin = INT64_MAX, _chunk_imax = INT64_MIN;
    double _chunk_fmin = HUGE_VAL, _chunk_fmax = -HUGE_VAL;
    int64_t _chunk_nans = 0;
    // A page of only NaN (and nulls) has no min/max: the chunk then gets no ColumnIndex.
    bool _chunk_nan_only_page = false;
    std::string _chunk_bmin, _chunk_bmax;
    std::vector<encoding> _encodings;
    int32_t _dict_pages_used = 0, _plain_pages = 0, _delta_pages = 0;
    std::vector<uint64_t> _bloom_hashes;
    std::optional<error> _deferred_error;
    // Encrypted columns: bytes each header module and each page module adds to its plaintext
    // (0 for plaintext columns), counted in compressed_page_size, chunk sizes and the page index.
    uint32_t _header_overhead = 0, _page_overhead = 0;
    std::vector<uint32_t> _header_sizes; // data page headers of the chunk (plaintext bytes)
};

namespace detail {
struct file_encryptor;
}

/// Writes one Parquet file. Append rows by giving every leaf column its entries for the row
/// (through column(i)), then end_row(). Row groups are cut by size; close() finishes the file.
class file_writer {
public:
    static result<std::unique_ptr<file_writer>> open(std::unique_ptr<output_sink> sink,
                                                     const schema& s, writer_options opts = {});
    ~file_writer();

    column_writer& column(size_t i) noexcept { return *_columns[i]; }
    size_t num_columns() const noexcept { return _columns.size(); }

    /// Marks the end of one row; every column must have received its entries.
    result<void> end_row() {
        ++_rows_in_group;
        // Checked every 16 rows: summing the columns' buffers costs more than a row's encoding.
        if ((_rows_in_group & 15) == 0
            && (buffered_bytes() >= _opts.row_group_size
                || (_opts.row_group_rows && uint64_t(_rows_in_group) >= _opts.row_group_rows))) [[unlikely]]
            return flush_row_group();
        return {};
    }
    /// Encodes and writes the buffered rows as a row group (no-op when empty).
    result<void> flush_row_group();
    /// Flushes, writes the footer, closes the sink.
    result<file_summary> close();

    uint64_t buffered_bytes() const noexcept;
    /// Bytes written plus bytes buffered: what the file would take if closed now (about).
    uint64_t estimated_file_size() const noexcept { return _pos + buffered_bytes(); }
    /// True once the file reached writer_options::target_file_size: roll to a new file.
    bool should_roll() const noexcept { return estimated_file_size() >= _opts.target_file_size; }
    int64_t rows_written() const noexcept { return _total_rows + _rows_in_group; }
    const std::string& name() const { return _sink->name(); }

private:
    file_writer(std::unique_ptr<output_sink> sink, const schema& s, writer_options opts);
    result<void> write(bytes_view b);
    /// Keeps the ColumnIndex and OffsetIndex of a chunk written at `chunk_start`.
    void add_page_index(size_t col, int64_t chunk_start, std::vector<page_index_entry>& pages,
                        bool with_column_index);

    std::unique_ptr<output_sink> _sink;
    schema _schema;
    writer_options _opts;
    compressor _comp;
    std::vector<std::unique_ptr<column_writer>> _columns;
    uint64_t _pos = 0;
    int64_t _rows_in_group = 0;
    int64_t _total_rows = 0;
    file_metadata _meta;
    std::vector<column_summary> _summary;
    std::vector<int64_t> _split_offsets;
    // Page indexes of every chunk written, [row group][column], written by close().
    std::vector<std::vector<column_index>> _column_indexes;
    std::vector<std::vector<offset_index>> _offset_indexes;
    bool _closed = false;
    /// Set when writer_options::encryption is: keys, ciphers and the file's AAD.
    std::unique_ptr<detail::file_encryptor> _enc;
    /// Writes the row group's chunk `col` as modules (encrypted columns only).
    result<void> write_encrypted_chunk(size_t col, column_writer::chunk& ch, int rg);
    /// The footer's bytes from magic to magic (exclusive), encrypted or signed.
    result<byte_buffer> encrypted_footer();
};

/// One Kafka-style record as a row of Floe's message table. Views: the caller owns the bytes
/// until append() returns.
struct message_header_view {
    std::string_view key;
    std::optional<std::string_view> value;
};
struct message_row {
    std::string_view stream_key;
    int64_t segment_id = 0;
    std::string_view message_id;
    int64_t message_ts = 0;
    int64_t kafka_timestamp = -1;
    std::optional<std::string_view> key;
    std::optional<std::string_view> value;
    /// nullopt: a null header list; an empty span: an empty list.
    std::optional<std::span<const message_header_view>> headers;
    int32_t partition = 0;
    int64_t offset = 0;
};

/// Writes message_row values to a file with message_schema().
class message_writer {
public:
    static result<message_writer> open(std::unique_ptr<output_sink> sink, writer_options opts = {});
    result<void> append(const message_row& row);
    result<file_summary> close() { return _w->close(); }
    file_writer& file() noexcept { return *_w; }

private:
    explicit message_writer(std::unique_ptr<file_writer> w) : _w(std::move(w)) {
        for (size_t i = 0; i < _cols.size(); ++i)
            _cols[i] = &_w->column(i);
    }
    std::unique_ptr<file_writer> _w;
    // The file writer's column writers (they live as long as it does), one load each per row.
    std::array<column_writer*, message_col::count> _cols{};
};

/// Gives the message table's eleven leaf columns (message_col order) their entries for `row`,
/// without ending the row: a schema that starts with message_schema()'s columns (a typed table,
/// a dead-letter table) adds its own leaves after them, then calls file_writer::end_row().
void add_message_columns(std::span<column_writer* const, message_col::count> cols, const message_row& row);

/// Shortens binary/string bounds for statistics. The min is a prefix (cut on a UTF-8 boundary
/// for strings); the max is a prefix with its last byte (or code point) incremented, nullopt
/// when no such bound exists. `exact` reports whether the value was kept whole.
std::string truncate_min(std::string_view v, size_t len, bool utf8, bool& exact);
std::optional<std::string> truncate_max(std::string_view v, size_t len, bool utf8, bool& exact);

} // namespace floe::parquet
