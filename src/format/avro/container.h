#pragma once

#include "base/bytes.h"
#include "format/avro/codec.h"
#include "format/avro/datum.h"
#include "format/avro/encoding.h"
#include "format/avro/schema.h"

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace floe::avro {

using sync_marker = std::array<uint8_t, 16>;
using metadata_list = std::vector<std::pair<std::string, std::string>>;

struct writer_options {
    avro::codec codec = codec::deflate;
    int level = -1;                         ///< codec level, < 0 for its default
    size_t block_target_bytes = 64 * 1024;  ///< a block is closed once its encoding reaches this
    metadata_list metadata;                 ///< extra header entries, written in this order
    std::optional<sync_marker> sync;        ///< fixed marker for reproducible files; else random
};

/// Writes an Avro object container file into memory: header (magic, metadata with the schema
/// text exactly as given, codec, sync marker), then blocks of (count, size, data, sync).
/// Manifests are small, so the file is built in one buffer and handed to FileIO whole.
/// The schema must outlive the writer. Single-threaded.
class container_writer {
public:
    static result<container_writer> create(const schema& s, writer_options opts = {});

    /// Encodes one value; a value that does not fit the schema is refused and leaves the file
    /// unchanged.
    result<void> append(const datum& d);
    /// Closes the last block and returns the whole file. The writer is empty afterwards.
    result<byte_buffer> finish();

    size_t count() const noexcept { return _total; }

private:
    container_writer(const schema& s, writer_options o) : _schema(&s), _opts(std::move(o)) {}
    result<void> flush_block();

    const schema* _schema;
    writer_options _opts;
    sync_marker _sync{};
    byte_buffer _file;
    byte_buffer _block;
    byte_buffer _scratch;
    size_t _block_count = 0;
    size_t _total = 0;
};

struct reader_options {
    size_t max_block_bytes = size_t{256} << 20;  ///< largest uncompressed block accepted
    decode_budget budget;
};

/// Reads an Avro object container file held in memory, with the writer's schema. Every error
/// is errc::corrupt (or unsupported for an unknown codec) and its message starts with the file
/// name, then where (header, block N at offset X) and what was wrong.
/// Holds a view of the bytes unless built with open_owned. Single-threaded.
class container_reader {
public:
    static result<container_reader> open(bytes_view file, std::string name, reader_options opts = {});
    static result<container_reader> open_owned(byte_buffer file, std::string name,
                                               reader_options opts = {});

    const schema& writer_schema() const noexcept { return *_schema; }
    avro::codec codec() const noexcept { return _codec; }
    const metadata_list& metadata() const noexcept { return _meta; }
    /// The header value under `key` ("avro.schema", or Iceberg's "partition-spec", ...).
    std::optional<std::string_view> meta(std::string_view key) const noexcept;
    const std::string& name() const noexcept { return _name; }

    /// Reads the next value into `out`; false at the end of the file.
    result<bool> next(datum& out);
    result<std::vector<datum>> read_all();

private:
    container_reader() = default;
    result<void> read_header();
    result<void> load_block();

    byte_buffer _owned;
    bytes_view _file;
    std::string _name;
    reader_options _opts;
    std::unique_ptr<schema> _schema;
    avro::codec _codec = codec::null;
    metadata_list _meta;
    sync_marker _sync{};
    size_t _pos = 0;  ///< next block header in _file
    byte_buffer _block;
    byte_reader _in{bytes_view{}};
    int64_t _left_in_block = 0;
    size_t _block_index = 0;
    size_t _block_offset = 0;
};

} // namespace floe::avro
