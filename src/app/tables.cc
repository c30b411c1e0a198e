#include "app/tables.h"

#include "app/storage.h"

#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/table.h"
#include "lake/table_writer.h"

#include <cstdio>
#include <memory>

namespace floe::app {

int adopt_tables(const config::settings& s, const std::vector<std::string>& names) {
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
        iceberg::table_ident t{ns, name.starts_with(ns + ".") ? name.substr(ns.size() + 1)
                                                              : lake::table_name_for_topic(name)};
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
