#include "schema/protobuf_schema.h"

#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <google/protobuf/stubs/logging.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <map>
#include <mutex>

namespace floe::schema {

namespace gp = google::protobuf;

namespace {

/// The files the importer may open: the schema itself, its dependencies, and the well-known
/// types printed from libprotobuf's built-in descriptors. Nothing is read from the file system.
class memory_source_tree final : public gp::compiler::SourceTree {
public:
    std::map<std::string, std::string> files;

    gp::io::ZeroCopyInputStream* Open(const std::string& filename) override {
        auto it = files.find(filename);
        if (it == files.end() && filename.starts_with("google/protobuf/")) {
            if (auto* fd = gp::DescriptorPool::generated_pool()->FindFileByName(filename))
                it = files.emplace(filename, fd->DebugString()).first;
        }
        if (it == files.end()) {
            _last = fmt::format("no schema reference provides \"{}\"", filename);
            return nullptr;
        }
        return new gp::io::ArrayInputStream(it->second.data(), int(it->second.size()));
    }
    std::string GetLastErrorMessage() override { return _last; }

private:
    std::string _last;
};

class collecting_errors final : public gp::compiler::MultiFileErrorCollector {
public:
    std::vector<std::string> errors;
    void AddError(const std::string& filename, int line, int column, const std::string& message) override {
        if (errors.size() < 20)
            errors.push_back(line >= 0 ? fmt::format("{}:{}:{}: {}", filename, line + 1, column + 1, message)
                                       : fmt::format("{}: {}", filename, message));
    }
};

/// Brace nesting outside strings and comments (the compiler's parser recurses per level).
bool nesting_within(std::string_view t, int limit) {
    int depth = 0;
    for (size_t i = 0; i < t.size(); ++i) {
        char c = t[i];
        if (c == '"' || c == '\'') {
            for (++i; i < t.size() && t[i] != c && t[i] != '\n'; ++i)
                if (t[i] == '\\') ++i;
        } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '/') {
            while (i < t.size() && t[i] != '\n') ++i;
        } else if (c == '/' && i + 1 < t.size() && t[i + 1] == '*') {
            auto end = t.find("*/", i + 2);
            if (end == std::string_view::npos) return true; // the parser reports it
            i = end + 1;
        } else if (c == '{' || c == '[' || c == '(' || c == '<') {
            if (++depth > limit) return false;
        } else if (c == '}' || c == ']' || c == ')' || c == '>') {
            --depth;
        }
    }
    return true;
}

std::string trim(std::string_view s) {
    auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    auto e = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(b, e - b + 1));
}

// libprotobuf writes its warnings ("No syntax specified ...") to stderr; the registry reports
// problems in its answers, so they go to the debug log.
void route_protobuf_logs() {
    static std::once_flag once;
    std::call_once(once, [] {
        gp::SetLogHandler([](gp::LogLevel level, const char* file, int line, const std::string& msg) {
            if (level >= gp::LOGLEVEL_FATAL) spdlog::error("libprotobuf {}:{}: {}", file, line, msg);
            else spdlog::debug("libprotobuf {}:{}: {}", file, line, msg);
        });
    });
}

} // namespace

struct protobuf_schema::impl {
    memory_source_tree tree;
    collecting_errors errors;
    gp::compiler::Importer importer{&tree, &errors};
};

protobuf_schema::~protobuf_schema() = default;

const gp::DescriptorPool& protobuf_schema::pool() const noexcept { return *_impl->importer.pool(); }

result<std::shared_ptr<const protobuf_schema>> protobuf_schema::parse(std::string_view text,
                                                                       const std::vector<dependency>& deps,
                                                                       protobuf_parse_options opts) {
    if (!nesting_within(text, opts.max_depth))
        return fail(errc::invalid_argument, "invalid Protobuf schema: nested deeper than {} levels", opts.max_depth);
    for (auto& d : deps)
        if (!nesting_within(d.text, opts.max_depth))
            return fail(errc::invalid_argument, "invalid Protobuf schema: reference \"{}\" nested deeper than {} levels",
                        d.name, opts.max_depth);
    route_protobuf_logs();
    std::shared_ptr<protobuf_schema> s(new protobuf_schema());
    s->_impl = std::make_unique<impl>();
    for (auto& d : deps) {
        if (d.name == opts.file_name)
            return fail(errc::invalid_argument, "invalid Protobuf schema: reference name \"{}\" is the schema's own name",
                        d.name);
        s->_impl->tree.files[d.name] = d.text;
    }
    s->_canonical = trim(text);
    s->_impl->tree.files[opts.file_name] = std::string(text);
    s->_file = s->_impl->importer.Import(opts.file_name);
    if (!s->_file || !s->_impl->errors.errors.empty()) {
        std::string msg;
        for (auto& e : s->_impl->errors.errors) {
            if (!msg.empty()) msg += "; ";
            msg += e;
        }
        if (msg.empty()) msg = "the compiler refused it";
        return fail(errc::invalid_argument, "invalid Protobuf schema: {}", msg);
    }
    return std::shared_ptr<const protobuf_schema>(std::move(s));
}

std::string protobuf_schema::normalized() const { return trim(_file->DebugString()); }

const gp::Descriptor* protobuf_schema::message_at(std::span<const int> indexes) const noexcept {
    if (indexes.empty()) return _file->message_type_count() > 0 ? _file->message_type(0) : nullptr;
    if (indexes[0] < 0 || indexes[0] >= _file->message_type_count()) return nullptr;
    const gp::Descriptor* d = _file->message_type(indexes[0]);
    for (size_t i = 1; i < indexes.size(); ++i) {
        if (indexes[i] < 0 || indexes[i] >= d->nested_type_count()) return nullptr;
        d = d->nested_type(indexes[i]);
    }
    return d;
}

std::vector<int> protobuf_schema::indexes_of(const gp::Descriptor& message) const {
    std::vector<int> path;
    for (const gp::Descriptor* d = &message; d; d = d->containing_type()) path.insert(path.begin(), d->index());
    return path;
}

const gp::Descriptor* protobuf_schema::find_message(std::string_view full_name) const noexcept {
    auto* d = pool().FindMessageTypeByName(std::string(full_name));
    return d && d->file() == _file ? d : nullptr;
}

} // namespace floe::schema
