// Parsing --kv-dtype for the commands that store a cache.
#include "cli/kv_dtype_option.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace kvbench {

std::vector<KvDtype> parse_stored_kv_dtypes(std::string_view text) {
    std::vector<KvDtype> dtypes;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.size() - start
                                                                                          : comma - start);
        if (item.empty()) {
            throw ConfigError(fmt::format("--kv-dtype \"{}\": an empty item (give f32, f16, bf16 or int8, "
                                          "comma-separated)",
                                          text));
        }
        std::string lower(item);
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
        if (lower == "fp8" || lower == "int4") {
            throw ConfigError(fmt::format("--kv-dtype {}: kvbench memory plans it, but sweep and generate store "
                                          "only f32, f16, bf16 or int8",
                                          lower));
        }
        const KvDtype dtype = *find_kv_dtype(parse_choice(item, "--kv-dtype", {"f32", "f16", "bf16", "int8"}));
        if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) dtypes.push_back(dtype);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return dtypes;
}

}  // namespace kvbench
