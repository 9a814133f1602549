// --verify's tolerance by cache type and the tally of a run's verifications.
#include "kvbench/measure/verification.hpp"

#include "kvbench/engine/kv_convert.hpp"

#include <algorithm>

namespace kvbench {

double verify_tolerance(const ModelConfig& config) {
    return kv_equivalence_tolerance(config.key_dtype(), config.value_dtype(), config.head_dim());
}

double f32_verify_tolerance() {
    ModelConfig f32_config;
    f32_config.set_kv_dtypes(KvDtype::f32, KvDtype::f32);
    return verify_tolerance(f32_config);
}

bool VerifyTally::add(const ModelConfig& config, double rel_error) {
    const double tolerance = verify_tolerance(config);
    if (config.key_dtype() == KvDtype::f32 && config.value_dtype() == KvDtype::f32) {
        ++n_f32;
        worst_f32_error = std::max(worst_f32_error, rel_error);
    } else {
        ++n_reduced;
        worst_reduced_fraction = std::max(worst_reduced_fraction, rel_error / tolerance);
    }
    return rel_error < tolerance;
}

}  // namespace kvbench
