#pragma once

// The keys the decrypting fuzz target knows and its seed corpus (parquet_fuzz_seeds) is
// written with: by key_metadata, 16, 24 and 32 bytes; an AAD prefix some seeds need supplied.

#include "base/result.h"
#include "format/parquet/encryption.h"

#include <string>
#include <string_view>

namespace floe::parquet::fuzz_keys {

inline const std::string footer(32, 'F');
inline const std::string key_col = "0123456789abcdef";
inline const std::string value_col(24, 'V');
inline const std::string aad_prefix = "fuzz/part-0";

inline result<std::string> retrieve(std::string_view meta) {
    if (meta == "footer") return footer;
    if (meta == "col-key") return key_col;
    if (meta == "col-value") return value_col;
    return fail(errc::not_found, "unknown key");
}

} // namespace floe::parquet::fuzz_keys
