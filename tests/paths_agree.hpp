// The two checks every attention variant's test makes (docs/model.md, "Equivalence"): the
// cached step equals the uncached forward at each context, and the uncached forward equals the
// model written as plain loops.
#pragma once

#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/reference.hpp"
#include "kvbench/engine/weights.hpp"
#include "kvbench/measure/equivalence.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace kvbench::test {


inline void check_paths_agree(const ModelConfig& config, const ModelWeights& weights, std::uint64_t seed,
                              std::initializer_list<std::size_t> contexts, std::size_t n_threads) {
    for (const std::size_t n : contexts) {
        INFO(describe(config) << " n=" << n);
        CHECK(verify_at_context(config, weights, seed, n, fast_kernels, verify_reference_kernels(fast_kernels),
                                n_threads) < spec_tolerance);
    }
    const std::vector<float> inputs = make_inputs(config, seed + 1);
    std::vector<float> out(inputs.size());
    ForwardScratch scratch(config, n_threads, 16);
    forward_full(config, weights, inputs.data(), out.data(), scratch);
    CHECK(relative_error(out, forward_reference(config, weights, inputs)) < spec_tolerance);
}

}  // namespace kvbench::test
