// Parsing --kv-dtype for the commands that store a cache.
#include "cli/kv_dtype_option.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace kvbench {

namespace {

// One type's name, in any case; fp8 is read as e4m3 (the planner's fp8 has its bytes).
KvDtype parse_stored_kv_dtype(std::string_view item, std::string_view text) {
    if (item.empty()) {
        throw ConfigError(fmt::format("--kv-dtype \"{}\": an empty item (give f32, f16, bf16, int8, e4m3, e5m2, q8_0 "
                                      "or q4_0, comma-separated, a pair as K/V)",
                                      text));
    }
    const std::string lower = lowercase(item);
    if (lower == "fp8") return KvDtype::e4m3;
    if (lower == "int4") {
        throw ConfigError("--kv-dtype int4: kvbench memory plans it, but sweep and generate store only f32, f16, "
                          "bf16, int8, e4m3, e5m2, q8_0 or q4_0 (q4_0 is 4-bit with a scale per 32 values)");
    }
    return *find_kv_dtype(parse_choice(item, "--kv-dtype", {"f32", "f16", "bf16", "int8", "e4m3", "e5m2", "q8_0", "q4_0"}));
}

}  // namespace

std::vector<KvDtypePair> parse_stored_kv_dtypes(std::string_view text) {
    std::vector<KvDtypePair> pairs;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string_view item = text.substr(start, comma == std::string_view::npos ? text.size() - start
                                                                                          : comma - start);
        const std::size_t slash = item.find('/');
        KvDtypePair pair;
        pair.key = parse_stored_kv_dtype(item.substr(0, slash), text);
        pair.value = slash == std::string_view::npos ? pair.key : parse_stored_kv_dtype(item.substr(slash + 1), text);
        if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return pairs;
}

}  // namespace kvbench
