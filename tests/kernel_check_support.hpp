// --check on a config's fast kernels over a seeded cache, each against its naive twin: the one
// way the feature tests (ragged batches, shared prefixes) hold their kernels to their twins.
#pragma once

#include "kvbench/engine/decoder.hpp"
#include "kvbench/engine/kernel_check.hpp"
#include "kvbench/engine/kv_cache.hpp"
#include "kvbench/engine/weights.hpp"

#include <doctest/doctest.h>

#include <vector>

namespace kvbench::test {

inline void check_kernels_against_twins(const ModelConfig& config, std::uint64_t seed = 9) {
    const ModelWeights weights = make_weights(config, seed);
    const std::vector<float> prompt = make_inputs(config, seed);
    const std::vector<float> step_in = make_step_inputs(config, seed);
    KvCache cache(config, config.seq_len);
    fill_cache_seeded(config, cache, config.seq_len - 1, seed);
    for (const KernelCheck& check : check_kernels(config, weights, {step_in.data(), prompt.data(), &cache, 2}, fast_kernels)) {
        INFO(check.kernel);
        CHECK(check.rel_error < kernel_check_tolerance);
    }
}

}  // namespace kvbench::test
