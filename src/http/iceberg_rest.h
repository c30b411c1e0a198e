#pragma once

// The Iceberg REST catalog that Floe serves at /iceberg (the Apache Iceberg REST OpenAPI
// specification): config, namespaces, tables (list, load, exists, create) and table commits
// with requirement checks, on top of whichever catalog Floe itself uses. A commit that would
// drop or move back floe.committed-positions on the main branch is refused: external engines
// may compact, expire or set properties, never break Floe's exactly-once offload.

#include "http/server.h"
#include "iceberg/catalog.h"
#include "iceberg/file_io.h"
#include "iceberg/metadata.h"

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>

namespace floe::http {

struct iceberg_rest_options {
    std::string warehouse;  ///< where new tables go by default: <warehouse>/<ns>/<name>
    std::string mount = "/iceberg";
};

class iceberg_rest {
public:
    iceberg_rest(std::shared_ptr<iceberg::catalog> cat, std::shared_ptr<iceberg::file_io> io,
                 iceberg_rest_options opts);

    /// Registers GET, POST and DELETE under <mount>/ (HEAD is served by the GET route).
    void add_routes(server& s);
    response handle(const request& r);

private:
    response create(const std::string& ns, const nlohmann::json& body);
    response commit(const iceberg::table_ident& t, const nlohmann::json& body);

    std::shared_ptr<iceberg::catalog> _cat;
    std::shared_ptr<iceberg::file_io> _io;
    iceberg_rest_options _opts;
};

/// What a commit request (CommitTableRequest JSON) makes of `base`: requirements checked
/// (a failure is errc::conflict), updates applied, the floe.committed-positions guard. Pure;
/// the server's commit runs it on each attempt, and http_request_fuzz on hostile input.
result<iceberg::table_metadata> apply_commit(iceberg::table_metadata base, std::string_view body, int64_t now_ms);

/// The spec's error model: {"error":{"message":...,"type":...,"code":N}}.
response iceberg_error(int status, std::string_view type, std::string_view message);

} // namespace floe::http
