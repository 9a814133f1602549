// --shared-prefix: its help, the list of prefix lengths it lays into the grid's spec, and its
// rule against a list of contexts.
#include "cli/shared_prefix_option.hpp"

#include "cli/value_list.hpp"
#include "kvbench/engine/config.hpp"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace kvbench {

void add_shared_prefix_option(CLI::App& command, std::optional<std::string>& text, std::string_view whole) {
    command
        .add_option("--shared-prefix", text,
                    fmt::format("Positions the batch's sequences share, a system prompt: cached once and read once "
                                "per step for all of them (docs/model.md); a list of positions or percentages of {} "
                                "(0,2048 or 0,50%); 0 shares nothing",
                                whole))
        ->type_name("P");
}

std::vector<SharedPrefixLength> parse_shared_prefixes(const std::string& text) {
    std::vector<SharedPrefixLength> prefixes;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        std::string_view item = std::string_view(text).substr(at, end - at);
        SharedPrefixLength prefix;
        if (!item.empty() && item.back() == '%') {
            item.remove_suffix(1);
            prefix.percent = true;
            // 100% would leave no position of a sequence's own, the new token's.
            prefix.value = static_cast<std::size_t>(parse_whole_number(item, "--shared-prefix (a percentage of N)", 0, 99));
        } else if (item != "0") {  // parse_count's suffixes (4K) for positions, and 0 for none
            prefix.value = parse_count(item, "--shared-prefix", 1, std::size_t{1} << 30);
        }
        prefixes.push_back(prefix);
        at = end + 1;
    }
    return prefixes;
}

void require_prefix_below_every_seq(std::uint64_t positions, const std::vector<std::uint64_t>& seqs) {
    const std::uint64_t shortest = *std::min_element(seqs.begin(), seqs.end());
    if (positions >= shortest) {
        throw ConfigError(fmt::format("--shared-prefix {} must be less than every --seq, {} the shortest: each "
                                      "sequence holds the prefix and its own tokens after it",
                                      positions, shortest));
    }
}

}  // namespace kvbench
