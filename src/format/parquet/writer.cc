#include "format/parquet/writer.h"

#include "base/varint.h"
#include "format/parquet/bloom_filter.h"
#include "format/parquet/encoding.h"

// Inlined: the writer hashes short values (dictionary lookups, bloom filter hashes), where a
// call into the shared library costs about as much as the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zlib.h>

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace floe::parquet {

namespace detail {

/// Insert-or-find for byte strings: entries stored PLAIN-encoded back to back (4-byte length +
/// bytes), which is exactly the dictionary page payload; open addressing on an XXH3 hash.
/// (A `key` column could hash with XXH64 here and reuse that hash for its bloom filter, but
/// XXH64 of a short key costs about 2.5 XXH3s and only new entries need it: measured slower.)
class byte_dictionary {
public:
    byte_dictionary() { rehash(1024); }

    /// Index of `v`, inserting it if new; `inserted` tells which.
    uint32_t insert(std::string_view v, bool& inserted) {
        uint64_t h = XXH3_64bits(v.data(), v.size());
        uint32_t tag = static_cast<uint32_t>(h >> 32);
        size_t i = static_cast<size_t>(h) & _mask;
        for (;;) {
            slot& s = _slots[i];
            if (s.index_plus1 == 0) break;
            if (s.tag == tag) {
                const uint8_t* e = _data.data() + _offsets[s.index_plus1 - 1];
                uint32_t len;
                std::memcpy(&len, e, 4);
                if (len == v.size() && (len == 0 || std::memcmp(e + 4, v.data(), len) == 0)) {
                    inserted = false;
                    return s.index_plus1 - 1;
                }
            }
            i = (i + 1) & _mask;
        }
        uint32_t idx = static_cast<uint32_t>(_offsets.size());
        _offsets.push_back(static_cast<uint32_t>(_data.size()));
        uint32_t len = static_cast<uint32_t>(v.size());
        auto* lp = reinterpret_cast<const uint8_t*>(&len);
        _data.insert(_data.end(), lp, lp + 4);
        _data.insert(_data.end(), reinterpret_cast<const uint8_t*>(v.data()),
                     reinterpret_cast<const uint8_t*>(v.data()) + v.size());
        _slots[i] = slot{idx + 1, tag};
        inserted = true;
        if (_offsets.size() * 2 > _slots.size()) rehash(_slots.size() * 2);
        return idx;
    }
    /// The bytes of entry `idx`, valid until the next insert.
    const char* entry(uint32_t idx) const noexcept {
        return reinterpret_cast<const char*>(_data.data()) + _offsets[idx] + 4;
    }
    /// Entry `idx` as a view, valid until the next insert.
    std::string_view value(uint32_t idx) const noexcept {
        uint32_t len;
        std::memcpy(&len, _data.data() + _offsets[idx], 4);
        return {entry(idx), len};
    }
    size_t size() const noexcept { return _offsets.size(); }
    size_t bytes() const noexcept { return _data.size(); }
    const byte_buffer& data() const noexcept { return _data; }
    void clear() {
        _offsets.clear();
        _data.clear();
        std::fill(_slots.begin(), _slots.end(), slot{});
    }

private:
    struct slot {
        uint32_t index_plus1 = 0;
        uint32_t tag = 0;
    };
    void rehash(size_t n) {
        _slots.assign(n, slot{});
        _mask = n - 1;
        for (uint32_t idx = 0; idx < _offsets.size(); ++idx) {
            const uint8_t* e = _data.data() + _offsets[idx];
            uint32_t len;
            std::memcpy(&len, e, 4);
            uint64_t h = XXH3_64bits(e + 4, len);
            size_t i = static_cast<size_t>(h) & _mask;
            while (_slots[i].index_plus1 != 0)
                i = (i + 1) & _mask;
            _slots[i] = slot{idx + 1, static_cast<uint32_t>(h >> 32)};
        }
    }
    std::vector<slot> _slots;
    size_t _mask = 0;
    std::vector<uint32_t> _offsets;
    byte_buffer _data;
};

page_arena::~page_arena() {
    for (auto& b : _blocks) {
        if (b.mapped)
            ::munmap(b.data, b.cap);
        else
            delete[] b.data;
    }
}

void page_arena::reset() noexcept {
    for (auto& b : _blocks)
        b.used = 0;
    _cur = 0;
}

uint8_t* page_arena::reserve(size_t n) {
    for (; _cur < _blocks.size(); ++_cur) {
        auto& b = _blocks[_cur];
        if (b.cap - b.used >= n) return b.data + b.used;
        if (b.used == 0) break; // empty yet too small: replaced below
    }
    // A new block: double the last one (from 256 KiB up to 64 MiB), at least `n`.
    constexpr size_t huge_from = 4u << 20, huge = 2u << 20;
    size_t last = _blocks.empty() ? 0 : _blocks.back().cap;
    size_t cap = std::max(n, std::clamp<size_t>(last * 2, 256u << 10, 64u << 20));
    block b;
    if (cap >= huge_from) {
        cap = (cap + huge - 1) / huge * huge;
        void* p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        ::madvise(p, cap, MADV_HUGEPAGE); // a hint: without it, 4 KiB pages
        b.data = static_cast<uint8_t*>(p);
        b.mapped = true;
    } else {
        b.data = new uint8_t[cap];
    }
    b.cap = cap;
    if (_cur < _blocks.size()) {
        auto& old = _blocks[_cur];
        if (old.mapped)
            ::munmap(old.data, old.cap);
        else
            delete[] old.data;
        old = b;
    } else {
        _blocks.push_back(b);
        _cur = _blocks.size() - 1;
    }
    return _blocks[_cur].data;
}

} // namespace detail

// ------------------------------------------------------------------ stats helpers

std::string truncate_min(std::string_view v, size_t len, bool utf8, bool& exact) {
    if (v.size() <= len) {
        exact = true;
        return std::string(v);
    }
    exact = false;
    size_t cut = len;
    if (utf8)
        while (cut > 0 && (static_cast<uint8_t>(v[cut]) & 0xC0) == 0x80)
            --cut;
    return std::string(v.substr(0, cut));
}

std::optional<std::string> truncate_max(std::string_view v, size_t len, bool utf8, bool& exact) {
    if (v.size() <= len) {
        exact = true;
        return std::string(v);
    }
    exact = false;
    if (!utf8) {
        std::string s(v.substr(0, len));
        while (!s.empty()) {
            auto& b = reinterpret_cast<uint8_t&>(s.back());
            if (b != 0xFF) {
                ++b;
                return s;
            }
            s.pop_back();
        }
        return std::nullopt;
    }
    size_t cut = len;
    while (cut > 0 && (static_cast<uint8_t>(v[cut]) & 0xC0) == 0x80)
        --cut;
    std::string s(v.substr(0, cut));
    // Increment the last code point that can be incremented, dropping the ones after it.
    while (!s.empty()) {
        size_t start = s.size() - 1;
        while (start > 0 && (static_cast<uint8_t>(s[start]) & 0xC0) == 0x80)
            --start;
        std::string_view ch(s.data() + start, s.size() - start);
        uint32_t cp = 0;
        auto c0 = static_cast<uint8_t>(ch[0]);
        if (c0 < 0x80)
            cp = c0;
        else if ((c0 & 0xE0) == 0xC0 && ch.size() == 2)
            cp = ((c0 & 0x1Fu) << 6) | (static_cast<uint8_t>(ch[1]) & 0x3Fu);
        else if ((c0 & 0xF0) == 0xE0 && ch.size() == 3)
            cp = ((c0 & 0x0Fu) << 12) | ((static_cast<uint8_t>(ch[1]) & 0x3Fu) << 6)
                 | (static_cast<uint8_t>(ch[2]) & 0x3Fu);
        else if ((c0 & 0xF8) == 0xF0 && ch.size() == 4)
            cp = ((c0 & 0x07u) << 18) | ((static_cast<uint8_t>(ch[1]) & 0x3Fu) << 12)
                 | ((static_cast<uint8_t>(ch[2]) & 0x3Fu) << 6)
                 | (static_cast<uint8_t>(ch[3]) & 0x3Fu);
        else
            return std::nullopt; // not valid UTF-8: give no bound rather than a wrong one
        s.resize(start);
        uint32_t next = cp + 1;
        if (next >= 0xD800 && next <= 0xDFFF) next = 0xE000;
        if (next > 0x10FFFF) continue;
        if (next < 0x80)
            s.push_back(static_cast<char>(next));
        else if (next < 0x800) {
            s.push_back(static_cast<char>(0xC0 | (next >> 6)));
            s.push_back(static_cast<char>(0x80 | (next & 0x3F)));
        } else if (next < 0x10000) {
            s.push_back(static_cast<char>(0xE0 | (next >> 12)));
            s.push_back(static_cast<char>(0x80 | ((next >> 6) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | (next & 0x3F)));
        } else {
            s.push_back(static_cast<char>(0xF0 | (next >> 18)));
            s.push_back(static_cast<char>(0x80 | ((next >> 12) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | ((next >> 6) & 0x3F)));
            s.push_back(static_cast<char>(0x80 | (next & 0x3F)));
        }
        return s;
    }
    return std::nullopt;
}

namespace {

std::string int_bytes(physical_type t, int64_t v) {
    std::string s;
    if (t == physical_type::boolean) {
        s.push_back(static_cast<char>(v != 0));
    } else if (t == physical_type::int32) {
        int32_t x = static_cast<int32_t>(v);
        s.assign(reinterpret_cast<const char*>(&x), 4);
    } else {
        s.assign(reinterpret_cast<const char*>(&v), 8);
    }
    return s;
}

bool bytes_less(std::string_view a, std::string_view b) noexcept {
    size_t n = std::min(a.size(), b.size());
    int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
    return c < 0 || (c == 0 && a.size() < b.size());
}

/// A float/double bound as plain bytes; a zero min is written -0.0, a zero max +0.0 (the
/// spec's rule for TYPE_ORDER floating point statistics).
std::string float_bytes(bool f32, double v, bool is_min) {
    if (v == 0) v = is_min ? -0.0 : 0.0;
    std::string s;
    if (f32) {
        float x = static_cast<float>(v);
        s.assign(reinterpret_cast<const char*>(&x), 4);
    } else {
        s.assign(reinterpret_cast<const char*>(&v), 8);
    }
    return s;
}

void add_encoding(std::vector<encoding>& v, encoding e) {
    if (std::find(v.begin(), v.end(), e) == v.end()) v.push_back(e);
}

} // namespace

// ------------------------------------------------------------------ column_writer

column_writer::column_writer(const column_descriptor& desc, const writer_options& opts,
                             compressor& comp)
    : _desc(desc), _opts(opts), _comp(comp) {
    _is_bytes = desc.type == physical_type::byte_array;
    switch (desc.type) {
    case physical_type::int64:
        _kind = value_kind::i64;
        break;
    case physical_type::byte_array:
        _kind = value_kind::bytes;
        break;
    case physical_type::boolean:
        _kind = value_kind::boolean;
        break;
    case physical_type::float_:
        _kind = value_kind::f32;
        break;
    case physical_type::double_:
        _kind = value_kind::f64;
        break;
    case physical_type::fixed_len_byte_array:
        _kind = value_kind::fixed;
        _signed_fixed = desc.logical == logical_type::decimal;
        break;
    default:
        _kind = value_kind::i32;
        break;
    }
    _row_limit = std::max<size_t>(1, opts.page_row_limit);
    _page_size = std::max<size_t>(1, opts.page_size);
    if (!_is_bytes && _kind != value_kind::fixed) {
        // Fixed-width pages are cut by count: raw size is entries x width.
        uint64_t width = _kind == value_kind::i64 || _kind == value_kind::f64 ? 8 : 4;
        _row_limit = std::max<uint64_t>(1, std::min<uint64_t>(_row_limit, _page_size / width));
    }
    if (opts.single_page_chunks) _row_limit = _page_size = UINT64_MAX;
    _has_def = desc.max_def > 0;
    _has_rep = desc.max_rep > 0;
    if (opts.encryption) {
        const auto& e = *opts.encryption;
        if (e.column_keys.empty() || e.column_keys.contains(desc.dotted_path())) {
            _header_overhead = crypto::gcm_overhead;
            _page_overhead = e.algorithm == cipher_algorithm::aes_gcm_ctr_v1 ? crypto::ctr_overhead
                                                                              : crypto::gcm_overhead;
        }
    }
    _bloom = desc.bloom_filter && _kind != value_kind::boolean;
    _use_delta = (_kind == value_kind::i32 || _kind == value_kind::i64)
                 && (desc.enc == value_encoding::auto_ || desc.enc == value_encoding::delta);
    if (_is_bytes
        && (desc.enc == value_encoding::auto_ || desc.enc == value_encoding::dictionary)) {
        _dict = std::make_unique<detail::byte_dictionary>();
        _dict_mode = true;
    }
}

column_writer::~column_writer() = default;

uint64_t column_writer::hash_bytes(std::string_view v) {
    return XXH64(v.data(), v.size(), 0);
}
uint64_t column_writer::hash_i32(int32_t v) {
    return XXH64(&v, 4, 0);
}
uint64_t column_writer::hash_i64(int64_t v) {
    return XXH64(&v, 8, 0);
}

bool column_writer::fixed_less(std::string_view a, std::string_view b) const noexcept {
    if (_signed_fixed && !a.empty() && !b.empty() && a[0] != b[0])
        return static_cast<int8_t>(a[0]) < static_cast<int8_t>(b[0]);
    return bytes_less(a, b);
}

void column_writer::add_fixed(std::string_view v, int16_t rep) {
    begin_entry(rep, _desc.max_def);
    auto len = static_cast<size_t>(_desc.type_length);
    if (v.size() != len) [[unlikely]] {
        if (!_deferred_error)
            _deferred_error = make_error(errc::invalid_argument,
                                         "column {}: fixed value of {} bytes, the type has {}",
                                         _desc.dotted_path(), v.size(), len);
        _page_bytes += len;
        _plain.append_raw(std::string(len, '\0'));
        return;
    }
    size_t off = _plain.append_raw(v);
    _page_bytes += len;
    ++_page_plain_values;
    std::string_view stored(reinterpret_cast<const char*>(_plain.data()) + off, len);
    if (!_page_has_bminmax) {
        _pmin_off = _pmax_off = off;
        _pmin_len = _pmax_len = len;
        _page_has_bminmax = true;
    } else {
        std::string_view mn(reinterpret_cast<const char*>(_plain.data()) + _pmin_off, len);
        std::string_view mx(reinterpret_cast<const char*>(_plain.data()) + _pmax_off, len);
        if (fixed_less(stored, mn))
            _pmin_off = off;
        else if (fixed_less(mx, stored))
            _pmax_off = off;
    }
    if (_bloom) _bloom_hashes.push_back(hash_bytes(v));
}

void column_writer::add_dict_slow(std::string_view v) {
    bool inserted;
    uint32_t idx = _dict->insert(v, inserted);
    _indices.push_back(idx);
    _page_bytes += 2;
    _dict_plain_equiv += 4 + v.size();
    _last_dict_value = _dict->entry(idx);
    _last_dict_len = v.size();
    _last_dict_idx = idx;
    // Page min/max: an entry already seen on this page cannot change them.
    if (idx >= _dict_seen_page.size()) _dict_seen_page.resize(idx + 1, 0);
    if (_dict_seen_page[idx] != _page_no) {
        _dict_seen_page[idx] = _page_no;
        update_minmax(v);
    }
    if (inserted) {
        if (_bloom) _bloom_hashes.push_back(hash_bytes(v));
        if (_dict->bytes() > _opts.dictionary_size_limit) _dict_overflow = true;
    }
    // Give up early on near-unique columns (ids, payloads): every 1024 values, compare the
    // dictionary's cost with PLAIN's.
    if ((++_dict_values_in_chunk & 1023) == 0) {
        uint64_t est =
            _dict->bytes()
            + _dict_values_in_chunk * static_cast<uint64_t>(bit_width_of(_dict->size())) / 8;
        if (est > _dict_plain_equiv) _dict_overflow = true;
    }
    // One page per chunk: no later page could go PLAIN, so the open page (the whole chunk so
    // far) goes PLAIN now, and a unique column never builds a dictionary of the whole chunk.
    // The values are the dictionary's entries in index order; levels, counts and the bloom
    // hashes (one per distinct value so far) stay as they are.
    if (!_dict_overflow || !_opts.single_page_chunks) [[likely]]
        return;
    _page_has_bminmax = false;
    for (uint32_t idx : _indices) {
        std::string_view v = _dict->value(idx);
        size_t off = _plain.append_plain(v);
        update_minmax_plain(off, v);
    }
    _page_plain_values += static_cast<int64_t>(_indices.size());
    _page_bytes = _plain.size();
    _indices.clear();
    _dict->clear();
    _last_dict_idx = UINT32_MAX;
    _dict_plain_equiv = _dict_values_in_chunk = 0;
    fallback_to_plain();
}

uint64_t column_writer::buffered_bytes() const noexcept {
    return _pages_bytes + page_raw_bytes() + (_dict_mode ? _dict->bytes() : 0);
}

void column_writer::flush_page_or_die() {
    auto r = flush_page();
    // Encoding a page fails only on a codec error; remember it for finish_chunk() to report.
    if (!r && !_deferred_error) _deferred_error = r.error();
}

void column_writer::fallback_to_plain() {
    _dict_mode = false;
    _dict_overflow = false;
}

result<void> column_writer::flush_page() {
    if (_page_values == 0) {
        if (_dict_overflow) fallback_to_plain();
        return {};
    }
    _scratch.clear();
    byte_writer w(_scratch);
    auto put_levels = [&](const detail::level_buffer& lv, int16_t max) {
        size_t at = _scratch.size();
        w.put_le<uint32_t>(0);
        encode_levels(lv.data(), lv.size(), bit_width_of(static_cast<uint64_t>(max)), _scratch);
        uint32_t n = static_cast<uint32_t>(_scratch.size() - at - 4);
        std::memcpy(_scratch.data() + at, &n, 4);
    };
    if (_desc.max_rep > 0) put_levels(_rep, _desc.max_rep);
    if (_desc.max_def > 0) put_levels(_def, _desc.max_def);

    encoding enc = encoding::plain;
    _dict_page_encoded = false;
    if (_is_bytes) {
        if (_dict_mode && _dict->size() > 0) {
            _dict_page_encoded = true;
            enc = encoding::rle_dictionary;
            int width = std::max(1, bit_width_of(_dict->size() > 0 ? _dict->size() - 1 : 0));
            _scratch.push_back(static_cast<uint8_t>(width));
            encode_rle_hybrid(_indices.data(), _indices.size(), width, _scratch);
            _dict_indices_total += _indices.size();
            ++_dict_pages_used;
        } else {
            ++_plain_pages;
        }
    } else if (_kind == value_kind::boolean) {
        // PLAIN booleans: bit-packed, least significant bit first.
        size_t at = _scratch.size();
        _scratch.resize(at + (_bools.size() + 7) / 8, 0);
        for (size_t i = 0; i < _bools.size(); ++i)
            _scratch[at + i / 8] |= static_cast<uint8_t>(_bools[i] << (i % 8));
        ++_plain_pages;
    } else if (_kind == value_kind::fixed) {
        ++_plain_pages; // the values stay in _plain, joined to the levels below
    } else if (_kind == value_kind::i64 || _kind == value_kind::f64) {
        if (_use_delta) {
            enc = encoding::delta_binary_packed;
            delta_binary_encode(_i64.data(), _i64.size(), _scratch);
            ++_delta_pages;
        } else {
            w.put_bytes(bytes_view(reinterpret_cast<const uint8_t*>(_i64.data()), _i64.size() * 8));
            ++_plain_pages;
        }
    } else {
        if (_use_delta) {
            enc = encoding::delta_binary_packed;
            delta_binary_encode(_i32.data(), _i32.size(), _scratch);
            ++_delta_pages;
        } else {
            w.put_bytes(bytes_view(reinterpret_cast<const uint8_t*>(_i32.data()), _i32.size() * 4));
            ++_plain_pages;
        }
    }
    add_encoding(_encodings, enc);

    // Page statistics, folded into the chunk's; the page index gets the same bounds.
    statistics st;
    st.null_count = _page_nulls;
    bool have_minmax = false;
    page_index_entry pie;
    pie.first_row = _chunk_rows - _page_rows;
    pie.null_count = _page_nulls;
    if (_kind == value_kind::f32 || _kind == value_kind::f64) {
        st.nan_count = _page_nans;
        pie.nan_count = _page_nans;
        _chunk_nans += _page_nans;
        if (_page_fvalues > 0) {
            have_minmax = true;
            _chunk_fmin = std::min(_chunk_fmin, _page_fmin);
            _chunk_fmax = std::max(_chunk_fmax, _page_fmax);
            st.min_value = float_bytes(_kind == value_kind::f32, _page_fmin, true);
            st.max_value = float_bytes(_kind == value_kind::f32, _page_fmax, false);
            st.is_min_value_exact = st.is_max_value_exact = true;
            if (_opts.page_index) {
                pie.null_page = false;
                pie.min_value = *st.min_value;
                pie.max_value = *st.max_value;
            }
        } else if (_page_nans > 0) {
            pie.null_page = false;
            _chunk_nan_only_page = true;
        }
    } else if (_kind == value_kind::fixed) {
        if (_page_has_bminmax) {
            size_t len = static_cast<size_t>(_desc.type_length);
            _page_bmin.assign(reinterpret_cast<const char*>(_plain.data()) + _pmin_off, len);
            _page_bmax.assign(reinterpret_cast<const char*>(_plain.data()) + _pmax_off, len);
            have_minmax = true;
            if (!_chunk_has_minmax || fixed_less(_page_bmin, _chunk_bmin)) _chunk_bmin = _page_bmin;
            if (!_chunk_has_minmax || fixed_less(_chunk_bmax, _page_bmax)) _chunk_bmax = _page_bmax;
            st.min_value = _page_bmin;
            st.max_value = _page_bmax;
            st.is_min_value_exact = st.is_max_value_exact = true;
            if (_opts.page_index) {
                pie.null_page = false;
                pie.min_value = _page_bmin;
                pie.max_value = _page_bmax;
            }
        }
    } else if (_is_bytes) {
        if (_page_has_bminmax) {
            if (!_dict_page_encoded) {
                _page_bmin.assign(reinterpret_cast<const char*>(_plain.data()) + _pmin_off,
                                  _pmin_len);
                _page_bmax.assign(reinterpret_cast<const char*>(_plain.data()) + _pmax_off,
                                  _pmax_len);
            }
            have_minmax = true;
            if (!_chunk_has_minmax || less(_page_bmin, _chunk_bmin)) _chunk_bmin = _page_bmin;
            if (!_chunk_has_minmax || less(_chunk_bmax, _page_bmax)) _chunk_bmax = _page_bmax;
            if (_opts.page_statistics || _opts.page_index) {
                bool utf8 = _desc.logical == logical_type::string, ex_min, ex_max;
                auto mn = truncate_min(_page_bmin, _opts.stats_truncate_length, utf8, ex_min);
                auto mx = truncate_max(_page_bmax, _opts.stats_truncate_length, utf8, ex_max);
                if (_opts.page_index) {
                    pie.null_page = false;
                    pie.min_value = mn;
                    // No shorter upper bound exists (all 0xFF): the index keeps the whole max.
                    pie.max_value = mx ? *mx : _page_bmax;
                }
                if (_opts.page_statistics) {
                    st.min_value = std::move(mn);
                    st.max_value = std::move(mx);
                    st.is_min_value_exact = ex_min;
                    if (st.max_value) st.is_max_value_exact = ex_max;
                }
            }
        }
    } else if (_page_imin <= _page_imax) {
        have_minmax = true;
        _chunk_imin = std::min(_chunk_imin, _page_imin);
        _chunk_imax = std::max(_chunk_imax, _page_imax);
        st.min_value = int_bytes(_desc.type, _page_imin);
        st.max_value = int_bytes(_desc.type, _page_imax);
        st.is_min_value_exact = true;
        st.is_max_value_exact = true;
        if (_opts.page_index) {
            pie.null_page = false;
            pie.min_value = *st.min_value;
            pie.max_value = *st.max_value;
        }
    }
    _chunk_has_minmax = _chunk_has_minmax || have_minmax;

    // The page's raw bytes: levels and values contiguous. PLAIN byte arrays stay where they
    // are, the levels (in _scratch) copied into the gap in front of them.
    bytes_view raw(_scratch);
    if ((_is_bytes && !_dict_page_encoded) || _kind == value_kind::fixed) {
        if (_scratch.size() <= detail::page_buffer::gap && _plain.size() > 0) {
            uint8_t* start = _plain.front() + detail::page_buffer::gap - _scratch.size();
            if (!_scratch.empty()) std::memcpy(start, _scratch.data(), _scratch.size());
            raw = bytes_view(start, _scratch.size() + _plain.size());
        } else {
            _scratch.insert(_scratch.end(), _plain.data(), _plain.data() + _plain.size());
            raw = bytes_view(_scratch);
        }
    }
    if (raw.size() > static_cast<size_t>(INT32_MAX))
        return fail(errc::invalid_argument,
                    "column {}: a page of {} bytes exceeds Parquet's 2 GiB limit",
                    _desc.dotted_path(), raw.size());
    // The body is compressed (or copied) straight into the page's slot behind room for the
    // header, which is encoded once the compressed size is known and put just in front.
    if (_pages_used == 0) _arena.reset(); // the previous chunk's pages are written
    size_t room = 256 + 2 * _opts.stats_truncate_length;
    size_t bound = _comp.max_compressed_size(raw.size());
    uint8_t* slot = _arena.reserve(room + bound);
    size_t body_size = FLOE_TRY(_comp.compress_to(raw, slot + room, bound));
    bytes_view body(slot + room, body_size);
    page_header ph;
    ph.type = page_type::data_page;
    ph.uncompressed_page_size = static_cast<int32_t>(raw.size());
    // Encrypted: the size of the page module that follows the header (Encryption.md 5.1).
    ph.compressed_page_size = static_cast<int32_t>(body.size() + _page_overhead);
    // The CRC covers the page as written; an encrypted page has GCM's tag (or is CTR), and its
    // module does not exist yet: no CRC there.
    if (_opts.page_crc && _page_overhead == 0)
        ph.crc = static_cast<uint32_t>(::crc32(0L, body.data(), static_cast<uInt>(body.size())));
    data_page_header dh;
    dh.num_values = static_cast<int32_t>(_page_values);
    dh.enc = enc;
    if (_opts.page_statistics) dh.stats = std::move(st);
    ph.data = std::move(dh);
    _header.clear();
    encode(ph, _header);
    if (_header.size() > room) {
        // Longer statistics than the room allows (not expected with the truncation above, but
        // the layout must not depend on it): the body moves behind the header.
        uint8_t* bigger = _arena.reserve(_header.size() + bound);
        std::memmove(bigger + _header.size(), body.data(), body_size);
        slot = bigger;
        room = _header.size();
    }
    uint8_t* page = slot + room - _header.size();
    std::memcpy(page, _header.data(), _header.size());
    size_t page_size = _header.size() + body_size;
    _arena.commit(static_cast<size_t>(page - slot) + page_size);
    if (_pages_used == _pages.size()) _pages.emplace_back();
    _pages[_pages_used++] = bytes_view(page, page_size);
    _header_sizes.push_back(static_cast<uint32_t>(_header.size()));
    size_t file_size = page_size + _header_overhead + _page_overhead; // as written
    if (_opts.page_index) {
        pie.offset = static_cast<int64_t>(_pages_bytes); // the dictionary page is added later
        pie.size = static_cast<int32_t>(file_size);
        _page_index.push_back(std::move(pie));
    }
    _pages_bytes += file_size;
    _chunk_uncompressed += static_cast<int64_t>(_header.size() + raw.size());
    _chunk_values += _page_values;
    _chunk_nulls += _page_nulls;

    // Reset the page.
    _def.clear();
    _rep.clear();
    _i32.clear();
    _i64.clear();
    _plain.clear();
    _indices.clear();
    _page_values = _page_nulls = _page_rows = _page_plain_values = 0;
    _page_imin = INT64_MAX;
    _page_imax = INT64_MIN;
    _bools.clear();
    _page_fmin = HUGE_VAL;
    _page_fmax = -HUGE_VAL;
    _page_nans = _page_fvalues = 0;
    _page_has_bminmax = false;
    _page_bytes = 0;
    ++_page_no;
    _last_dict_idx = UINT32_MAX; // the next page must see its first value in the stats

    // Keep the dictionary only while it pays: smaller than the values it replaces.
    if (_dict_mode) {
        uint64_t dict_est =
            _dict->bytes()
            + _dict_indices_total * static_cast<uint64_t>(bit_width_of(_dict->size())) / 8;
        if (_dict_overflow || (_dict_indices_total >= 1000 && dict_est > _dict_plain_equiv))
            fallback_to_plain();
    }
    return {};
}

result<column_writer::chunk> column_writer::finish_chunk() {
    FLOE_TRY(flush_page());
    if (_deferred_error) {
        auto e = std::move(*_deferred_error);
        _deferred_error.reset();
        return fail(std::move(e));
    }
    chunk c;
    auto& m = c.meta;
    m.type = _desc.type;
    m.path_in_schema = _desc.path;
    m.codec = _comp.codec();
    m.num_values = _chunk_values;

    int64_t dict_size = 0;
    if (_dict && _dict_pages_used > 0) {
        // The dictionary page: PLAIN-encoded entries, compressed like the data pages.
        bytes_view body(_dict->data());
        if (_comp.codec() != compression_codec::uncompressed) {
            size_t n = FLOE_TRY(_comp.compress(body, _compressed));
            body = bytes_view(_compressed.data(), n);
        }
        page_header ph;
        ph.type = page_type::dictionary_page;
        ph.uncompressed_page_size = static_cast<int32_t>(_dict->bytes());
        ph.compressed_page_size = static_cast<int32_t>(body.size() + _page_overhead);
        if (_opts.page_crc && _page_overhead == 0)
            ph.crc =
                static_cast<uint32_t>(::crc32(0L, body.data(), static_cast<uInt>(body.size())));
        dictionary_page_header dh;
        dh.num_values = static_cast<int32_t>(_dict->size());
        dh.enc = encoding::plain;
        ph.dictionary = dh;
        encode(ph, c.dictionary_page);
        c.dictionary_header_size = c.dictionary_page.size();
        _chunk_uncompressed += static_cast<int64_t>(c.dictionary_page.size() + _dict->bytes());
        c.dictionary_page.insert(c.dictionary_page.end(), body.begin(), body.end());
        dict_size = static_cast<int64_t>(c.dictionary_page.size() + _header_overhead + _page_overhead);
        add_encoding(_encodings, encoding::plain);
        m.encoding_stats.push_back({page_type::dictionary_page, encoding::plain, 1});
        m.encoding_stats.push_back(
            {page_type::data_page, encoding::rle_dictionary, _dict_pages_used});
    }
    if (_plain_pages > 0)
        m.encoding_stats.push_back({page_type::data_page, encoding::plain, _plain_pages});
    if (_delta_pages > 0)
        m.encoding_stats.push_back(
            {page_type::data_page, encoding::delta_binary_packed, _delta_pages});
    if (_desc.max_def > 0 || _desc.max_rep > 0) add_encoding(_encodings, encoding::rle);
    m.encodings = _encodings;
    m.total_uncompressed_size = _chunk_uncompressed;
    m.total_compressed_size = dict_size + static_cast<int64_t>(_pages_bytes);
    // offsets are filled in by the file writer (relative here)
    if (dict_size > 0) m.dictionary_page_offset = 0;
    m.data_page_offset = dict_size;

    statistics st;
    st.null_count = _chunk_nulls;
    if (_kind == value_kind::f32 || _kind == value_kind::f64) st.nan_count = _chunk_nans;
    if (_chunk_has_minmax) {
        if (_kind == value_kind::f32 || _kind == value_kind::f64) {
            st.min_value = float_bytes(_kind == value_kind::f32, _chunk_fmin, true);
            st.max_value = float_bytes(_kind == value_kind::f32, _chunk_fmax, false);
            st.is_min_value_exact = st.is_max_value_exact = true;
        } else if (_kind == value_kind::fixed) {
            st.min_value = _chunk_bmin;
            st.max_value = _chunk_bmax;
            st.is_min_value_exact = st.is_max_value_exact = true;
            c.min_full = _chunk_bmin;
            c.max_full = _chunk_bmax;
        } else if (_is_bytes) {
            bool utf8 = _desc.logical == logical_type::string, ex_min, ex_max;
            st.min_value = truncate_min(_chunk_bmin, _opts.stats_truncate_length, utf8, ex_min);
            st.max_value = truncate_max(_chunk_bmax, _opts.stats_truncate_length, utf8, ex_max);
            st.is_min_value_exact = ex_min;
            if (st.max_value) st.is_max_value_exact = ex_max;
            c.min_full = _chunk_bmin;
            c.max_full = _chunk_bmax;
        } else {
            st.min_value = int_bytes(_desc.type, _chunk_imin);
            st.max_value = int_bytes(_desc.type, _chunk_imax);
            st.is_min_value_exact = st.is_max_value_exact = true;
        }
    }
    m.stats = std::move(st);

    if (_bloom) {
        // Sized for the hashes seen (an upper bound on distinct values), then folded while the
        // estimated false-positive rate stays under the target.
        size_t bytes = bloom_filter::optimal_bytes(_bloom_hashes.size(), _opts.bloom_filter_fpp);
        bloom_filter f(bytes);
        f.insert(_bloom_hashes);
        f.fold_to_fpp(_opts.bloom_filter_fpp);
        byte_buffer b;
        bloom_filter_header bh;
        bh.num_bytes = static_cast<int32_t>(f.num_bytes());
        encode(bh, b);
        c.bloom_header_size = b.size();
        b.insert(b.end(), f.bitset().begin(), f.bitset().end());
        c.bloom = std::move(b);
    }

    c.data_pages.assign(_pages.begin(), _pages.begin() + static_cast<ptrdiff_t>(_pages_used));
    c.data_header_sizes = std::move(_header_sizes);
    _header_sizes.clear();
    _pages_used = 0;
    _pages_bytes = 0;
    for (auto& p : _page_index)
        p.offset += dict_size;
    c.pages = std::move(_page_index);
    _page_index.clear();
    c.column_index = !_chunk_nan_only_page;

    // Reset for the next chunk.
    _chunk_rows = _chunk_values = _chunk_nulls = _chunk_uncompressed = 0;
    _chunk_has_minmax = false;
    _chunk_imin = INT64_MAX;
    _chunk_imax = INT64_MIN;
    _chunk_fmin = HUGE_VAL;
    _chunk_fmax = -HUGE_VAL;
    _chunk_nans = 0;
    _chunk_nan_only_page = false;
    _chunk_bmin.clear();
    _chunk_bmax.clear();
    _encodings.clear();
    _dict_pages_used = _plain_pages = _delta_pages = 0;
    _bloom_hashes.clear();
    if (_dict) {
        _dict->clear();
        _dict_mode = true;
        _dict_overflow = false;
        _dict_indices_total = _dict_plain_equiv = _dict_values_in_chunk = 0;
        _last_dict_idx = UINT32_MAX;
        std::fill(_dict_seen_page.begin(), _dict_seen_page.end(), 0);
    }
    return c;
}

// ------------------------------------------------------------------ file_writer

namespace {
constexpr uint8_t magic[4] = {'P', 'A', 'R', '1'};
constexpr uint8_t magic_encrypted[4] = {'P', 'A', 'R', 'E'};
constexpr size_t file_unique_bytes = 8;
constexpr int max_ordinal = 32767; // AAD ordinals are 2-byte shorts
} // namespace

namespace detail {
/// A file_writer's encryption state: the config, one cipher per distinct key, which cipher
/// each leaf column uses (nullptr: plaintext), the file's AAD (prefix + unique id) and a
/// buffer modules are built in. Owned by the file_writer.
struct file_encryptor {
    encryption_config cfg;
    std::string file_unique;
    std::string file_aad;
    bool ctr = false;
    std::unique_ptr<crypto::module_cipher> footer;
    std::vector<std::unique_ptr<crypto::module_cipher>> owned;
    std::vector<crypto::module_cipher*> columns;
    std::vector<const column_encryption_key*> column_keys; // nullptr: the footer key
    byte_buffer buf;

    std::string aad(module_type t, int rg = -1, int col = -1, int page = -1) const {
        return crypto::module_aad(file_aad, t, rg, col, page);
    }
    encryption_algorithm algorithm() const {
        encryption_algorithm a;
        a.cipher = cfg.algorithm;
        a.aad_file_unique = file_unique;
        if (!cfg.aad_prefix.empty()) {
            if (cfg.store_aad_prefix)
                a.aad_prefix = cfg.aad_prefix;
            else
                a.supply_aad_prefix = true;
        }
        return a;
    }
};
} // namespace detail

file_writer::file_writer(std::unique_ptr<output_sink> sink, const schema& s, writer_options opts)
    : _sink(std::move(sink)), _schema(s), _opts(std::move(opts)),
      _comp(_opts.codec, _opts.compression_level) {
    for (auto& c : _schema.columns()) {
        _columns.push_back(std::make_unique<column_writer>(c, _opts, _comp));
        column_summary cs;
        cs.path = c.dotted_path();
        cs.field_id = c.field_id;
        cs.type = c.type;
        cs.repeated = c.max_rep > 0;
        _summary.push_back(std::move(cs));
    }
    _meta.schema = _schema.to_elements();
    _meta.key_value_metadata = _opts.key_value_metadata;
    _meta.created_by = _opts.created_by;
    _meta.column_orders = _schema.columns().size();
}

file_writer::~file_writer() = default;

result<std::unique_ptr<file_writer>> file_writer::open(std::unique_ptr<output_sink> sink,
                                                       const schema& s, writer_options opts) {
    if (!sink) return fail(errc::invalid_argument, "parquet writer: no sink");
    switch (opts.codec) {
    case compression_codec::uncompressed:
    case compression_codec::zstd:
    case compression_codec::snappy:
    case compression_codec::gzip:
    case compression_codec::lz4_raw:
        break;
    default:
        return fail(errc::unsupported, "{}: codec {} not supported", sink->name(),
                    to_string(opts.codec));
    }
    for (auto& c : s.columns())
        if (c.type == physical_type::int96)
            return fail(errc::unsupported, "{}: column {}: INT96 is not written", sink->name(),
                        c.dotted_path());
    for (auto& c : s.columns())
        if (c.type == physical_type::byte_array && c.logical == logical_type::decimal)
            return fail(errc::unsupported,
                        "{}: column {}: DECIMAL on BYTE_ARRAY is not written (use decimal_node)",
                        sink->name(), c.dotted_path());
    if (opts.encryption) {
        FLOE_TRY_CTX(validate(*opts.encryption), "{}", sink->name());
        // A misspelt path would leave its column plaintext: refuse it.
        for (auto& [path, k] : opts.encryption->column_keys) {
            bool found = false;
            for (auto& c : s.columns())
                found = found || c.dotted_path() == path;
            if (!found)
                return fail(errc::invalid_argument,
                            "{}: encryption key for column {}, which the schema does not have",
                            sink->name(), path);
        }
    }
    std::unique_ptr<file_writer> w(new file_writer(std::move(sink), s, std::move(opts)));
    bool pare = false;
    if (w->_opts.encryption) {
        auto e = std::make_unique<detail::file_encryptor>();
        e->cfg = *w->_opts.encryption;
        e->file_unique = crypto::random_bytes(file_unique_bytes);
        e->file_aad = e->cfg.aad_prefix + e->file_unique;
        e->ctr = e->cfg.algorithm == cipher_algorithm::aes_gcm_ctr_v1;
        e->footer = FLOE_TRY_CTX(crypto::module_cipher::make(e->cfg.footer_key), "{}", w->name());
        for (auto& c : w->_schema.columns()) {
            if (e->cfg.column_keys.empty()) {
                e->columns.push_back(e->footer.get());
                e->column_keys.push_back(nullptr);
                continue;
            }
            auto it = e->cfg.column_keys.find(c.dotted_path());
            if (it == e->cfg.column_keys.end()) {
                e->columns.push_back(nullptr);
                e->column_keys.push_back(nullptr);
                continue;
            }
            e->owned.push_back(FLOE_TRY_CTX(crypto::module_cipher::make(it->second.key), "{}",
                                            w->name()));
            e->columns.push_back(e->owned.back().get());
            e->column_keys.push_back(&it->second);
        }
        pare = e->cfg.encrypted_footer;
        w->_enc = std::move(e);
    }
    FLOE_TRY_CTX(w->write(bytes_view(pare ? magic_encrypted : magic, 4)), "{}", w->name());
    return w;
}

result<void> file_writer::write(bytes_view b) {
    FLOE_TRY(_sink->write(b));
    _pos += b.size();
    return {};
}

uint64_t file_writer::buffered_bytes() const noexcept {
    uint64_t n = 0;
    for (auto& c : _columns)
        n += c->buffered_bytes();
    return n;
}

void file_writer::add_page_index(size_t col, int64_t chunk_start,
                                 std::vector<page_index_entry>& pages, bool with_column_index) {
    if (col == 0) {
        _column_indexes.emplace_back();
        _offset_indexes.emplace_back();
    }
    const auto& d = _columns[col]->descriptor();
    column_index ci;
    offset_index oi;
    ci.null_pages.reserve(pages.size());
    oi.page_locations.reserve(pages.size());
    for (auto& p : pages) {
        oi.page_locations.push_back({chunk_start + p.offset, p.size, p.first_row});
        ci.null_pages.push_back(p.null_page);
        ci.null_counts.push_back(p.null_count);
        ci.min_values.push_back(std::move(p.min_value));
        ci.max_values.push_back(std::move(p.max_value));
        if (p.nan_count >= 0) ci.nan_counts.push_back(p.nan_count);
    }
    if (!with_column_index) {
        // A page of only NaN has no bounds to give (PageIndex rules for TYPE_ORDER floats):
        // the chunk keeps its OffsetIndex only; an empty ColumnIndex marks "none" for close().
        _column_indexes.back().emplace_back();
        _offset_indexes.back().push_back(std::move(oi));
        return;
    }
    // Boundary order over the pages that have values: ASCENDING when mins and maxes never go
    // down (offsets, append times), DESCENDING when they never go up, else UNORDERED.
    auto cmp = [&](const std::string& a, const std::string& b) { return compare_plain(d, a, b); };
    bool asc = true, desc = true;
    const std::string *prev_min = nullptr, *prev_max = nullptr;
    for (size_t i = 0; i < pages.size(); ++i) {
        if (ci.null_pages[i]) continue;
        if (prev_min) {
            int a = cmp(*prev_min, ci.min_values[i]), b = cmp(*prev_max, ci.max_values[i]);
            if (a > 0 || b > 0) asc = false;
            if (a < 0 || b < 0) desc = false;
        }
        prev_min = &ci.min_values[i];
        prev_max = &ci.max_values[i];
    }
    ci.order = asc ? boundary_order::ascending
                   : (desc ? boundary_order::descending : boundary_order::unordered);
    _column_indexes.back().push_back(std::move(ci));
    _offset_indexes.back().push_back(std::move(oi));
}

result<void> file_writer::flush_row_group() {
    if (_rows_in_group == 0) return {};
    for (size_t i = 0; i < _columns.size(); ++i)
        if (_columns[i]->chunk_rows() != _rows_in_group)
            return fail(errc::invalid_argument, "{}: column {} has {} rows, the row group {}",
                        name(), _columns[i]->descriptor().dotted_path(), _columns[i]->chunk_rows(),
                        _rows_in_group);
    // Encode every chunk first (CPU), then write them out (I/O).
    std::vector<column_writer::chunk> chunks;
    chunks.reserve(_columns.size());
    for (auto& c : _columns)
        chunks.push_back(FLOE_TRY_CTX(c->finish_chunk(), "{}: column {}", name(),
                                      c->descriptor().dotted_path()));

    if (_enc && _meta.row_groups.size() > static_cast<size_t>(max_ordinal))
        return fail(errc::invalid_argument,
                    "{}: an encrypted file holds at most {} row groups (AAD ordinals are shorts)",
                    name(), max_ordinal + 1);
    row_group rg;
    rg.num_rows = _rows_in_group;
    rg.file_offset = static_cast<int64_t>(_pos);
    rg.ordinal = static_cast<int16_t>(_meta.row_groups.size());
    _split_offsets.push_back(static_cast<int64_t>(_pos));
    int64_t total_comp = 0, total_uncomp = 0;
    for (size_t i = 0; i < chunks.size(); ++i) {
        auto& ch = chunks[i];
        auto start = static_cast<int64_t>(_pos);
        if (_enc && _enc->columns[i]) {
            FLOE_TRY_CTX(write_encrypted_chunk(i, ch, static_cast<int>(_meta.row_groups.size())),
                         "{}: column {}", name(), _columns[i]->descriptor().dotted_path());
            // Sizes were counted with the modules' overhead when the pages were cut.
            FLOE_ASSERT(static_cast<int64_t>(_pos) - start == ch.meta.total_compressed_size,
                        "encrypted chunk size differs from its metadata");
        } else {
            FLOE_TRY_CTX(write(ch.dictionary_page), "{}", name());
            for (auto& p : ch.data_pages)
                FLOE_TRY_CTX(write(p), "{}", name());
        }
        auto& m = ch.meta;
        if (m.dictionary_page_offset) m.dictionary_page_offset = start;
        m.data_page_offset += start;
        total_comp += m.total_compressed_size;
        total_uncomp += m.total_uncompressed_size;
        column_chunk cc;
        cc.file_offset = 0;
        cc.meta_data = m;
        rg.columns.push_back(std::move(cc));
        if (_opts.page_index) add_page_index(i, start, ch.pages, ch.column_index);

        auto& s = _summary[i];
        s.compressed_size += m.total_compressed_size;
        s.uncompressed_size += m.total_uncompressed_size;
        s.num_values += m.num_values;
        s.null_count += m.stats->null_count.value_or(0);
        auto& st = *m.stats;
        if (st.min_value) {
            const auto& d = _columns[i]->descriptor();
            auto lt = [&](const std::string& a, const std::string& b) {
                return compare_plain(d, a, b) < 0;
            };
            if (!s.min_value || lt(*st.min_value, *s.min_value)) {
                s.min_value = st.min_value;
                s.min_exact = st.is_min_value_exact.value_or(true);
            }
            if (st.max_value && (!s.max_value || lt(*s.max_value, *st.max_value))) {
                s.max_value = st.max_value;
                s.max_exact = st.is_max_value_exact.value_or(true);
            }
        }
    }
    // Bloom filters after the row group's chunks.
    for (size_t i = 0; i < chunks.size(); ++i) {
        if (!chunks[i].bloom) continue;
        auto& m = *rg.columns[i].meta_data;
        m.bloom_filter_offset = static_cast<int64_t>(_pos);
        if (_enc && _enc->columns[i]) {
            // Two modules: the header, then the bitset.
            auto& e = *_enc;
            int rgo = static_cast<int>(_meta.row_groups.size()), col = static_cast<int>(i);
            bytes_view b(*chunks[i].bloom);
            size_t hs = chunks[i].bloom_header_size;
            e.buf.clear();
            FLOE_TRY_CTX(e.columns[i]->gcm_encrypt(b.first(hs), e.aad(module_type::bloom_filter_header, rgo, col), e.buf),
                         "{}", name());
            FLOE_TRY_CTX(e.columns[i]->gcm_encrypt(b.subspan(hs), e.aad(module_type::bloom_filter_bitset, rgo, col), e.buf),
                         "{}", name());
            m.bloom_filter_length = static_cast<int32_t>(e.buf.size());
            FLOE_TRY_CTX(write(e.buf), "{}", name());
            continue;
        }
        m.bloom_filter_length = static_cast<int32_t>(chunks[i].bloom->size());
        FLOE_TRY_CTX(write(*chunks[i].bloom), "{}", name());
    }
    rg.total_byte_size = total_uncomp;
    rg.total_compressed_size = total_comp;
    _meta.row_groups.push_back(std::move(rg));
    _total_rows += _rows_in_group;
    _rows_in_group = 0;
    return {};
}

result<file_summary> file_writer::close() {
    if (_closed) return fail(errc::invalid_argument, "{}: closed twice", name());
    FLOE_TRY(flush_row_group());
    _closed = true;
    _meta.num_rows = _total_rows;
    // Page indexes after the row groups and bloom filters: every ColumnIndex, then every
    // OffsetIndex (PageIndex.md), each located by its ColumnChunk.
    if (_opts.page_index) {
        byte_buffer b;
        for (size_t rg = 0; rg < _column_indexes.size(); ++rg)
            for (size_t c = 0; c < _column_indexes[rg].size(); ++c) {
                if (_column_indexes[rg][c].null_pages.empty()) continue; // none for this chunk
                b.clear();
                encode(_column_indexes[rg][c], b);
                if (_enc && _enc->columns[c]) {
                    _enc->buf.clear();
                    FLOE_TRY_CTX(_enc->columns[c]->gcm_encrypt(
                                     b, _enc->aad(module_type::column_index, int(rg), int(c)), _enc->buf),
                                 "{}", name());
                    b.swap(_enc->buf);
                }
                auto& cc = _meta.row_groups[rg].columns[c];
                cc.column_index_offset = static_cast<int64_t>(_pos);
                cc.column_index_length = static_cast<int32_t>(b.size());
                FLOE_TRY_CTX(write(b), "{}", name());
            }
        for (size_t rg = 0; rg < _offset_indexes.size(); ++rg)
            for (size_t c = 0; c < _offset_indexes[rg].size(); ++c) {
                b.clear();
                encode(_offset_indexes[rg][c], b);
                if (_enc && _enc->columns[c]) {
                    _enc->buf.clear();
                    FLOE_TRY_CTX(_enc->columns[c]->gcm_encrypt(
                                     b, _enc->aad(module_type::offset_index, int(rg), int(c)), _enc->buf),
                                 "{}", name());
                    b.swap(_enc->buf);
                }
                auto& cc = _meta.row_groups[rg].columns[c];
                cc.offset_index_offset = static_cast<int64_t>(_pos);
                cc.offset_index_length = static_cast<int32_t>(b.size());
                FLOE_TRY_CTX(write(b), "{}", name());
            }
    }
    byte_buffer footer;
    if (_enc)
        footer = FLOE_TRY(encrypted_footer());
    else
        encode(_meta, footer);
    uint32_t len = static_cast<uint32_t>(footer.size());
    byte_writer w(footer);
    w.put_le<uint32_t>(len);
    w.put_bytes(bytes_view(_enc && _enc->cfg.encrypted_footer ? magic_encrypted : magic, 4));
    FLOE_TRY_CTX(write(footer), "{}", name());
    FLOE_TRY_CTX(_sink->close(), "{}", name());
    file_summary s;
    s.name = name();
    s.row_count = _total_rows;
    s.file_size = _pos;
    s.footer_size = len;
    s.split_offsets = _split_offsets;
    s.columns = _summary;
    s.metadata = _meta;
    return s;
}

result<void> file_writer::write_encrypted_chunk(size_t col, column_writer::chunk& ch, int rg) {
    auto& e = *_enc;
    auto* c = e.columns[col];
    int ci = static_cast<int>(col);
    auto page_module = [&](bytes_view body, module_type t, int page) -> result<void> {
        if (e.ctr) return c->ctr_encrypt(body, e.buf);
        return c->gcm_encrypt(body, e.aad(t, rg, ci, page), e.buf);
    };
    if (!ch.dictionary_page.empty()) {
        bytes_view d(ch.dictionary_page);
        size_t hs = ch.dictionary_header_size;
        e.buf.clear();
        FLOE_TRY(c->gcm_encrypt(d.first(hs), e.aad(module_type::dictionary_page_header, rg, ci),
                                e.buf));
        FLOE_TRY(page_module(d.subspan(hs), module_type::dictionary_page, -1));
        FLOE_TRY(write(e.buf));
    }
    if (ch.data_pages.size() > static_cast<size_t>(max_ordinal) + 1)
        return fail(errc::invalid_argument,
                    "{} data pages in one chunk: an encrypted chunk holds at most {} (AAD "
                    "ordinals are shorts; raise page_size)",
                    ch.data_pages.size(), max_ordinal + 1);
    for (size_t p = 0; p < ch.data_pages.size(); ++p) {
        bytes_view page = ch.data_pages[p];
        size_t hs = ch.data_header_sizes[p];
        int po = static_cast<int>(p);
        e.buf.clear();
        FLOE_TRY(c->gcm_encrypt(page.first(hs), e.aad(module_type::data_page_header, rg, ci, po),
                                e.buf));
        FLOE_TRY(page_module(page.subspan(hs), module_type::data_page, po));
        FLOE_TRY(write(e.buf));
    }
    return {};
}

result<byte_buffer> file_writer::encrypted_footer() {
    auto& e = *_enc;
    const auto& cfg = e.cfg;
    // The footer as written: _meta stays whole (the summary returns it) and this copy gets the
    // crypto fields, with column metadata encrypted where the spec asks (5.3, 5.4, 5.5).
    file_metadata fm = _meta;
    for (size_t r = 0; r < fm.row_groups.size(); ++r)
        for (size_t c = 0; c < fm.row_groups[r].columns.size(); ++c) {
            if (!e.columns[c]) continue;
            auto& cc = fm.row_groups[r].columns[c];
            column_crypto_metadata cm;
            const auto* ck = e.column_keys[c];
            if (ck) {
                cm.with_footer_key = false;
                cm.path_in_schema = _schema.columns()[c].path;
                if (!ck->key_metadata.empty()) cm.key_metadata = ck->key_metadata;
            }
            cc.crypto_metadata = std::move(cm);
            if (cfg.encrypted_footer && !ck) continue; // protected by the footer's encryption
            byte_buffer plain, mod;
            encode(*cc.meta_data, plain);
            FLOE_TRY_CTX(e.columns[c]->gcm_encrypt(
                             plain, e.aad(module_type::column_metadata, int(r), int(c)), mod),
                         "{}: column metadata", name());
            cc.encrypted_column_metadata = std::string(mod.begin(), mod.end());
            if (cfg.encrypted_footer)
                cc.meta_data.reset(); // only in the encrypted module
            else
                cc.meta_data->stats.reset(); // legacy readers see no statistics
        }
    byte_buffer out;
    if (cfg.encrypted_footer) {
        file_crypto_metadata fcm;
        fcm.algorithm = e.algorithm();
        if (!cfg.footer_key_metadata.empty()) fcm.key_metadata = cfg.footer_key_metadata;
        encode(fcm, out);
        byte_buffer plain;
        encode(fm, plain);
        FLOE_TRY_CTX(e.footer->gcm_encrypt(plain, e.aad(module_type::footer), out), "{}: footer",
                     name());
    } else {
        fm.encryption = e.algorithm();
        if (!cfg.footer_key_metadata.empty()) fm.footer_signing_key_metadata = cfg.footer_key_metadata;
        encode(fm, out);
        FLOE_TRY_CTX(e.footer->gcm_sign(out, e.aad(module_type::footer), out), "{}: footer signature",
                     name());
    }
    return out;
}

// ------------------------------------------------------------------ message_writer

result<message_writer> message_writer::open(std::unique_ptr<output_sink> sink,
                                            writer_options opts) {
    auto w = FLOE_TRY(file_writer::open(std::move(sink), message_schema(), std::move(opts)));
    return message_writer(std::move(w));
}

result<void> message_writer::append(const message_row& r) {
    add_message_columns(_cols, r);
    return _w->end_row();
}

void add_message_columns(std::span<column_writer* const, message_col::count> c, const message_row& r) {
    namespace mc = message_col;
    c[mc::stream_key]->add_bytes(r.stream_key);
    c[mc::segment_id]->add_i64(r.segment_id);
    c[mc::message_id]->add_bytes(r.message_id);
    c[mc::message_ts]->add_i64(r.message_ts);
    c[mc::kafka_timestamp]->add_i64(r.kafka_timestamp);
    if (r.key)
        c[mc::key]->add_bytes(*r.key);
    else
        c[mc::key]->add_null(0);
    if (r.value)
        c[mc::value]->add_bytes(*r.value);
    else
        c[mc::value]->add_null(0);
    auto& hk = *c[mc::header_key];
    auto& hv = *c[mc::header_value];
    if (!r.headers) {
        hk.add_null(0, 0);
        hv.add_null(0, 0);
    } else if (r.headers->empty()) {
        hk.add_null(1, 0);
        hv.add_null(1, 0);
    } else {
        int16_t rep = 0;
        for (auto& h : *r.headers) {
            hk.add_bytes(h.key, rep);
            if (h.value)
                hv.add_bytes(*h.value, rep);
            else
                hv.add_null(2, rep);
            rep = 1;
        }
    }
    c[mc::partition]->add_i32(r.partition);
    c[mc::offset]->add_i64(r.offset);
}

} // namespace floe::parquet
