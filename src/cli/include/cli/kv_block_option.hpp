// --kv-block of `sweep`: the positions per block of a paged KV cache, an axis of the grid.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace kvbench {

// "0,16,32,128": whole numbers from 0 (the contiguous cache) to max_kv_block, in the order
// written, duplicates dropped; no ranges or suffixes (parse_value_list's lists start at 1).
// Throws ConfigError naming --kv-block on an empty item or a value that is not a whole number
// in range.
std::vector<std::size_t> parse_kv_blocks(std::string_view text);

inline constexpr const char* kv_block_help =
    "Paged KV cache: positions per block (LIST; 0, the default, is one contiguous array per KV head). "
    "Each KV head's cache is cut into blocks reached through a block table, placed out of order by an "
    "allocator seeded from --seed; rows report kv_block, and bytes and kv_bytes count the tables "
    "(docs/model.md, \"Paged caches\")";

}  // namespace kvbench
