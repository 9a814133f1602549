// parse_kv_blocks(): --kv-block's list, where 0 (contiguous) is a value as any other.
#include "cli/kv_block_option.hpp"

#include "cli/value_list.hpp"

#include "kvbench/engine/config.hpp"

#include <algorithm>

namespace kvbench {

std::vector<std::size_t> parse_kv_blocks(std::string_view text) {
    std::vector<std::size_t> blocks;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        const auto block = static_cast<std::size_t>(
            parse_whole_number(text.substr(at, end - at), "--kv-block", 0, max_kv_block));
        if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
        at = end + 1;
    }
    return blocks;
}

}  // namespace kvbench
