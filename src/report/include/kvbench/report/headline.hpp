// The headline of a run: the answers its rows hold, in a few sentences computed from their medians.
#pragma once

#include "kvbench/report/report.hpp"

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace kvbench {

struct Headline {
    // One sentence each, when the rows hold the comparison: how much faster the cache made the
    // step (the range of the cached rows' speedups, with where each end was measured); each
    // grouping's cached step as a share of MHA's at the same point; each grouping's cache against
    // MHA's; each reduced KV type against f32 at the same point. At most four.
    std::vector<std::string> sentences;
    // Rows marked slow, left out of every figure above: their medians say more about the
    // machine than about the cache.
    std::size_t n_slow_left_out = 0;

    bool empty() const { return sentences.empty(); }
};

Headline make_headline(const std::vector<ResultRow>& rows);

// "Headline (medians of this run)" and one indented line per sentence, each wrapped within
// `width`; nothing for an empty headline.
void write_headline(std::ostream& out, const Headline& headline, std::size_t width);

}  // namespace kvbench
