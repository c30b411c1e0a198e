#pragma once
// A Protobuf schema as the registry and the typed tables see it: `.proto` text compiled by
// libprotobuf's own compiler front end (compiler::Importer) into a DescriptorPool, with
// Confluent schema references as imports (a reference's name is the import path). The
// well-known types (google/protobuf/*.proto) resolve without a reference, from the descriptors
// built into libprotobuf.
//
// Model API: stable (the typed-table decoder reads descriptors through file()/message_at()).

#include "base/result.h"

#include <google/protobuf/descriptor.h>

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace floe::schema {

struct protobuf_parse_options {
    int max_depth = 64;                     ///< nesting of braces in the text
    std::string file_name = "schema.proto"; ///< the name the schema itself compiles under
};

class protobuf_schema {
public:
    /// One file an import names: the import path and its `.proto` text. Give the whole closure
    /// (imports of imports too); order does not matter.
    struct dependency {
        std::string name;
        std::string text;
    };

    /// Compiles `text`. Fails with errc::invalid_argument carrying the compiler's messages
    /// (file:line:column: message) for syntax errors, unknown types, imports that no
    /// dependency provides, cyclic imports, nesting deeper than max_depth.
    static result<std::shared_ptr<const protobuf_schema>> parse(std::string_view text,
                                                                 const std::vector<dependency>& deps = {},
                                                                 protobuf_parse_options opts = {});
    static result<std::shared_ptr<const protobuf_schema>> parse(std::string_view text,
                                                                 const std::vector<dependency>& deps,
                                                                 int max_depth) {
        return parse(text, deps, protobuf_parse_options{.max_depth = max_depth});
    }

    ~protobuf_schema();
    protobuf_schema(const protobuf_schema&) = delete;
    protobuf_schema& operator=(const protobuf_schema&) = delete;

    /// The compiled file; its pool also holds the dependencies. Valid while this object lives.
    const google::protobuf::FileDescriptor& file() const noexcept { return *_file; }
    const google::protobuf::DescriptorPool& pool() const noexcept;

    /// The text as given, ends trimmed: what the registry stores.
    const std::string& canonical() const noexcept { return _canonical; }
    /// Normalized form (`normalize=true`): the file as libprotobuf prints it from its descriptor
    /// (comments and formatting dropped, options and declarations in a fixed layout).
    std::string normalized() const;

    /// The message that Confluent's message-index path names: [i] is the i-th top-level
    /// message, [i, j] the j-th message nested in it, ... An empty path means [0]. nullptr
    /// when the path names nothing.
    const google::protobuf::Descriptor* message_at(std::span<const int> indexes) const noexcept;
    /// The message-index path of a message of this file (inverse of message_at).
    std::vector<int> indexes_of(const google::protobuf::Descriptor& message) const;
    /// A message of this file by full name ("pkg.Outer.Inner"), or nullptr.
    const google::protobuf::Descriptor* find_message(std::string_view full_name) const noexcept;

private:
    protobuf_schema() = default;
    struct impl;
    std::unique_ptr<impl> _impl;
    const google::protobuf::FileDescriptor* _file = nullptr;
    std::string _canonical;
};

} // namespace floe::schema
