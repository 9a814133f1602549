// --seq-lens patterns and --seq-dist draws: the contexts of a ragged batch.
#include "kvbench/measure/seq_dist.hpp"

#include "kvbench/engine/ascii_case.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/rng.hpp"

#include <boost/math/distributions/lognormal.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kvbench {

namespace {

// Its own stream of the run's seed, apart from the weights' and inputs'.
constexpr std::uint64_t seq_dist_stream = 0x5e9d157ull;

[[noreturn]] void bad_dist(const std::string& text, const std::string& rule) {
    throw ConfigError(fmt::format("--seq-dist {}: {} (e.g. uniform:128:4096 or lognormal:200:30000)", text, rule));
}

std::uint32_t parse_bound(const std::string& text, std::string_view field, const char* name) {
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || error != std::errc{} || end != field.data() + field.size() || value < 1 ||
        value > max_ragged_seq_len) {
        bad_dist(text, fmt::format("{} must be a whole number from 1 to {}", name, max_ragged_seq_len));
    }
    return static_cast<std::uint32_t>(value);
}

// Uniform in (0, 1), never 0 or 1: the top 53 bits of a draw, centred in their interval.
double open_unit(Rng& rng) { return (static_cast<double>(rng.next_u64() >> 11) + 0.5) / 9007199254740992.0; }

}  // namespace

SeqDist parse_seq_dist(const std::string& text) {
    const std::size_t first = text.find(':');
    const std::size_t second = first == std::string::npos ? first : text.find(':', first + 1);
    if (second == std::string::npos || text.find(':', second + 1) != std::string::npos) {
        bad_dist(text, "write KIND:LO:HI");
    }
    // In any case, as the CLI's other choices: UNIFORM is uniform.
    const std::string kind = lowercase(text.substr(0, first));
    SeqDist dist;
    if (kind == "uniform") {
        dist.kind = SeqDistKind::uniform;
    } else if (kind == "lognormal") {
        dist.kind = SeqDistKind::lognormal;
    } else {
        bad_dist(text, fmt::format("unknown distribution '{}'; give uniform or lognormal", kind));
    }
    const std::string_view view(text);
    dist.low = parse_bound(text, view.substr(first + 1, second - first - 1), "LO");
    dist.high = parse_bound(text, view.substr(second + 1), "HI");
    if (dist.low > dist.high) bad_dist(text, fmt::format("LO {} must be at most HI {}", dist.low, dist.high));
    return dist;
}

std::vector<std::uint32_t> draw_seq_lens(const SeqDist& dist, std::size_t n_batch, std::uint64_t seed) {
    Rng rng(seed ^ seq_dist_stream);
    std::vector<std::uint32_t> seq_lens(n_batch);
    const double low = dist.low, high = dist.high;
    for (std::uint32_t& n : seq_lens) {
        const double u = open_unit(rng);
        double drawn = low;
        if (dist.low == dist.high) {
            drawn = low;
        } else if (dist.kind == SeqDistKind::uniform) {
            drawn = std::floor(low + u * (high - low + 1));
        } else {
            // Boost.Math's quantile: the same value for the same u wherever it is built.
            const boost::math::lognormal shape((std::log(low) + std::log(high)) / 2, (std::log(high) - std::log(low)) / 4);
            drawn = std::round(boost::math::quantile(shape, u));
        }
        n = static_cast<std::uint32_t>(std::clamp(drawn, low, high));
    }
    return seq_lens;
}

std::vector<std::uint32_t> repeat_seq_lens(const std::vector<std::uint32_t>& pattern, std::size_t n_batch) {
    if (pattern.empty() || n_batch % pattern.size() != 0) {
        throw ConfigError(fmt::format("--seq-lens has {} values, which do not divide --batch {}: the pattern repeats "
                                      "over the batch, so give a batch of a multiple of {} (or one context per "
                                      "sequence)",
                                      pattern.size(), n_batch, pattern.size()));
    }
    std::vector<std::uint32_t> seq_lens(n_batch);
    for (std::size_t b = 0; b < n_batch; ++b) seq_lens[b] = pattern[b % pattern.size()];
    return seq_lens;
}

}  // namespace kvbench
