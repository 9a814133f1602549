// --verify's verdicts: each point's or step's error against the tolerance of its cache type, and the tally the closing line reports.
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstddef>

namespace kvbench {

// The relative error a cached step over `config`'s cache type may differ from the uncached
// forward by (docs/model.md#equivalence); the engine defines it, this is its one call.
double verify_tolerance(const ModelConfig& config);
// The tolerance of an f32 cache, the equivalence's own, as the closing line quotes it.
double f32_verify_tolerance();

// What --verify found over a run. A reduced-precision cache is held to its type's tolerance
// (docs/model.md, "KV-cache element types") and reported apart from the f32 points.
struct VerifyTally {
    std::size_t n_f32 = 0;              // verifications with an f32 cache
    double worst_f32_error = 0;         // their worst relative error
    std::size_t n_reduced = 0;          // verifications with a reduced-precision cache
    double worst_reduced_fraction = 0;  // their worst error as a fraction of its tolerance

    // Counts one verification of a step over `config`'s cache. Returns whether it is within
    // the tolerance, written so that a NaN error is not.
    bool add(const ModelConfig& config, double rel_error);
};

}  // namespace kvbench
