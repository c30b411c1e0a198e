#include "app/tables.h"

#include "app/encryption.h"
#include "app/storage.h"
#include "base/base64.h"

#include "base/file_lock.h"

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/table.h"
#include "lake/iceberg_lake.h"
#include "lake/table_writer.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

namespace floe::app {

namespace {

/// Takes `<data-dir>/floe.lock` for a command that rewrites tables (nothing when the data
/// directory does not exist: no server runs on it). nullopt: go on (`held` keeps the lock);
/// else the exit code, the refusal printed naming the holder (its pid and listeners).
std::optional<int> lock_data_dir(const config::settings& s, std::string_view command, std::optional<file_lock>& held) {
    const std::filesystem::path data_dir = s.get_string("floe.data-dir");
    std::error_code ec;
    if (!std::filesystem::is_directory(data_dir, ec)) return std::nullopt; // no server has it
    auto lock = file_lock::acquire(data_dir / "floe.lock", fmt::format("floe {}", command));
    if (lock) {
        held = std::move(*lock);
        return std::nullopt;
    }
    if (lock.error().code() == errc::unavailable) {
        auto holder = file_lock::read_holder(data_dir / "floe.lock");
        std::fprintf(stderr,
                     "floe %.*s: refused: a live floe holds floe.data-dir %s (%s); it writes the tables this command "
                     "would rewrite under it. Stop it (Ctrl-C or SIGTERM) and run this again\n",
                     int(command.size()), command.data(), data_dir.c_str(),
                     holder && !holder->empty() ? holder->c_str() : lock.error().message().c_str());
        return 2;
    }
    std::fprintf(stderr, "floe %.*s: cannot lock floe.data-dir %s: %s\n", int(command.size()), command.data(),
                 data_dir.c_str(), lock.error().message().c_str());
    return 1;
}

/// A table named on the command line: "<namespace>.<table>", else a topic's table.
iceberg::table_ident table_named(const std::string& name, const std::string& ns) {
    return {ns, name.starts_with(ns + ".") ? name.substr(ns.size() + 1) : lake::table_name_for_topic(name)};
}

/// 'text' as a SQL string literal.
std::string sql_string(std::string_view text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

} // namespace

int list_table_files(const config::settings& s, const std::string& name, bool sql, bool keys) {
    auto ns = s.get_string("floe.namespace");
    auto storage = make_file_io(s);
    if (!storage) {
        std::fprintf(stderr, "floe tables files: %s\n", storage.error().message().c_str());
        return 2;
    }
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        std::fprintf(stderr, "floe tables files: cannot open the %s catalog: %s\n",
                     s.get_string("floe.storage.remote.catalog.type").c_str(), cat.error().message().c_str());
        return 1;
    }
    auto t = table_named(name, ns);
    auto current = lake::current_data_files(**cat, *storage->io, t);
    if (!current) {
        if (current.error().code() == errc::not_found)
            std::fprintf(stderr, "floe tables files: no table %s.%s%s (nothing offloaded yet, or not a topic)\n",
                         t.ns.c_str(), t.name.c_str(),
                         name.starts_with(ns + ".") ? "" : fmt::format(" for topic '{}'", name).c_str());
        else
            std::fprintf(stderr, "floe tables files: %s.%s: %s\n", t.ns.c_str(), t.name.c_str(),
                         current.error().message().c_str());
        return 1;
    }
    // Encrypted files by the id of their key ("" for plaintext files), with one key_metadata each.
    std::map<std::string, std::vector<std::string>> by_key;
    std::map<std::string, std::string> metadata_of;
    for (auto& f : current->files) {
        std::string id;
        if (f.key_metadata) {
            auto info = crypto::parse_key_metadata(as_bytes(*f.key_metadata));
            id = info ? info->key_id : "?";
            metadata_of.emplace(id, *f.key_metadata);
        }
        by_key[id].push_back(lake::readable_path(f.file_path));
    }
    if (keys) {
        if (metadata_of.empty()) {
            std::fprintf(stderr, "floe tables files: %s.%s has no encrypted data files\n", t.ns.c_str(), t.name.c_str());
            return 0;
        }
        auto provider = open_key_provider(s);
        if (!provider || !*provider) {
            std::fprintf(stderr, "floe tables files --keys: %s\n",
                         provider ? "no key provider: set floe.encryption.provider and its settings"
                                  : provider.error().message().c_str());
            return 2;
        }
        if ((*provider)->kind() != "keyring") {
            std::fprintf(stderr, "floe tables files --keys: %s tables have a data key per file (readers decrypt through "
                                 "KMS); only keyring keys can be handed to DuckDB\n",
                         std::string((*provider)->kind()).c_str());
            return 2;
        }
        for (auto& [id, meta] : metadata_of) {
            auto k = (*provider)->key_for(as_bytes(meta));
            if (!k) {
                std::fprintf(stderr, "floe tables files --keys: %s\n", k.error().message().c_str());
                return 1;
            }
            std::printf("PRAGMA add_parquet_key(%s, '%s');\n", sql_string(id).c_str(), base64_encode(k->bytes()).c_str());
        }
        return 0;
    }
    if (sql) {
        // One expression for DuckDB: SELECT ... FROM $(floe tables files T --sql); one
        // read_parquet per key (DuckDB takes one footer key per call).
        std::vector<std::string> parts;
        for (auto& [id, paths] : by_key) {
            std::string list;
            for (auto& p : paths) list += (list.empty() ? "" : ", ") + sql_string(p);
            // By name: a typed table's files hold the schema of their time (evolution adds fields).
            parts.push_back(fmt::format("read_parquet([{}], union_by_name=true{})", list,
                                        id.empty() ? "" : fmt::format(", encryption_config = {{footer_key: {}}}", sql_string(id))));
        }
        if (parts.size() <= 1) std::printf("%s\n", parts.empty() ? "read_parquet([], union_by_name=true)" : parts[0].c_str());
        else std::printf("(SELECT * FROM %s)\n", fmt::format("{}", fmt::join(parts, " UNION ALL BY NAME SELECT * FROM ")).c_str());
        if (!metadata_of.empty())
            std::fprintf(stderr, "floe tables files: encrypted files: register their keys first "
                                 "(floe tables files %s --keys prints the PRAGMA statements)\n", name.c_str());
    } else {
        for (auto& f : current->files) std::printf("%s\n", lake::readable_path(f.file_path).c_str());
    }
    if (current->files.empty())
        std::fprintf(stderr, "floe tables files: %s.%s has no data files yet\n", t.ns.c_str(), t.name.c_str());
    return 0;
}

int adopt_tables(const config::settings& s, const std::vector<std::string>& names) {
    // Adopting rewrites a table's metadata: never under a live floe serve on this data directory
    // (its storage worker would commit on top of, or fail against, what this writes). Holding
    // floe.lock for the whole run also keeps a floe serve from starting meanwhile.
    std::optional<file_lock> dir_lock;
    if (auto rc = lock_data_dir(s, "tables adopt", dir_lock)) return *rc;
    auto type = s.get_string("floe.storage.remote.catalog.type");
    auto warehouse = s.get_string("floe.storage.remote.path");
    auto ns = s.get_string("floe.namespace");
    while (warehouse.ends_with("/")) warehouse.pop_back();
    auto storage = make_file_io(s);
    if (!storage) {
        std::fprintf(stderr, "floe: %s\n", storage.error().message().c_str());
        return 2;
    }
    auto io = storage->io;
    auto cat = open_catalog(s, *storage);
    if (!cat) {
        std::fprintf(stderr, "floe: cannot open the %s catalog: %s\n", type.c_str(), cat.error().message().c_str());
        return 1;
    }
    int rc = 0;
    for (auto& name : names) {
        // "<namespace>.<table>" names the table; anything else is a topic.
        auto t = table_named(name, ns);
        auto location = fmt::format("{}/{}/{}", warehouse, t.ns, t.name);
        auto before = (*cat)->metadata_location(t);
        auto adopted = iceberg::adopt_table(**cat, *io, t, location);
        if (!adopted) {
            std::fprintf(stderr, "floe: cannot adopt %s.%s at %s: %s\n", t.ns.c_str(), t.name.c_str(),
                         location.c_str(), adopted.error().message().c_str());
            rc = 1;
            continue;
        }
        if (before && *before && **before == *adopted)
            std::printf("%s.%s: already owned by the %s catalog (%s)\n", t.ns.c_str(), t.name.c_str(), type.c_str(),
                        adopted->c_str());
        else
            std::printf("%s.%s: adopted by the %s catalog; current metadata %s\n", t.ns.c_str(), t.name.c_str(),
                        type.c_str(), adopted->c_str());
    }
    return rc;
}

} // namespace floe::app
