#include "format/parquet/reader.h"

#include "format/parquet/bloom_filter.h"
#include "format/parquet/encoding.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace floe::parquet {

namespace detail {
/// A file_reader's decryption state: the file's AAD, the footer key's cipher, one cipher per
/// key_metadata the retriever answered (asked once each), which cipher each chunk uses or why
/// it cannot be read, and buffers for decrypted modules. Owned by the file_reader.
struct file_decryptor {
    encryption_algorithm algorithm;
    bool ctr = false;
    std::string file_aad; // prefix + file unique id
    std::unique_ptr<crypto::module_cipher> footer;
    std::optional<error> footer_error; // why the footer key is not available
    std::map<std::string, std::unique_ptr<crypto::module_cipher>, std::less<>> keys;
    std::map<std::string, error, std::less<>> key_errors;
    std::vector<crypto::module_cipher*> chunk; // [rg * columns + col]; nullptr: plaintext
    std::vector<std::optional<std::string>> unreadable; // why a chunk cannot be read
    byte_buffer header, body;

    std::string aad(module_type t, int rg = -1, int col = -1, int page = -1) const {
        return crypto::module_aad(file_aad, t, rg, col, page);
    }
};
} // namespace detail

namespace {
constexpr uint8_t magic[4] = {'P', 'A', 'R', '1'};
constexpr uint8_t magic_encrypted[4] = {'P', 'A', 'R', 'E'};
constexpr size_t max_ordinal = 32767;

std::string printable(std::string_view s) {
    std::string o;
    for (char c : s) {
        if (c >= 0x20 && c < 0x7f)
            o.push_back(c);
        else
            o += fmt::format("\\x{:02x}", static_cast<uint8_t>(c));
        if (o.size() > 80) {
            o += "...";
            break;
        }
    }
    return o;
}

bool bytes_less(std::string_view a, std::string_view b) noexcept {
    size_t n = std::min(a.size(), b.size());
    int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
    return c < 0 || (c == 0 && a.size() < b.size());
}
} // namespace

result<std::unique_ptr<file_reader>> file_reader::open(std::unique_ptr<input_source> src,
                                                       reader_options opts) {
    if (!src) return fail(errc::invalid_argument, "parquet reader: no source");
    std::unique_ptr<file_reader> r(new file_reader(std::move(src), opts));
    FLOE_TRY_CTX(r->load_footer(), "{}", r->name());
    return r;
}

result<std::unique_ptr<file_reader>> file_reader::open_file(const std::string& path,
                                                            reader_options opts) {
    auto src = FLOE_TRY(open_file_source(path));
    return open(std::move(src), opts);
}

file_reader::file_reader(std::unique_ptr<input_source> src, reader_options opts)
    : _src(std::move(src)), _opts(std::move(opts)) {}

file_reader::~file_reader() = default;

result<void> file_reader::check_readable(size_t rg, size_t col) const {
    if (rg >= _meta.row_groups.size() || col >= _schema.columns().size())
        return fail(errc::out_of_range, "{}: no row group {} column {}", name(), rg, col);
    if (!_dec) return {};
    const auto& why = _dec->unreadable[rg * _schema.columns().size() + col];
    if (why)
        return fail(errc::invalid_argument, "{}: row group {} column {}: {}", name(), rg,
                    _schema.columns()[col].dotted_path(), *why);
    return {};
}

crypto::module_cipher* file_reader::chunk_cipher(size_t rg, size_t col) const {
    if (!_dec) return nullptr;
    return _dec->chunk[rg * _schema.columns().size() + col];
}

result<void> file_reader::setup_decryptor(const encryption_algorithm& a, bool encrypted_footer) {
    _dec = std::make_unique<detail::file_decryptor>();
    _dec->algorithm = a;
    _dec->ctr = a.cipher == cipher_algorithm::aes_gcm_ctr_v1;
    _enc_info.encrypted = true;
    _enc_info.encrypted_footer = encrypted_footer;
    _enc_info.algorithm = a.cipher;
    std::string prefix;
    const auto& cfg = _opts.decryption;
    if (a.aad_prefix) {
        if (cfg && cfg->aad_prefix && *cfg->aad_prefix != *a.aad_prefix)
            return fail(errc::invalid_argument,
                        "the AAD prefix given ('{}') differs from the one the file stores ('{}')",
                        printable(*cfg->aad_prefix), printable(*a.aad_prefix));
        prefix = *a.aad_prefix;
    } else if (cfg && cfg->aad_prefix && (a.supply_aad_prefix || !cfg->aad_prefix_if_used)) {
        prefix = *cfg->aad_prefix;
    } else if (a.supply_aad_prefix) {
        return fail(errc::invalid_argument,
                    "the file was written with an AAD prefix it does not store: the reader must "
                    "supply it (decryption_config::aad_prefix)");
    }
    _dec->file_aad = prefix + a.aad_file_unique.value_or("");
    return {};
}

namespace {
/// The key for `meta` from the retriever, as a cipher; errors name the key metadata.
result<std::unique_ptr<crypto::module_cipher>> key_cipher(const decryption_config& cfg,
                                                          std::string_view meta) {
    if (!cfg.retriever) return fail(errc::invalid_argument, "no key retriever configured");
    auto key = cfg.retriever(meta);
    if (!key)
        return fail(key.error().code(), "no key for key metadata '{}': {}", printable(meta),
                    key.error().message());
    auto c = crypto::module_cipher::make(*key);
    if (!c)
        return fail(errc::invalid_argument, "key for key metadata '{}': {}", printable(meta),
                    c.error().message());
    return c;
}
} // namespace

result<void> file_reader::load_encrypted_footer(bytes_view region) {
    if (!_opts.decryption)
        return fail(errc::invalid_argument,
                    "the file is encrypted (encrypted footer) and no decryption keys were given");
    size_t used = 0;
    auto fcm = FLOE_TRY_CTX(decode_file_crypto_metadata(region, used), "file crypto metadata");
    FLOE_TRY(setup_decryptor(fcm.algorithm, true));
    std::string_view meta = fcm.key_metadata ? std::string_view(*fcm.key_metadata) : "";
    _dec->footer = FLOE_TRY_CTX(key_cipher(*_opts.decryption, meta), "footer key");
    bytes_view module = region.subspan(used);
    size_t n = FLOE_TRY(crypto::module_size(module, crypto::nonce_bytes + crypto::tag_bytes,
                                            "encrypted footer"));
    if (n != module.size())
        return fail(errc::corrupt, "encrypted footer module of {} bytes where {} remain", n,
                    module.size());
    byte_buffer plain;
    FLOE_TRY_CTX(_dec->footer->gcm_decrypt(module, _dec->aad(module_type::footer), plain),
                 "footer cannot be decrypted");
    _meta = FLOE_TRY_CTX(decode_file_metadata(plain), "decrypted footer");
    return {};
}

result<void> file_reader::setup_chunk_crypto() {
    size_t ncols = _schema.columns().size();
    bool any = false;
    for (auto& rg : _meta.row_groups)
        for (auto& cc : rg.columns)
            any = any || cc.crypto_metadata || cc.encrypted_column_metadata;
    if (!any && !_dec) return {};
    if (!_dec)
        return fail(errc::corrupt,
                    "column chunks carry crypto metadata but the footer names no encryption "
                    "algorithm");
    _dec->chunk.assign(_meta.row_groups.size() * ncols, nullptr);
    _dec->unreadable.assign(_meta.row_groups.size() * ncols, std::nullopt);
    if (_meta.row_groups.size() > max_ordinal + 1)
        return fail(errc::corrupt, "{} row groups in an encrypted file (at most {})",
                    _meta.row_groups.size(), max_ordinal + 1);
    for (size_t r = 0; r < _meta.row_groups.size(); ++r) {
        auto& rg = _meta.row_groups[r];
        if (rg.ordinal && static_cast<size_t>(*rg.ordinal) != r)
            return fail(errc::corrupt, "row group {} has ordinal {}", r, *rg.ordinal);
        for (size_t c = 0; c < rg.columns.size() && c < ncols; ++c) {
            auto& cc = rg.columns[c];
            size_t slot = r * ncols + c;
            if (!cc.crypto_metadata) {
                if (cc.encrypted_column_metadata)
                    return fail(errc::corrupt,
                                "row group {} column {}: encrypted metadata without crypto metadata",
                                r, _schema.columns()[c].dotted_path());
                continue; // a plaintext column
            }
            crypto::module_cipher* key = nullptr;
            std::optional<std::string> why;
            if (cc.crypto_metadata->with_footer_key) {
                key = _dec->footer.get();
                if (!key)
                    why = fmt::format("encrypted with the footer key, which is not available ({})",
                                      _dec->footer_error ? _dec->footer_error->message()
                                                         : "no decryption keys given");
            } else {
                std::string meta = cc.crypto_metadata->key_metadata.value_or("");
                if (auto it = _dec->keys.find(meta); it != _dec->keys.end()) {
                    key = it->second.get();
                } else if (auto e = _dec->key_errors.find(meta); e != _dec->key_errors.end()) {
                    why = fmt::format("encrypted with a column key that is not available ({})",
                                      e->second.message());
                } else if (!_opts.decryption) {
                    why = std::string("encrypted with a column key and no decryption keys were given");
                } else {
                    auto k = key_cipher(*_opts.decryption, meta);
                    if (k) {
                        key = k->get();
                        _dec->keys.emplace(meta, std::move(*k));
                    } else {
                        why = fmt::format("encrypted with a column key that is not available ({})",
                                          k.error().message());
                        _dec->key_errors.emplace(meta, k.error());
                    }
                }
            }
            _dec->chunk[slot] = key;
            _dec->unreadable[slot] = why;
            bool own_meta = !_enc_info.encrypted_footer || !cc.crypto_metadata->with_footer_key;
            if (!own_meta) continue;
            if (!cc.encrypted_column_metadata)
                return fail(errc::corrupt, "row group {} column {}: no encrypted column metadata",
                            r, _schema.columns()[c].dotted_path());
            if (!key) {
                // Without the key the plaintext footer's copy (statistics stripped) stays for
                // the chunk bounds; an encrypted footer has none.
                continue;
            }
            auto& em = *cc.encrypted_column_metadata;
            bytes_view module(reinterpret_cast<const uint8_t*>(em.data()), em.size());
            byte_buffer plain;
            FLOE_TRY_CTX(key->gcm_decrypt(module,
                                          _dec->aad(module_type::column_metadata, int(r), int(c)),
                                          plain),
                         "row group {} column {}: column metadata cannot be decrypted", r,
                         _schema.columns()[c].dotted_path());
            cc.meta_data = FLOE_TRY_CTX(decode_column_metadata(plain),
                                        "row group {} column {}: decrypted column metadata", r,
                                        _schema.columns()[c].dotted_path());
        }
    }
    return {};
}

result<void> file_reader::load_footer() {
    _size = FLOE_TRY(_src->size());
    if (_size < 12) return fail(errc::corrupt, "not a Parquet file: {} bytes is too small", _size);
    FLOE_TRY(_src->read_at(0, 4, _buf));
    bool pare = std::memcmp(_buf.data(), magic_encrypted, 4) == 0;
    if (!pare && std::memcmp(_buf.data(), magic, 4) != 0)
        return fail(errc::corrupt, "not a Parquet file: bad magic at start");
    FLOE_TRY(_src->read_at(_size - 8, 8, _buf));
    if (std::memcmp(_buf.data() + 4, pare ? magic_encrypted : magic, 4) != 0)
        return fail(errc::corrupt, "not a Parquet file or truncated: bad magic at end");
    uint32_t len;
    std::memcpy(&len, _buf.data(), 4);
    if (len == 0 || len > _size - 12)
        return fail(errc::corrupt, "footer length {} does not fit in a file of {} bytes", len,
                    _size);
    if (len > _opts.max_footer_size)
        return fail(errc::corrupt, "footer length {} exceeds the limit of {}", len,
                    _opts.max_footer_size);
    FLOE_TRY(_src->read_at(_size - 8 - len, len, _buf));
    if (pare) {
        FLOE_TRY(load_encrypted_footer(_buf));
    } else {
        size_t used = 0;
        _meta = FLOE_TRY_CTX(decode_file_metadata(_buf, used), "footer");
        if (_meta.encryption) {
            // A plaintext footer followed by its signature: nonce and GCM tag (5.5).
            if (_buf.size() - used != crypto::nonce_bytes + crypto::tag_bytes)
                return fail(errc::corrupt,
                            "plaintext footer of an encrypted file: {} bytes follow it where the "
                            "28-byte signature belongs",
                            _buf.size() - used);
            FLOE_TRY(setup_decryptor(*_meta.encryption, false));
            if (_opts.decryption) {
                std::string_view meta = _meta.footer_signing_key_metadata
                                            ? std::string_view(*_meta.footer_signing_key_metadata)
                                            : "";
                auto k = key_cipher(*_opts.decryption, meta);
                if (k) {
                    _dec->footer = std::move(*k);
                    bytes_view all(_buf);
                    bool ok = FLOE_TRY(_dec->footer->gcm_verify_signature(
                        all.first(used), _dec->aad(module_type::footer), all.subspan(used)));
                    if (!ok)
                        return fail(errc::corrupt,
                                    "plaintext footer signature does not verify (wrong footer key, "
                                    "wrong AAD prefix, or the footer was changed)");
                    _enc_info.footer_signature_verified = true;
                } else if (_opts.decryption->require_footer_signature) {
                    return fail(k.error().code(),
                                "plaintext footer signature cannot be checked: footer key: {}",
                                k.error().message());
                } else {
                    _dec->footer_error = k.error();
                }
            }
        }
    }
    _schema = FLOE_TRY_CTX(schema::from_elements(_meta.schema), "footer schema");
    size_t ncols = _schema.columns().size();
    for (size_t i = 0; i < _meta.row_groups.size(); ++i)
        if (_meta.row_groups[i].columns.size() != ncols)
            return fail(errc::corrupt, "row group {} has {} column chunks, the schema {} columns",
                        i, _meta.row_groups[i].columns.size(), ncols);
    FLOE_TRY(setup_chunk_crypto());
    int64_t rows = 0;
    for (size_t i = 0; i < _meta.row_groups.size(); ++i) {
        auto& rg = _meta.row_groups[i];
        if (rg.num_rows < 0) return fail(errc::corrupt, "row group {} has {} rows", i, rg.num_rows);
        rows += rg.num_rows;
        for (size_t c = 0; c < ncols; ++c) {
            auto& cc = rg.columns[c];
            // An encrypted chunk without its key has no metadata to check (encrypted footer).
            if (!cc.meta_data && _dec && _dec->unreadable[i * ncols + c]) continue;
            if (!cc.meta_data)
                return fail(errc::corrupt, "row group {} column {} has no metadata", i, c);
            auto& m = *cc.meta_data;
            if (m.num_values > _opts.max_chunk_values)
                return fail(errc::corrupt,
                            "row group {} column {}: {} values exceed the limit of {}", i, c,
                            m.num_values, _opts.max_chunk_values);
            if (m.type != _schema.columns()[c].type)
                return fail(errc::corrupt,
                            "row group {} column {}: type {} differs from the schema's", i, c,
                            static_cast<int>(m.type));
            int64_t start = m.dictionary_page_offset.value_or(m.data_page_offset);
            if (m.dictionary_page_offset && *m.dictionary_page_offset > m.data_page_offset)
                start = m.data_page_offset;
            if (start < 4 || m.total_compressed_size < 0 || m.num_values < 0
                || static_cast<uint64_t>(start) > _size
                || static_cast<uint64_t>(m.total_compressed_size)
                       > _size - static_cast<uint64_t>(start))
                return fail(errc::corrupt,
                            "row group {} column {}: chunk at {} of {} bytes lies outside the file",
                            i, _schema.columns()[c].dotted_path(), start, m.total_compressed_size);
        }
    }
    if (rows != _meta.num_rows)
        return fail(errc::corrupt, "row groups hold {} rows, the footer says {}", rows,
                    _meta.num_rows);
    return {};
}

result<void> file_reader::decode_page_values(const column_descriptor& d, const page_header& ph,
                                             bytes_view page,
                                             const std::vector<std::string_view>& dict,
                                             column_data& out) {
    const auto& dh = *ph.data;
    // RLE runs can claim any count in a few bytes: bound what the page may make us allocate.
    if (dh.num_values < 0 || static_cast<uint32_t>(dh.num_values) > _opts.max_page_values)
        return fail(errc::corrupt, "page with {} values", dh.num_values);
    size_t n = static_cast<size_t>(dh.num_values);
    byte_reader r(page);
    auto read_levels = [&](std::vector<uint8_t>& lv, int16_t max) -> result<void> {
        uint32_t len = FLOE_TRY(r.le<uint32_t>());
        auto b = FLOE_TRY(r.bytes(len));
        std::vector<uint32_t> tmp(n);
        rle_decoder dec(b, bit_width_of(static_cast<uint64_t>(max)));
        FLOE_TRY(dec.get(tmp.data(), n));
        for (uint32_t v : tmp) {
            if (v > static_cast<uint32_t>(max))
                return fail(errc::corrupt, "level {} above the maximum {}", v, max);
            lv.push_back(static_cast<uint8_t>(v));
        }
        return {};
    };
    size_t rep_start = out.rep.size(), def_start = out.def.size();
    if (d.max_rep > 0) FLOE_TRY(read_levels(out.rep, d.max_rep));
    if (d.max_def > 0) FLOE_TRY(read_levels(out.def, d.max_def));
    if (d.max_rep > 0 && n > 0 && out.rep[rep_start] != 0 && rep_start == 0)
        return fail(errc::corrupt, "column chunk starts inside a row");
    size_t present = n;
    if (d.max_def > 0)
        present =
            static_cast<size_t>(std::count(out.def.begin() + static_cast<ptrdiff_t>(def_start),
                                           out.def.end(), static_cast<uint8_t>(d.max_def)));
    bytes_view rest = r.rest();
    switch (dh.enc) {
    case encoding::plain: {
        if (d.type == physical_type::int32 || d.type == physical_type::int64) {
            size_t w = d.type == physical_type::int32 ? 4 : 8;
            if (rest.size() / w < present)
                return fail(errc::corrupt, "plain page holds fewer than {} values", present);
            for (size_t i = 0; i < present; ++i) {
                if (w == 4) {
                    int32_t v;
                    std::memcpy(&v, rest.data() + i * 4, 4);
                    out.i32.push_back(v);
                } else {
                    int64_t v;
                    std::memcpy(&v, rest.data() + i * 8, 8);
                    out.i64.push_back(v);
                }
            }
        } else if (d.type == physical_type::float_ || d.type == physical_type::double_) {
            size_t w = d.type == physical_type::float_ ? 4 : 8;
            if (rest.size() / w < present)
                return fail(errc::corrupt, "plain page holds fewer than {} values", present);
            for (size_t i = 0; i < present; ++i) {
                if (w == 4) {
                    float v;
                    std::memcpy(&v, rest.data() + i * 4, 4);
                    out.f32.push_back(v);
                } else {
                    double v;
                    std::memcpy(&v, rest.data() + i * 8, 8);
                    out.f64.push_back(v);
                }
            }
        } else if (d.type == physical_type::boolean) {
            if (rest.size() < present / 8 + (present % 8 != 0))
                return fail(errc::corrupt, "plain page holds fewer than {} booleans", present);
            for (size_t i = 0; i < present; ++i)
                out.bools.push_back(static_cast<uint8_t>((rest[i / 8] >> (i % 8)) & 1));
        } else if (d.type == physical_type::fixed_len_byte_array
                   || d.type == physical_type::int96) {
            // 1..2^20, checked by the schema; INT96 values are 12 bytes, kept raw.
            auto w = d.type == physical_type::int96 ? size_t{12} : static_cast<size_t>(d.type_length);
            if (w == 0 || rest.size() / w < present)
                return fail(errc::corrupt, "plain page holds fewer than {} values of {} bytes",
                            present, w);
            for (size_t i = 0; i < present; ++i)
                out.bytes.push_back(as_chars(rest.subspan(i * w, w)));
        } else if (d.type == physical_type::byte_array) {
            byte_reader vr(rest);
            for (size_t i = 0; i < present; ++i) {
                uint32_t len = FLOE_TRY(vr.le<uint32_t>());
                auto b = FLOE_TRY(vr.bytes(len));
                out.bytes.push_back(as_chars(b));
            }
        } else {
            return fail(errc::unsupported, "physical type {}", static_cast<int>(d.type));
        }
        return {};
    }
    case encoding::rle: {
        // Booleans RLE-encoded (Arrow writes them so): a 4-byte length, then runs of width 1.
        if (d.type != physical_type::boolean)
            return fail(errc::unsupported, "RLE-encoded values of physical type {}",
                        static_cast<int>(d.type));
        byte_reader vr(rest);
        uint32_t len = FLOE_TRY(vr.le<uint32_t>());
        auto b = FLOE_TRY(vr.bytes(len));
        std::vector<uint32_t> tmp(present);
        rle_decoder dec(b, 1);
        FLOE_TRY(dec.get(tmp.data(), present));
        for (uint32_t v : tmp)
            out.bools.push_back(static_cast<uint8_t>(v & 1));
        return {};
    }
    case encoding::rle_dictionary:
    case encoding::plain_dictionary: {
        if (d.type == physical_type::boolean)
            return fail(errc::unsupported, "dictionary-encoded booleans");
        if (rest.empty()) {
            if (present == 0) return {};
            return fail(errc::corrupt, "dictionary page data missing its bit width");
        }
        int width = rest[0];
        if (width > 32) return fail(errc::corrupt, "dictionary index bit width {}", width);
        std::vector<uint32_t> idx(present);
        rle_decoder dec(rest.subspan(1), width);
        FLOE_TRY(dec.get(idx.data(), present));
        for (uint32_t i : idx)
            if (i >= dict.size())
                return fail(errc::corrupt, "dictionary index {} beyond {} entries", i, dict.size());
        // Entries are the plain bytes of each value (sizes checked when the dictionary page
        // was read).
        auto put = [&](auto& vec) {
            using T = typename std::remove_reference_t<decltype(vec)>::value_type;
            for (uint32_t i : idx) {
                T v;
                std::memcpy(&v, dict[i].data(), sizeof v);
                vec.push_back(v);
            }
        };
        switch (d.type) {
        case physical_type::int32: put(out.i32); break;
        case physical_type::int64: put(out.i64); break;
        case physical_type::float_: put(out.f32); break;
        case physical_type::double_: put(out.f64); break;
        default:
            for (uint32_t i : idx)
                out.bytes.push_back(dict[i]);
        }
        return {};
    }
    case encoding::delta_length_byte_array:
    case encoding::delta_byte_array: {
        // Lengths (and for DELTA_BYTE_ARRAY prefix lengths shared with the previous value) as
        // DELTA_BINARY_PACKED, then the (suffix) bytes back to back. Values are rebuilt into
        // one buffer of their own, bounded by max_page_size.
        if (d.type != physical_type::byte_array)
            return fail(errc::unsupported, "{} on physical type {}", to_string(dh.enc),
                        static_cast<int>(d.type));
        std::vector<int32_t> prefix, lens;
        size_t pos = 0;
        if (dh.enc == encoding::delta_byte_array) {
            pos += FLOE_TRY(delta_binary_decode<int32_t>(rest, present, prefix));
            if (prefix.size() != present)
                return fail(errc::corrupt, "{} prefix lengths for {} values", prefix.size(), present);
        }
        pos += FLOE_TRY(delta_binary_decode<int32_t>(rest.subspan(pos), present, lens));
        if (lens.size() != present)
            return fail(errc::corrupt, "{} lengths for {} values", lens.size(), present);
        bytes_view data = rest.subspan(pos);
        uint64_t total = 0, prev = 0, suffixes = 0;
        for (size_t i = 0; i < present; ++i) {
            int64_t pre = prefix.empty() ? 0 : prefix[i];
            if (lens[i] < 0 || pre < 0 || static_cast<uint64_t>(pre) > prev)
                return fail(errc::corrupt, "value {}: length {} with prefix {} (previous {})", i,
                            lens[i], pre, prev);
            suffixes += static_cast<uint64_t>(lens[i]);
            prev = static_cast<uint64_t>(pre) + static_cast<uint64_t>(lens[i]);
            total += prev;
            if (total > _opts.max_page_size)
                return fail(errc::corrupt, "values of more than {} bytes", _opts.max_page_size);
        }
        if (suffixes > data.size())
            return fail(errc::corrupt, "values of {} bytes in {}", suffixes, data.size());
        byte_buffer buf(static_cast<size_t>(total));
        size_t w = 0, dp = 0, prev_off = 0;
        for (size_t i = 0; i < present; ++i) {
            size_t pre = prefix.empty() ? 0 : static_cast<size_t>(prefix[i]);
            auto len = static_cast<size_t>(lens[i]);
            if (pre) std::memcpy(buf.data() + w, buf.data() + prev_off, pre);
            if (len) std::memcpy(buf.data() + w + pre, data.data() + dp, len);
            dp += len;
            prev_off = w;
            w += pre + len;
        }
        out.storage.push_back(std::move(buf));
        const auto* base = reinterpret_cast<const char*>(out.storage.back().data());
        size_t off = 0;
        for (size_t i = 0; i < present; ++i) {
            size_t n = (prefix.empty() ? 0 : static_cast<size_t>(prefix[i]))
                       + static_cast<size_t>(lens[i]);
            out.bytes.emplace_back(base + off, n);
            off += n;
        }
        return {};
    }
    case encoding::delta_binary_packed: {
        if (d.type == physical_type::int32) {
            size_t before = out.i32.size();
            FLOE_TRY(delta_binary_decode<int32_t>(rest, present, out.i32));
            if (out.i32.size() - before != present)
                return fail(errc::corrupt, "delta page holds {} of {} values",
                            out.i32.size() - before, present);
        } else if (d.type == physical_type::int64) {
            size_t before = out.i64.size();
            FLOE_TRY(delta_binary_decode<int64_t>(rest, present, out.i64));
            if (out.i64.size() - before != present)
                return fail(errc::corrupt, "delta page holds {} of {} values",
                            out.i64.size() - before, present);
        } else {
            return fail(errc::unsupported, "DELTA_BINARY_PACKED on byte arrays");
        }
        return {};
    }
    default:
        return fail(errc::unsupported, "encoding {} not supported", to_string(dh.enc));
    }
}

int64_t file_reader::chunk_start(size_t rg, size_t col) const {
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    int64_t start = m.data_page_offset;
    if (m.dictionary_page_offset && *m.dictionary_page_offset < start)
        start = *m.dictionary_page_offset;
    return start;
}

result<bytes_view> file_reader::next_page(size_t rg, size_t col, bytes_view raw, int64_t at,
                                          size_t& pos, int& ordinal, page_header& ph) {
    const auto& d = _schema.columns()[col];
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg, d.dotted_path());
    };
    auto* key = chunk_cipher(rg, col);
    int64_t page_at = at + static_cast<int64_t>(pos);
    if (!key) {
        size_t hlen = 0;
        ph = FLOE_TRY_CTX(decode_page_header(raw.subspan(pos), hlen), "{}: page header at {}",
                          ctx(), page_at);
        pos += hlen;
        if (static_cast<size_t>(ph.compressed_page_size) > raw.size() - pos)
            return fail(errc::corrupt, "{}: page of {} bytes runs past the chunk end ({} left)",
                        ctx(), ph.compressed_page_size, raw.size() - pos);
        bytes_view body(raw.data() + pos, static_cast<size_t>(ph.compressed_page_size));
        pos += body.size();
        if (ph.type == page_type::data_page || ph.type == page_type::data_page_v2) ++ordinal;
        if (ph.crc && _opts.verify_crc
            && static_cast<uint32_t>(::crc32(0L, body.data(), static_cast<uInt>(body.size())))
                   != *ph.crc)
            return fail(errc::corrupt, "{}: page CRC mismatch at {}", ctx(), page_at);
        return body;
    }
    // Encrypted: a header module, then a page module whose whole size (length included) is the
    // header's compressed_page_size. A dictionary header is the one at dictionary_page_offset.
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    bool dict = m.dictionary_page_offset && *m.dictionary_page_offset == page_at;
    if (!dict && static_cast<size_t>(ordinal) > max_ordinal)
        return fail(errc::corrupt, "{}: more than {} data pages in an encrypted chunk", ctx(),
                    max_ordinal + 1);
    auto what = [&](module_type t) {
        return fmt::format("{}: {} at {}", ctx(), to_string(t), page_at);
    };
    module_type ht = dict ? module_type::dictionary_page_header : module_type::data_page_header;
    size_t hmod = FLOE_TRY(crypto::module_size(raw.subspan(pos),
                                               crypto::nonce_bytes + crypto::tag_bytes, what(ht)));
    FLOE_TRY_CTX(key->gcm_decrypt(raw.subspan(pos, hmod),
                                  _dec->aad(ht, int(rg), int(col), dict ? -1 : ordinal),
                                  _dec->header),
                 "{} cannot be decrypted", what(ht));
    size_t hlen = 0;
    ph = FLOE_TRY_CTX(decode_page_header(_dec->header, hlen), "{}", what(ht));
    pos += hmod;
    bool is_data = ph.type == page_type::data_page || ph.type == page_type::data_page_v2;
    if (dict != (ph.type == page_type::dictionary_page) || (!dict && !is_data))
        return fail(errc::corrupt, "{}: a page of type {} where a {} belongs", what(ht),
                    static_cast<int>(ph.type), dict ? "dictionary page" : "data page");
    module_type bt = dict ? module_type::dictionary_page : module_type::data_page;
    size_t min = _dec->ctr ? crypto::nonce_bytes : crypto::nonce_bytes + crypto::tag_bytes;
    size_t bmod = FLOE_TRY(crypto::module_size(raw.subspan(pos), min, what(bt)));
    if (ph.compressed_page_size < 0 || bmod != static_cast<size_t>(ph.compressed_page_size))
        return fail(errc::corrupt, "{}: page module of {} bytes, its header says {}", what(bt),
                    bmod, ph.compressed_page_size);
    bytes_view module = raw.subspan(pos, bmod);
    // The CRC covers the page as written: the encrypted module (parquet.thrift PageHeader.crc).
    if (ph.crc && _opts.verify_crc
        && static_cast<uint32_t>(::crc32(0L, module.data(), static_cast<uInt>(module.size())))
               != *ph.crc)
        return fail(errc::corrupt, "{}: page CRC mismatch", what(bt));
    if (_dec->ctr)
        FLOE_TRY_CTX(key->ctr_decrypt(module, _dec->body), "{}", what(bt));
    else
        FLOE_TRY_CTX(key->gcm_decrypt(module, _dec->aad(bt, int(rg), int(col), dict ? -1 : ordinal),
                                      _dec->body),
                     "{} cannot be decrypted", what(bt));
    pos += bmod;
    if (!dict) ++ordinal;
    return bytes_view(_dec->body);
}

result<void> file_reader::v2_as_v1(const column_descriptor& d, compression_codec codec,
                                   page_header& ph, bytes_view body, byte_buffer& page) {
    // A v2 page keeps its levels uncompressed in front (no length prefixes) and compresses only
    // the values: rebuilt here in v1 layout so one decoder serves both.
    if (!ph.data_v2) return fail(errc::corrupt, "no data page v2 header");
    const auto& h = *ph.data_v2;
    if (h.repetition_levels_byte_length < 0 || h.definition_levels_byte_length < 0
        || static_cast<size_t>(h.repetition_levels_byte_length)
                   + static_cast<size_t>(h.definition_levels_byte_length)
               > body.size()
        || h.repetition_levels_byte_length + h.definition_levels_byte_length
               > ph.uncompressed_page_size)
        return fail(errc::corrupt, "level lengths {} + {} exceed the page",
                    h.repetition_levels_byte_length, h.definition_levels_byte_length);
    auto rl = static_cast<size_t>(h.repetition_levels_byte_length);
    auto dl = static_cast<size_t>(h.definition_levels_byte_length);
    byte_buffer values;
    bytes_view vin = body.subspan(rl + dl);
    size_t vsize = static_cast<size_t>(ph.uncompressed_page_size) - rl - dl;
    if (h.is_compressed)
        FLOE_TRY(_decomp.decompress(codec, vin, vsize, values));
    else
        values.assign(vin.begin(), vin.end());
    page.clear();
    byte_writer w(page);
    if (d.max_rep > 0) {
        w.put_le<uint32_t>(static_cast<uint32_t>(rl));
        w.put_bytes(body.subspan(0, rl));
    }
    if (d.max_def > 0) {
        w.put_le<uint32_t>(static_cast<uint32_t>(dl));
        w.put_bytes(body.subspan(rl, dl));
    }
    w.put_bytes(values);
    data_page_header dh;
    dh.num_values = h.num_values;
    dh.enc = h.enc;
    ph.data = dh;
    return {};
}

result<int64_t> file_reader::decode_pages(size_t rg, size_t col, bytes_view raw, int64_t at,
                                          int64_t max_values, std::vector<std::string_view>& dict,
                                          column_data& out, size_t& pages, int first_page) {
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg, d.dotted_path());
    };
    size_t pos = 0;
    int64_t values = 0;
    int ordinal = first_page;
    while (pos < raw.size() && values < max_values) {
        page_header ph;
        size_t page_pos = pos;
        bytes_view body = FLOE_TRY(next_page(rg, col, raw, at, pos, ordinal, ph));
        if (static_cast<uint32_t>(ph.uncompressed_page_size) > _opts.max_page_size)
            return fail(errc::corrupt, "{}: page of {} uncompressed bytes exceeds the limit", ctx(),
                        ph.uncompressed_page_size);
        if (ph.type != page_type::data_page && ph.type != page_type::dictionary_page
            && ph.type != page_type::data_page_v2)
            continue; // index pages: skip
        byte_buffer page;
        if (ph.type == page_type::data_page_v2) {
            FLOE_TRY_CTX(v2_as_v1(d, m.codec, ph, body, page), "{}: data page v2", ctx());
        } else {
            FLOE_TRY_CTX(_decomp.decompress(m.codec, body,
                                            static_cast<size_t>(ph.uncompressed_page_size), page),
                         "{}", ctx());
        }
        if (ph.type == page_type::dictionary_page) {
            if (!ph.dictionary)
                return fail(errc::corrupt, "{}: dictionary page without its header", ctx());
            if (!dict.empty()) return fail(errc::corrupt, "{}: second dictionary page", ctx());
            size_t width = 0; // PLAIN width of fixed-size values; 0: length-prefixed
            switch (d.type) {
            case physical_type::int32:
            case physical_type::float_: width = 4; break;
            case physical_type::int64:
            case physical_type::double_: width = 8; break;
            case physical_type::int96: width = 12; break;
            case physical_type::fixed_len_byte_array: width = static_cast<size_t>(d.type_length); break;
            case physical_type::byte_array: break;
            default:
                return fail(errc::unsupported, "{}: dictionary pages of physical type {}", ctx(),
                            static_cast<int>(d.type));
            }
            if (ph.dictionary->num_values < 0
                || static_cast<size_t>(ph.dictionary->num_values) > page.size() / (width ? width : 4))
                return fail(errc::corrupt, "{}: dictionary of {} entries in {} bytes", ctx(),
                            ph.dictionary->num_values, page.size());
            out.storage.push_back(std::move(page));
            byte_reader vr(out.storage.back());
            for (int32_t i = 0; i < ph.dictionary->num_values; ++i) {
                uint32_t len = static_cast<uint32_t>(width);
                if (!width) len = FLOE_TRY_CTX(vr.le<uint32_t>(), "{}: dictionary", ctx());
                auto b = FLOE_TRY_CTX(vr.bytes(len), "{}: dictionary", ctx());
                dict.push_back(as_chars(b));
            }
            continue;
        }
        if (!ph.data) return fail(errc::corrupt, "{}: data page without its header", ctx());
        if (ph.data->num_values > max_values - values)
            return fail(errc::corrupt, "{}: pages hold more than the chunk's {} values", ctx(),
                        m.num_values);
        out.storage.push_back(std::move(page));
        FLOE_TRY_CTX(decode_page_values(d, ph, out.storage.back(), dict, out), "{}: page at {}",
                     ctx(), at + static_cast<int64_t>(page_pos));
        values += ph.data->num_values;
        ++pages;
    }
    return values;
}

result<column_data> file_reader::read_column(size_t rg, size_t col) {
    FLOE_TRY(check_readable(rg, col));
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg, d.dotted_path());
    };
    int64_t start = chunk_start(rg, col);
    byte_buffer raw;
    FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(start),
                               static_cast<size_t>(m.total_compressed_size), raw),
                 "{}", ctx());
    column_data out;
    std::vector<std::string_view> dict;
    size_t pages = 0;
    int64_t values = FLOE_TRY(decode_pages(rg, col, raw, start, m.num_values, dict, out, pages));
    if (values != m.num_values)
        return fail(errc::corrupt, "{}: pages hold {} values, the chunk says {}", ctx(), values,
                    m.num_values);
    out.num_entries = values;
    return out;
}

result<void> file_reader::decrypt_module(size_t rg, size_t col, module_type t, bytes_view module,
                                         byte_buffer& out) {
    auto* key = chunk_cipher(rg, col);
    FLOE_TRY_CTX(key->gcm_decrypt(module, _dec->aad(t, int(rg), int(col)), out),
                 "{}: row group {} column {}: {} cannot be decrypted", name(), rg,
                 _schema.columns()[col].dotted_path(), to_string(t));
    return {};
}

result<void> file_reader::load_index(size_t rg, size_t col) {
    FLOE_TRY(check_readable(rg, col));
    size_t ncols = _schema.columns().size();
    if (_indexes.empty()) _indexes.resize(_meta.row_groups.size() * ncols);
    auto& e = _indexes[rg * ncols + col];
    if (e.loaded) return {};
    const auto& cc = _meta.row_groups[rg].columns[col];
    const auto& m = *cc.meta_data;
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg,
                           _schema.columns()[col].dotted_path());
    };
    auto read = [&](std::optional<int64_t> off, std::optional<int32_t> len, const char* what,
                    byte_buffer& out) -> result<bool> {
        if (!off || !len) return false;
        if (*off < 4 || *len <= 0 || static_cast<uint64_t>(*off) > _size
            || static_cast<uint64_t>(*len) > _size - static_cast<uint64_t>(*off))
            return fail(errc::corrupt, "{}: {} at {} of {} bytes lies outside the file", ctx(),
                        what, *off, *len);
        if (static_cast<uint32_t>(*len) > _opts.max_index_size)
            return fail(errc::corrupt, "{}: {} of {} bytes exceeds the limit of {}", ctx(), what,
                        *len, _opts.max_index_size);
        FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(*off), static_cast<size_t>(*len), out),
                     "{}: {}", ctx(), what);
        return true;
    };
    byte_buffer b, plain;
    bool enc = chunk_cipher(rg, col) != nullptr;
    if (FLOE_TRY(read(cc.offset_index_offset, cc.offset_index_length, "offset index", b))) {
        if (enc) {
            FLOE_TRY(decrypt_module(rg, col, module_type::offset_index, b, plain));
            b.swap(plain);
        }
        auto oi = FLOE_TRY_CTX(decode_offset_index(b), "{}: offset index", ctx());
        // Pages must lie inside the chunk and start inside the row group.
        int64_t start = chunk_start(rg, col), end = start + m.total_compressed_size;
        int64_t rows = _meta.row_groups[rg].num_rows;
        for (size_t i = 0; i < oi.page_locations.size(); ++i) {
            auto& p = oi.page_locations[i];
            if (p.offset < start || p.offset > end || p.compressed_page_size > end - p.offset
                || p.first_row_index >= rows)
                return fail(errc::corrupt,
                            "{}: offset index page {} (at {}, {} bytes, row {}) lies outside the "
                            "chunk ({}..{}, {} rows)",
                            ctx(), i, p.offset, p.compressed_page_size, p.first_row_index, start,
                            end, rows);
        }
        if (oi.page_locations.empty() && rows > 0)
            return fail(errc::corrupt, "{}: offset index without pages", ctx());
        e.offsets = std::move(oi);
    }
    if (FLOE_TRY(read(cc.column_index_offset, cc.column_index_length, "column index", b))) {
        if (enc) {
            FLOE_TRY(decrypt_module(rg, col, module_type::column_index, b, plain));
            b.swap(plain);
        }
        auto ci = FLOE_TRY_CTX(decode_column_index(b), "{}: column index", ctx());
        if (e.offsets && ci.null_pages.size() != e.offsets->page_locations.size())
            return fail(errc::corrupt, "{}: column index of {} pages, offset index of {}", ctx(),
                        ci.null_pages.size(), e.offsets->page_locations.size());
        e.columns = std::move(ci);
    }
    e.loaded = true;
    return {};
}

result<const offset_index*> file_reader::chunk_offset_index(size_t rg, size_t col) {
    FLOE_TRY(load_index(rg, col));
    auto& e = _indexes[rg * _schema.columns().size() + col];
    return e.offsets ? &*e.offsets : nullptr;
}

result<const column_index*> file_reader::chunk_column_index(size_t rg, size_t col) {
    FLOE_TRY(load_index(rg, col));
    auto& e = _indexes[rg * _schema.columns().size() + col];
    return e.columns ? &*e.columns : nullptr;
}

bool file_reader::fully_dictionary_encoded(size_t rg, size_t col) const {
    if (!check_readable(rg, col)) return false;
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.dictionary_page_offset || m.encoding_stats.empty()) return false;
    bool dict_data = false;
    for (auto& s : m.encoding_stats) {
        if (s.type != page_type::data_page && s.type != page_type::data_page_v2) continue;
        if (s.count <= 0) continue;
        if (s.enc != encoding::rle_dictionary && s.enc != encoding::plain_dictionary) return false;
        dict_data = true;
    }
    return dict_data;
}

result<std::optional<column_data>> file_reader::read_dictionary(size_t rg, size_t col) {
    FLOE_TRY(check_readable(rg, col));
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.dictionary_page_offset || *m.dictionary_page_offset >= m.data_page_offset)
        return std::optional<column_data>{};
    // The dictionary page comes first: it ends where the first data page starts (the chunk
    // bounds were checked when the footer was read).
    int64_t off = *m.dictionary_page_offset;
    int64_t len = m.data_page_offset - off;
    if (len > m.total_compressed_size || static_cast<uint64_t>(len) > _opts.max_page_size + 4096ull)
        return fail(errc::corrupt, "{}: row group {} column {}: dictionary page of {} bytes",
                    name(), rg, d.dotted_path(), len);
    byte_buffer raw;
    FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(off), static_cast<size_t>(len), raw),
                 "{}: row group {} column {}: dictionary", name(), rg, d.dotted_path());
    column_data out;
    std::vector<std::string_view> dict;
    size_t pages = 0;
    FLOE_TRY(decode_pages(rg, col, raw, off, 1, dict, out, pages));
    if (pages != 0)
        return fail(errc::corrupt, "{}: row group {} column {}: a data page before {}", name(), rg,
                    d.dotted_path(), m.data_page_offset);
    if (out.storage.empty())
        return fail(errc::corrupt, "{}: row group {} column {}: no dictionary page at {}", name(),
                    rg, d.dotted_path(), off);
    out.bytes = std::move(dict);
    return std::optional<column_data>(std::move(out));
}

result<void> file_reader::find_value_in_pages(size_t rg, size_t col, size_t first_page,
                                              size_t last_page, std::string_view value,
                                              std::vector<int64_t>& rows) {
    const auto* oi = FLOE_TRY(chunk_offset_index(rg, col));
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    auto ctx = [&]() {
        return fmt::format("{}: row group {} column {}", name(), rg, d.dotted_path());
    };
    if (!oi) return fail(errc::invalid_argument, "{} has no offset index", ctx());
    if (d.type != physical_type::byte_array || d.max_rep > 0)
        return fail(errc::invalid_argument, "{} is not a flat byte-array column", ctx());
    const auto& locs = oi->page_locations;
    if (first_page > last_page || last_page >= locs.size())
        return fail(errc::out_of_range, "{}: pages {}..{} of {}", ctx(), first_page, last_page,
                    locs.size());
    // The value's dictionary index, if the chunk has a dictionary (-1: not in it).
    int64_t dict_index = -1;
    bool has_dict = false;
    if (m.dictionary_page_offset && *m.dictionary_page_offset < m.data_page_offset) {
        auto dc = FLOE_TRY(read_dictionary(rg, col));
        if (dc) {
            has_dict = true;
            for (size_t i = 0; i < dc->bytes.size(); ++i)
                if (dc->bytes[i] == value) {
                    dict_index = static_cast<int64_t>(i);
                    break;
                }
        }
    }
    int64_t start = locs[first_page].offset;
    int64_t end = locs[last_page].offset + locs[last_page].compressed_page_size;
    byte_buffer raw;
    FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(start), static_cast<size_t>(end - start), raw),
                 "{}", ctx());
    int width = bit_width_of(static_cast<uint64_t>(d.max_def));
    for (size_t p = first_page; p <= last_page; ++p) {
        auto at = locs[p].offset;
        bytes_view slice = bytes_view(raw).subspan(
            static_cast<size_t>(at - start), static_cast<size_t>(locs[p].compressed_page_size));
        page_header ph;
        size_t spos = 0;
        int ordinal = static_cast<int>(p);
        bytes_view body = FLOE_TRY(next_page(rg, col, slice, at, spos, ordinal, ph));
        if (ph.type != page_type::data_page || !ph.data)
            return fail(errc::corrupt, "{}: offset index page {} at {} is not a data page v1",
                        ctx(), p, at);
        if (spos != slice.size())
            return fail(errc::corrupt, "{}: page at {} of {} bytes, the offset index says {}",
                        ctx(), at, spos, slice.size());
        if (static_cast<uint32_t>(ph.uncompressed_page_size) > _opts.max_page_size)
            return fail(errc::corrupt, "{}: page of {} uncompressed bytes exceeds the limit", ctx(),
                        ph.uncompressed_page_size);
        const auto& dh = *ph.data;
        if (dh.num_values < 0 || static_cast<uint32_t>(dh.num_values) > _opts.max_page_values)
            return fail(errc::corrupt, "{}: page at {} with {} values", ctx(), at, dh.num_values);
        bool dict_page = dh.enc == encoding::rle_dictionary || dh.enc == encoding::plain_dictionary;
        if (dict_page && !has_dict)
            return fail(errc::corrupt, "{}: dictionary-encoded page without a dictionary", ctx());
        if (dict_page && dict_index < 0) continue; // the value is in no row of this page
        if (!dict_page && dh.enc != encoding::plain)
            return fail(errc::unsupported, "{}: encoding {} not supported", ctx(),
                        to_string(dh.enc));
        FLOE_TRY_CTX(_decomp.decompress(m.codec, body,
                                        static_cast<size_t>(ph.uncompressed_page_size), _page_buf),
                     "{}: page at {}", ctx(), at);
        size_t n = static_cast<size_t>(dh.num_values);
        byte_reader r(_page_buf);
        bool all_present = d.max_def == 0;
        if (!all_present) {
            uint32_t len = FLOE_TRY_CTX(r.le<uint32_t>(), "{}: page at {}", ctx(), at);
            auto lv = FLOE_TRY_CTX(r.bytes(len), "{}: page at {}", ctx(), at);
            _levels.resize(n);
            rle_decoder dec(lv, width);
            FLOE_TRY_CTX(dec.get(_levels.data(), n), "{}: page at {}", ctx(), at);
        }
        auto present = [&](size_t e) {
            return all_present || _levels[e] == static_cast<uint32_t>(d.max_def);
        };
        int64_t first_row = locs[p].first_row_index;
        bytes_view rest = r.rest();
        if (dict_page) {
            size_t count = n;
            if (!all_present)
                count = static_cast<size_t>(std::count(_levels.begin(),
                                                       _levels.begin() + static_cast<ptrdiff_t>(n),
                                                       static_cast<uint32_t>(d.max_def)));
            if (count == 0) continue;
            if (rest.empty())
                return fail(errc::corrupt, "{}: page at {} misses its bit width", ctx(), at);
            if (rest[0] > 32)
                return fail(errc::corrupt, "{}: dictionary index bit width {}", ctx(), rest[0]);
            _indices.resize(count);
            rle_decoder dec(rest.subspan(1), rest[0]);
            FLOE_TRY_CTX(dec.get(_indices.data(), count), "{}: page at {}", ctx(), at);
            size_t vi = 0;
            for (size_t e = 0; e < n; ++e)
                if (present(e) && _indices[vi++] == static_cast<uint32_t>(dict_index))
                    rows.push_back(first_row + static_cast<int64_t>(e));
            continue;
        }
        // PLAIN: length-prefixed values, compared in place (the first 8 bytes as one word:
        // keys of one length differ there mostly).
        uint64_t head = 0;
        if (value.size() >= 8) std::memcpy(&head, value.data(), 8);
        const uint8_t* q = rest.data();
        const uint8_t* qend = q + rest.size();
        for (size_t e = 0; e < n; ++e) {
            if (!present(e)) continue;
            uint32_t len;
            if (qend - q < 4) return fail(errc::corrupt, "{}: page at {} ends early", ctx(), at);
            std::memcpy(&len, q, 4);
            q += 4;
            if (static_cast<size_t>(qend - q) < len)
                return fail(errc::corrupt, "{}: page at {} ends early", ctx(), at);
            if (len == value.size()) {
                bool eq;
                if (len >= 8) {
                    uint64_t w;
                    std::memcpy(&w, q, 8);
                    eq = w == head && std::memcmp(q + 8, value.data() + 8, len - 8) == 0;
                } else {
                    eq = len == 0 || std::memcmp(q, value.data(), len) == 0;
                }
                if (eq) rows.push_back(first_row + static_cast<int64_t>(e));
            }
            q += len;
        }
    }
    return {};
}

result<column_data> file_reader::read_pages(size_t rg, size_t col, size_t first_page,
                                            size_t last_page) {
    const auto* oi = FLOE_TRY(chunk_offset_index(rg, col));
    const auto& d = _schema.columns()[col];
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!oi)
        return fail(errc::invalid_argument, "{}: row group {} column {} has no offset index",
                    name(), rg, d.dotted_path());
    const auto& locs = oi->page_locations;
    if (first_page > last_page || last_page >= locs.size())
        return fail(errc::out_of_range, "{}: row group {} column {}: pages {}..{} of {}", name(),
                    rg, d.dotted_path(), first_page, last_page, locs.size());
    column_data out;
    std::vector<std::string_view> dict;
    if (m.dictionary_page_offset && *m.dictionary_page_offset < m.data_page_offset) {
        auto dc = FLOE_TRY(read_dictionary(rg, col));
        if (dc) {
            out.storage = std::move(dc->storage); // the views in dc->bytes stay valid
            dict = std::move(dc->bytes);
        }
    }
    int64_t start = locs[first_page].offset;
    int64_t end = locs[last_page].offset + locs[last_page].compressed_page_size;
    byte_buffer raw;
    FLOE_TRY_CTX(_src->read_at(static_cast<uint64_t>(start), static_cast<size_t>(end - start), raw),
                 "{}: row group {} column {}", name(), rg, d.dotted_path());
    size_t pages = 0;
    int64_t values = FLOE_TRY(decode_pages(rg, col, raw, start, m.num_values, dict, out, pages,
                                           static_cast<int>(first_page)));
    if (pages != last_page - first_page + 1)
        return fail(errc::corrupt,
                    "{}: row group {} column {}: {} data pages where the offset index has {}",
                    name(), rg, d.dotted_path(), pages, last_page - first_page + 1);
    if (d.max_rep > 0 && values > 0 && out.rep[0] != 0)
        return fail(errc::corrupt, "{}: row group {} column {}: page {} starts inside a row",
                    name(), rg, d.dotted_path(), first_page);
    out.num_entries = values;
    out.first_row = locs[first_page].first_row_index;
    return out;
}

bool file_reader::stats_may_contain(size_t rg, size_t col, std::string_view value) const {
    const auto& d = _schema.columns()[col];
    if (!_meta.row_groups[rg].columns[col].meta_data) return true; // encrypted, no key
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.stats || m.stats->legacy_min_max || _meta.column_orders == 0) return true;
    // `value` is plain bytes of the column's type: compared in its order, sizes checked.
    size_t width = 0;
    switch (d.type) {
    case physical_type::boolean:
        width = 1;
        break;
    case physical_type::int32:
    case physical_type::float_:
        width = 4;
        break;
    case physical_type::int64:
    case physical_type::double_:
        width = 8;
        break;
    case physical_type::fixed_len_byte_array:
        width = static_cast<size_t>(d.type_length);
        break;
    case physical_type::byte_array:
        if (d.logical == logical_type::decimal) return true; // variable-length signed: not ordered here
        break;
    default:
        return true;
    }
    auto fits = [&](std::string_view s) { return width == 0 || s.size() == width; };
    if (!fits(value)) return true;
    if (d.type == physical_type::float_ || d.type == physical_type::double_) {
        double x = 0;
        if (d.type == physical_type::float_) {
            float f;
            std::memcpy(&f, value.data(), 4);
            x = f;
        } else {
            std::memcpy(&x, value.data(), 8);
        }
        if (x != x) return true; // NaN is in no bounds; zeros of either sign match both
        if (x == 0) return true;
    }
    if (m.stats->min_value && fits(*m.stats->min_value)
        && compare_plain(d, value, *m.stats->min_value) < 0)
        return false;
    if (m.stats->max_value && fits(*m.stats->max_value)
        && compare_plain(d, *m.stats->max_value, value) < 0)
        return false;
    if (m.stats->null_count && *m.stats->null_count == m.num_values) return false;
    return true;
}

bool file_reader::stats_may_contain(size_t rg, size_t col, int64_t value) const {
    const auto& d = _schema.columns()[col];
    if (!_meta.row_groups[rg].columns[col].meta_data) return true; // encrypted, no key
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.stats || !m.stats->min_value || !m.stats->max_value) return true;
    auto get = [&](const std::string& s, int64_t& out) {
        if (d.type == physical_type::int32 && s.size() == 4) {
            int32_t v;
            std::memcpy(&v, s.data(), 4);
            out = v;
            return true;
        }
        if (d.type == physical_type::int64 && s.size() == 8) {
            std::memcpy(&out, s.data(), 8);
            return true;
        }
        return false;
    };
    int64_t lo, hi;
    if (!get(*m.stats->min_value, lo) || !get(*m.stats->max_value, hi)) return true;
    return value >= lo && value <= hi;
}

result<bool> file_reader::bloom_may_contain(size_t rg, size_t col, std::string_view value) {
    FLOE_TRY(check_readable(rg, col));
    const auto& m = *_meta.row_groups[rg].columns[col].meta_data;
    if (!m.bloom_filter_offset) return true;
    size_t slot = rg * _meta.row_groups[rg].columns.size() + col;
    if (auto it = _blooms.find(slot); it != _blooms.end()) return it->second.may_contain(bloom_filter::hash(value));
    auto ctx = [&]() { return fmt::format("{}: row group {} bloom filter", name(), rg); };
    uint64_t off = static_cast<uint64_t>(*m.bloom_filter_offset);
    if (off >= _size) return fail(errc::corrupt, "{}: offset {} outside the file", ctx(), off);
    if (chunk_cipher(rg, col)) {
        // Two GCM modules: the header, then the bitset.
        byte_buffer lb, mod, plain;
        auto read_module = [&](uint64_t at, module_type t) -> result<size_t> {
            if (_size - at < 4)
                return fail(errc::corrupt, "{}: {} at {} runs past the file end", ctx(), to_string(t), at);
            FLOE_TRY_CTX(_src->read_at(at, 4, lb), "{}", ctx());
            uint32_t n;
            std::memcpy(&n, lb.data(), 4);
            if (n < crypto::nonce_bytes + crypto::tag_bytes || n > _size - at - 4
                || n > _opts.max_page_size)
                return fail(errc::corrupt, "{}: {} module of {} bytes at {} does not fit", ctx(),
                            to_string(t), n, at);
            FLOE_TRY_CTX(_src->read_at(at, size_t{n} + 4, mod), "{}", ctx());
            FLOE_TRY(decrypt_module(rg, col, t, mod, plain));
            return size_t{n} + 4;
        };
        size_t hm = FLOE_TRY(read_module(off, module_type::bloom_filter_header));
        size_t hlen = 0;
        auto h = FLOE_TRY_CTX(decode_bloom_filter_header(plain, hlen), "{}", ctx());
        size_t bm = FLOE_TRY(read_module(off + hm, module_type::bloom_filter_bitset));
        if (plain.size() != static_cast<size_t>(h.num_bytes))
            return fail(errc::corrupt, "{}: bitset of {} bytes, its header says {}", ctx(),
                        plain.size(), h.num_bytes);
        if (m.bloom_filter_length && static_cast<size_t>(*m.bloom_filter_length) != hm + bm)
            return fail(errc::corrupt, "{}: modules of {} bytes, the metadata says {}", ctx(),
                        hm + bm, *m.bloom_filter_length);
        auto f = FLOE_TRY_CTX(bloom_filter::from_bitset(plain), "{}", ctx());
        bool maybe = f.may_contain(bloom_filter::hash(value));
        _blooms.emplace(slot, std::move(f));
        return maybe;
    }
    size_t len = m.bloom_filter_length ? static_cast<size_t>(std::max(0, *m.bloom_filter_length))
                                       : static_cast<size_t>(std::min<uint64_t>(_size - off, 64));
    if (len == 0 || len > _size - off)
        return fail(errc::corrupt, "{}: length {} runs past the file end", ctx(), len);
    byte_buffer b;
    FLOE_TRY_CTX(_src->read_at(off, len, b), "{}", ctx());
    size_t hlen = 0;
    auto h = FLOE_TRY_CTX(decode_bloom_filter_header(b, hlen), "{}", ctx());
    if (static_cast<uint64_t>(h.num_bytes) > _size - off - hlen)
        return fail(errc::corrupt, "{}: {} bytes run past the file end", ctx(), h.num_bytes);
    if (hlen + static_cast<size_t>(h.num_bytes) > b.size())
        FLOE_TRY_CTX(_src->read_at(off, hlen + static_cast<size_t>(h.num_bytes), b), "{}", ctx());
    auto f = FLOE_TRY_CTX(
        bloom_filter::from_bitset(bytes_view(b).subspan(hlen, static_cast<size_t>(h.num_bytes))),
        "{}", ctx());
    bool maybe = f.may_contain(bloom_filter::hash(value));
    _blooms.emplace(slot, std::move(f));
    return maybe;
}

// ------------------------------------------------------------------ message_reader

result<message_reader> message_reader::open(std::unique_ptr<input_source> src,
                                            std::vector<size_t> projection, reader_options opts) {
    auto r = FLOE_TRY(file_reader::open(std::move(src), opts));
    const auto& want = message_schema().columns();
    const auto& have = r->file_schema().columns();
    // A typed table's files and a dead-letter table's add their own columns after Floe's.
    if (have.size() < want.size())
        return fail(errc::invalid_argument, "{}: not a Floe message file ({} columns, expected at least {})",
                    r->name(), have.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
        if (have[i].path != want[i].path || have[i].type != want[i].type
            || have[i].max_def != want[i].max_def || have[i].max_rep != want[i].max_rep)
            return fail(errc::invalid_argument, "{}: column {} is not Floe's {}", r->name(),
                        have[i].dotted_path(), want[i].dotted_path());
    if (projection.empty())
        for (size_t i = 0; i < message_col::count; ++i)
            projection.push_back(i);
    for (size_t c : projection)
        if (c >= message_col::count)
            return fail(errc::invalid_argument, "projection column {} out of range", c);
    // header_key and header_value are assembled together.
    bool hk = std::count(projection.begin(), projection.end(), message_col::header_key) > 0;
    bool hv = std::count(projection.begin(), projection.end(), message_col::header_value) > 0;
    if (hk != hv) {
        projection.push_back(hk ? message_col::header_value : message_col::header_key);
    }
    return message_reader(std::move(r), std::move(projection), opts.use_page_index);
}

result<bool> message_reader::next_row_group(std::vector<message_record>& out) {
    if (_next >= _r->num_row_groups()) return false;
    FLOE_TRY(read_row_group(_next++, out));
    return true;
}

result<void> message_reader::read_row_group(size_t rg, std::vector<message_record>& out) {
    namespace mc = message_col;
    size_t rows = static_cast<size_t>(_r->row_group_rows(rg));
    // A flat required column has one entry per row: this bounds the row count by the (limited)
    // value count before anything is allocated for it.
    FLOE_TRY(_r->check_readable(rg, mc::segment_id));
    if (_r->metadata().row_groups[rg].columns[mc::segment_id].meta_data->num_values
        != _r->row_group_rows(rg))
        return fail(errc::corrupt, "{}: row group {} has {} rows but {} segment_id values",
                    _r->name(), rg, _r->row_group_rows(rg),
                    _r->metadata().row_groups[rg].columns[mc::segment_id].meta_data->num_values);
    size_t base = out.size();
    out.resize(base + rows);
    auto bad = [&](size_t col, std::string_view what) {
        return fail(errc::corrupt, "{}: row group {} column {}: {}", _r->name(), rg,
                    message_schema().columns()[col].dotted_path(), what);
    };
    for (size_t c : _proj) {
        if (c == mc::header_value) continue; // with header_key
        if (c == mc::header_key) {
            auto k = FLOE_TRY(_r->read_column(rg, mc::header_key));
            auto v = FLOE_TRY(_r->read_column(rg, mc::header_value));
            if (k.num_entries != v.num_entries || k.rep != v.rep)
                return bad(c, "header key and value levels differ");
            size_t row = 0, ki = 0, vi = 0;
            bool first = true;
            for (int64_t e = 0; e < k.num_entries; ++e) {
                if (k.rep[static_cast<size_t>(e)] == 0) {
                    if (!first) ++row;
                    first = false;
                }
                if (row >= rows) return bad(c, "more rows than the row group");
                auto& rec = out[base + row];
                uint8_t dk = k.def[static_cast<size_t>(e)], dv = v.def[static_cast<size_t>(e)];
                if (dk == 0) continue; // null list
                if (!rec.headers) rec.headers.emplace();
                if (dk == 1) continue; // empty list
                if (ki >= k.bytes.size()) return bad(c, "fewer values than levels");
                message_record::header h;
                h.key = std::string(k.bytes[ki++]);
                if (dv == 3) {
                    if (vi >= v.bytes.size()) return bad(c, "fewer values than levels");
                    h.value = std::string(v.bytes[vi++]);
                }
                rec.headers->push_back(std::move(h));
            }
            if (!first) ++row;
            if (row != rows) return bad(c, "row count differs from the row group's");
            continue;
        }
        auto d = FLOE_TRY(_r->read_column(rg, c));
        if (static_cast<size_t>(d.num_entries) != rows)
            return bad(c, "entry count differs from the row count");
        const auto& desc = message_schema().columns()[c];
        size_t vi = 0;
        for (size_t i = 0; i < rows; ++i) {
            auto& rec = out[base + i];
            bool present = desc.max_def == 0 || d.def[i] == desc.max_def;
            if (!present) continue;
            switch (c) {
            case mc::stream_key:
                rec.stream_key = std::string(d.bytes.at(vi++));
                break;
            case mc::message_id:
                rec.message_id = std::string(d.bytes.at(vi++));
                break;
            case mc::key:
                rec.key = std::string(d.bytes.at(vi++));
                break;
            case mc::value:
                rec.value = std::string(d.bytes.at(vi++));
                break;
            case mc::segment_id:
                rec.segment_id = d.i64.at(vi++);
                break;
            case mc::message_ts:
                rec.message_ts = d.i64.at(vi++);
                break;
            case mc::kafka_timestamp:
                rec.kafka_timestamp = d.i64.at(vi++);
                break;
            case mc::offset:
                rec.offset = d.i64.at(vi++);
                break;
            case mc::partition:
                rec.partition = d.i32.at(vi++);
                break;
            default:
                break;
            }
        }
    }
    return {};
}

namespace {

/// Walks the decoded entries of a column chunk (or of some of its pages) row by row: the entry
/// where each row starts and how many values precede it.
class row_walk {
public:
    row_walk(const column_data& d, const column_descriptor& desc)
        : _d(d), _max_def(static_cast<uint8_t>(desc.max_def)), _repeated(desc.max_rep > 0),
          _row(d.first_row) {}
    /// Moves to row `r` (not before the current one); false when the entries end first.
    bool seek(int64_t r) {
        size_t n = static_cast<size_t>(_d.num_entries);
        if (!_repeated && _max_def == 0) {
            // Required flat column: one value per row.
            if (r - _row > static_cast<int64_t>(n - _entry)) return false;
            _entry += static_cast<size_t>(r - _row);
            _value = _entry;
            _row = r;
            return _entry < n;
        }
        while (_row < r) {
            if (_entry >= n) return false;
            do {
                if (present(_entry)) ++_value;
                ++_entry;
            } while (_repeated && _entry < n && _d.rep[_entry] != 0);
            ++_row;
        }
        return _entry < n;
    }
    /// Entries [entry(), row_end()) are the current row's.
    size_t entry() const noexcept { return _entry; }
    size_t row_end() const noexcept {
        size_t e = _entry + 1, n = static_cast<size_t>(_d.num_entries);
        if (_repeated)
            while (e < n && _d.rep[e] != 0)
                ++e;
        return e;
    }
    /// Values before the current row's first entry.
    size_t value() const noexcept { return _value; }
    bool present(size_t e) const noexcept { return _max_def == 0 || _d.def[e] == _max_def; }

private:
    const column_data& _d;
    uint8_t _max_def;
    bool _repeated;
    int64_t _row;
    size_t _entry = 0, _value = 0;
};

/// The page of `oi` holding row `row`.
size_t page_of(const offset_index& oi, int64_t row) {
    auto& p = oi.page_locations;
    auto it = std::upper_bound(p.begin(), p.end(), row, [](int64_t r, const page_location& l) {
        return r < l.first_row_index;
    });
    return it == p.begin() ? 0 : static_cast<size_t>(it - p.begin() - 1);
}

} // namespace

result<void> message_reader::fill_rows(size_t rg, const std::vector<int64_t>& rows, size_t done_col,
                                       std::vector<message_record>& out, size_t base,
                                       lookup_stats& st) {
    namespace mc = message_col;
    if (rows.empty()) return {};
    auto bad = [&](size_t col, std::string_view what) {
        return fail(errc::corrupt, "{}: row group {} column {}: {}", _r->name(), rg,
                    message_schema().columns()[col].dotted_path(), what);
    };
    for (size_t c : _proj) {
        if (c == done_col || c == mc::header_value) continue;
        // The columns read together: header_key with header_value.
        size_t ncols = c == mc::header_key ? 2 : 1;
        size_t cols[2] = {c, mc::header_value};
        const offset_index* oi[2] = {nullptr, nullptr};
        bool indexed = _use_index;
        for (size_t j = 0; j < ncols && indexed; ++j) {
            oi[j] = FLOE_TRY(_r->chunk_offset_index(rg, cols[j]));
            if (!oi[j]) indexed = false;
        }
        // Clusters of rows whose pages are adjacent in every column read: one read each.
        // Without an OffsetIndex, one cluster and whole chunks.
        size_t i = 0;
        while (i < rows.size()) {
            size_t j = i + 1;
            if (indexed) {
                while (j < rows.size()) {
                    bool near = true;
                    for (size_t k = 0; k < ncols; ++k)
                        if (page_of(*oi[k], rows[j]) > page_of(*oi[k], rows[j - 1]) + 1)
                            near = false;
                    if (!near) break;
                    ++j;
                }
            } else {
                j = rows.size();
            }
            column_data data[2];
            for (size_t k = 0; k < ncols; ++k) {
                if (indexed) {
                    size_t p0 = page_of(*oi[k], rows[i]), p1 = page_of(*oi[k], rows[j - 1]);
                    data[k] = FLOE_TRY(_r->read_pages(rg, cols[k], p0, p1));
                    st.pages_read += p1 - p0 + 1;
                } else {
                    data[k] = FLOE_TRY(_r->read_column(rg, cols[k]));
                }
            }
            const auto& desc = message_schema().columns()[c];
            row_walk w0(data[0], desc);
            std::optional<row_walk> w1;
            if (ncols == 2) w1.emplace(data[1], message_schema().columns()[mc::header_value]);
            for (size_t k = i; k < j; ++k) {
                if (!w0.seek(rows[k]) || (w1 && !w1->seek(rows[k])))
                    return bad(c, fmt::format("row {} is not in the pages read", rows[k]));
                auto& rec = out[base + k];
                if (c == mc::header_key) {
                    const auto& kd = data[0];
                    const auto& vd = data[1];
                    size_t e0 = w0.entry(), e1 = w0.row_end();
                    size_t f0 = w1->entry(), f1 = w1->row_end();
                    if (e1 - e0 != f1 - f0) return bad(c, "header key and value levels differ");
                    size_t ki = w0.value(), vi = w1->value();
                    for (size_t e = e0, f = f0; e < e1; ++e, ++f) {
                        if (kd.rep[e] != vd.rep[f])
                            return bad(c, "header key and value levels differ");
                        uint8_t dk = kd.def[e], dv = vd.def[f];
                        if (dk == 0) continue; // null list
                        if (!rec.headers) rec.headers.emplace();
                        if (dk == 1) continue; // empty list
                        if (ki >= kd.bytes.size()) return bad(c, "fewer values than levels");
                        message_record::header h;
                        h.key = std::string(kd.bytes[ki++]);
                        if (dv == 3) {
                            if (vi >= vd.bytes.size()) return bad(c, "fewer values than levels");
                            h.value = std::string(vd.bytes[vi++]);
                        }
                        rec.headers->push_back(std::move(h));
                    }
                    continue;
                }
                if (!w0.present(w0.entry())) continue;
                size_t vi = w0.value();
                const auto& d = data[0];
                switch (c) {
                case mc::stream_key:
                    if (vi >= d.bytes.size()) return bad(c, "fewer values than levels");
                    rec.stream_key = std::string(d.bytes[vi]);
                    break;
                case mc::message_id:
                    if (vi >= d.bytes.size()) return bad(c, "fewer values than levels");
                    rec.message_id = std::string(d.bytes[vi]);
                    break;
                case mc::key:
                    if (vi >= d.bytes.size()) return bad(c, "fewer values than levels");
                    rec.key = std::string(d.bytes[vi]);
                    break;
                case mc::value:
                    if (vi >= d.bytes.size()) return bad(c, "fewer values than levels");
                    rec.value = std::string(d.bytes[vi]);
                    break;
                case mc::segment_id:
                case mc::message_ts:
                case mc::kafka_timestamp:
                case mc::offset: {
                    if (vi >= d.i64.size()) return bad(c, "fewer values than levels");
                    int64_t v = d.i64[vi];
                    if (c == mc::segment_id)
                        rec.segment_id = v;
                    else if (c == mc::message_ts)
                        rec.message_ts = v;
                    else if (c == mc::kafka_timestamp)
                        rec.kafka_timestamp = v;
                    else
                        rec.offset = v;
                    break;
                }
                case mc::partition:
                    if (vi >= d.i32.size()) return bad(c, "fewer values than levels");
                    rec.partition = d.i32[vi];
                    break;
                default:
                    break;
                }
            }
            i = j;
        }
    }
    return {};
}

result<std::vector<message_record>> message_reader::find_by_key(std::string_view key,
                                                                lookup_stats* stats) {
    namespace mc = message_col;
    std::vector<message_record> found, rows;
    lookup_stats st;
    auto saved = _proj;
    if (std::count(_proj.begin(), _proj.end(), mc::key) == 0) _proj.push_back(mc::key);
    struct restore {
        std::vector<size_t>& p;
        std::vector<size_t>& s;
        ~restore() { p = std::move(s); }
    } restore_proj{_proj, saved};
    const auto& kdesc = message_schema().columns()[mc::key];
    for (size_t rg = 0; rg < _r->num_row_groups(); ++rg) {
        ++st.row_groups;
        if (!_r->stats_may_contain(rg, mc::key, key)) {
            ++st.skipped_by_stats;
            continue;
        }
        if (!FLOE_TRY(_r->bloom_may_contain(rg, mc::key, key))) {
            ++st.skipped_by_bloom;
            continue;
        }
        if (!_use_index) {
            ++st.read;
            rows.clear();
            FLOE_TRY(read_row_group(rg, rows));
            for (auto& r : rows)
                if (r.key && *r.key == key) found.push_back(std::move(r));
            continue;
        }
        // A wholly dictionary-encoded key chunk holds the key only if its dictionary does.
        if (_r->fully_dictionary_encoded(rg, mc::key)) {
            auto dict = FLOE_TRY(_r->read_dictionary(rg, mc::key));
            if (dict
                && std::find(dict->bytes.begin(), dict->bytes.end(), key) == dict->bytes.end()) {
                ++st.skipped_by_dictionary;
                continue;
            }
        }
        // The key column: only the pages whose min/max may hold the key.
        const auto* oi = FLOE_TRY(_r->chunk_offset_index(rg, mc::key));
        const auto* ci = oi ? FLOE_TRY(_r->chunk_column_index(rg, mc::key)) : nullptr;
        std::vector<int64_t> match;
        auto scan = [&](const column_data& d) -> result<void> {
            row_walk w(d, kdesc);
            size_t vi = 0;
            for (int64_t e = 0; e < d.num_entries; ++e) {
                if (!w.present(static_cast<size_t>(e))) continue;
                if (vi >= d.bytes.size())
                    return fail(errc::corrupt,
                                "{}: row group {} column key: fewer values than "
                                "levels",
                                _r->name(), rg);
                if (d.bytes[vi++] == key) match.push_back(d.first_row + e);
            }
            return {};
        };
        if (oi && ci) {
            std::vector<size_t> pages;
            for (size_t p = 0; p < ci->null_pages.size(); ++p) {
                if (ci->null_pages[p]) continue;
                if (bytes_less(key, ci->min_values[p]) || bytes_less(ci->max_values[p], key))
                    continue;
                pages.push_back(p);
            }
            if (pages.empty()) {
                ++st.skipped_by_page_index;
                continue;
            }
            ++st.read;
            for (size_t i = 0; i < pages.size();) {
                size_t j = i + 1;
                while (j < pages.size() && pages[j] == pages[j - 1] + 1)
                    ++j;
                FLOE_TRY(_r->find_value_in_pages(rg, mc::key, pages[i], pages[j - 1], key, match));
                st.pages_read += j - i;
                i = j;
            }
        } else {
            ++st.read;
            auto d = FLOE_TRY(_r->read_column(rg, mc::key));
            if (d.num_entries != _r->row_group_rows(rg))
                return fail(errc::corrupt, "{}: row group {} column key: {} entries for {} rows",
                            _r->name(), rg, d.num_entries, _r->row_group_rows(rg));
            FLOE_TRY(scan(d));
        }
        if (match.empty()) continue;
        size_t base = found.size();
        found.resize(base + match.size());
        for (size_t i = 0; i < match.size(); ++i)
            found[base + i].key = std::string(key);
        FLOE_TRY(fill_rows(rg, match, mc::key, found, base, st));
    }
    if (stats) *stats = st;
    return found;
}

result<size_t> message_reader::read_offset_range(int64_t from_offset, size_t limit,
                                                 std::vector<message_record>& out,
                                                 lookup_stats* stats) {
    namespace mc = message_col;
    lookup_stats st;
    size_t got = 0;
    auto saved = _proj;
    if (std::count(_proj.begin(), _proj.end(), mc::offset) == 0) _proj.push_back(mc::offset);
    struct restore {
        std::vector<size_t>& p;
        std::vector<size_t>& s;
        ~restore() { p = std::move(s); }
    } restore_proj{_proj, saved};
    for (size_t rg = 0; rg < _r->num_row_groups() && got < limit; ++rg) {
        ++st.row_groups;
        // Row-group statistics: skip when its max offset is below the start.
        if (!_r->stats_may_contain(rg, mc::offset, from_offset)) {
            const auto& m = *_r->metadata().row_groups[rg].columns[mc::offset].meta_data;
            int64_t mx = 0;
            if (m.stats && m.stats->max_value && m.stats->max_value->size() == 8) {
                std::memcpy(&mx, m.stats->max_value->data(), 8);
                if (mx < from_offset) {
                    ++st.skipped_by_stats;
                    continue;
                }
            }
        }
        if (!_use_index) {
            ++st.read;
            std::vector<message_record> rows;
            FLOE_TRY(read_row_group(rg, rows));
            for (auto& r : rows) {
                if (got >= limit) break;
                if (r.offset < from_offset) continue;
                out.push_back(std::move(r));
                ++got;
            }
            continue;
        }
        std::vector<int64_t> pick;
        std::vector<int64_t> offsets;
        auto scan = [&](const column_data& d) -> result<void> {
            if (d.i64.size() != static_cast<size_t>(d.num_entries))
                return fail(errc::corrupt,
                            "{}: row group {} column offset: {} values for {} "
                            "entries",
                            _r->name(), rg, d.i64.size(), d.num_entries);
            for (int64_t e = 0; e < d.num_entries && got + pick.size() < limit; ++e) {
                if (d.i64[static_cast<size_t>(e)] < from_offset) continue;
                pick.push_back(d.first_row + e);
                offsets.push_back(d.i64[static_cast<size_t>(e)]);
            }
            return {};
        };
        const auto* oi = FLOE_TRY(_r->chunk_offset_index(rg, mc::offset));
        const auto* ci = oi ? FLOE_TRY(_r->chunk_column_index(rg, mc::offset)) : nullptr;
        ++st.read;
        if (oi && ci) {
            // Pages whose max reaches the start, in order; with ASCENDING boundaries the first
            // such page is found by binary search and every later page qualifies.
            auto page_max = [&](size_t p) {
                int64_t v = INT64_MIN;
                if (!ci->null_pages[p] && ci->max_values[p].size() == 8)
                    std::memcpy(&v, ci->max_values[p].data(), 8);
                return v;
            };
            size_t np = ci->null_pages.size();
            size_t p = 0;
            if (ci->order == boundary_order::ascending) {
                size_t lo = 0, hi = np;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (!ci->null_pages[mid] && page_max(mid) < from_offset)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                p = lo;
            }
            for (; p < np && got + pick.size() < limit; ++p) {
                if (ci->null_pages[p] || page_max(p) < from_offset) continue;
                auto d = FLOE_TRY(_r->read_pages(rg, mc::offset, p, p));
                ++st.pages_read;
                FLOE_TRY(scan(d));
            }
        } else {
            auto d = FLOE_TRY(_r->read_column(rg, mc::offset));
            FLOE_TRY(scan(d));
        }
        if (pick.empty()) continue;
        size_t base = out.size();
        out.resize(base + pick.size());
        for (size_t i = 0; i < pick.size(); ++i)
            out[base + i].offset = offsets[i];
        FLOE_TRY(fill_rows(rg, pick, mc::offset, out, base, st));
        got += pick.size();
    }
    if (stats) *stats = st;
    return got;
}

} // namespace floe::parquet
