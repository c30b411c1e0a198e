#pragma once

// Byte sinks and sources the writer and reader use, so encoding stays apart from I/O and an
// object store (S3) can be plugged in later. One owner each; not thread-safe.

#include "base/bytes.h"
#include "base/result.h"

#include <memory>
#include <string>

namespace floe::parquet {

/// Where a file's bytes go, strictly in order.
class output_sink {
public:
    virtual ~output_sink() = default;
    virtual result<void> write(bytes_view data) = 0;
    /// Makes everything written durable (where the sink can) and releases it.
    virtual result<void> close() = 0;
    /// A name for errors ("/data/x.parquet", "s3://b/k", "memory").
    virtual const std::string& name() const = 0;
};

/// Random-access reads of a complete file.
class input_source {
public:
    virtual ~input_source() = default;
    virtual result<uint64_t> size() = 0;
    /// Replaces `out` with exactly `len` bytes from `offset`; fails if the file is shorter.
    virtual result<void> read_at(uint64_t offset, size_t len, byte_buffer& out) = 0;
    virtual const std::string& name() const = 0;
};

/// A local file written with write(2); `sync` makes close() fsync it.
result<std::unique_ptr<output_sink>> open_file_sink(const std::string& path, bool sync = false);
/// Appends to a caller-owned buffer (tests, small files).
std::unique_ptr<output_sink> make_memory_sink(byte_buffer& out, std::string name = "memory");

result<std::unique_ptr<input_source>> open_file_source(const std::string& path);
/// Reads from a caller-owned buffer that must outlive the source.
std::unique_ptr<input_source> make_memory_source(bytes_view data, std::string name = "memory");

} // namespace floe::parquet
