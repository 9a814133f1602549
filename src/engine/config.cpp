// Validation and naming of a ModelConfig.
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>

#include <vector>

namespace kvbench {

namespace {

std::string divisors_of(std::size_t n) {
    std::vector<std::size_t> divisors;
    for (std::size_t d = 1; d <= n; ++d) {
        if (n % d == 0) divisors.push_back(d);
    }
    if (divisors.size() == 1) return fmt::format("{}", divisors.front());
    std::string text;
    for (std::size_t i = 0; i + 1 < divisors.size(); ++i) {
        text += fmt::format("{}{}", i == 0 ? "" : ", ", divisors[i]);
    }
    return text + fmt::format(" or {}", divisors.back());
}

void require_positive(std::size_t value, const char* option) {
    if (value == 0) throw ConfigError(fmt::format("{} 0 must be at least 1", option));
}

}  // namespace

void validate(const ModelConfig& config) {
    require_positive(config.n_batch, "--batch");
    require_positive(config.seq_len, "--seq");
    require_positive(config.model_dim, "--dim");
    require_positive(config.n_heads, "--heads");
    require_positive(config.n_kv_heads, "--kv-heads");
    require_positive(config.n_layers, "--layers");
    // H·dh is D without --head-dim: bounding it as the CLI bounds --dim keeps every count of
    // docs/counting.md within the range it has without --head-dim.
    if (config.explicit_head_dim != 0 && config.explicit_head_dim > max_q_dim / config.n_heads) {
        throw ConfigError(fmt::format("--head-dim {}: --heads {} x --head-dim must be at most {}",
                                      config.explicit_head_dim, config.n_heads, max_q_dim));
    }
    if (config.explicit_head_dim == 0 && config.model_dim % config.n_heads != 0) {
        throw ConfigError(fmt::format("--heads {} must divide --dim {} (try {}, or give --head-dim)",
                                      config.n_heads, config.model_dim, divisors_of(config.model_dim)));
    }
    if (config.n_heads % config.n_kv_heads != 0) {
        throw ConfigError(fmt::format("--kv-heads {} must divide --heads {} (try {})",
                                      config.n_kv_heads, config.n_heads,
                                      divisors_of(config.n_heads)));
    }
    if (!kv_dtype_info(config.kv_dtype).stored_by_engine) {
        throw ConfigError(fmt::format("--kv-dtype {}: kvbench memory plans it, but the engine stores only f32, "
                                      "f16, bf16 or int8",
                                      kv_dtype_info(config.kv_dtype).name));
    }
}

std::string grouping_label(std::size_t n_heads, std::size_t n_kv_heads) {
    if (n_kv_heads == n_heads) return "MHA";
    if (n_kv_heads == 1) return "MQA";
    return fmt::format("GQA-{}", n_kv_heads);
}

std::string describe(const ModelConfig& config) {
    const std::string head_dim =
        config.explicit_head_dim == 0 ? "" : fmt::format(" dh={}", config.explicit_head_dim);
    const std::string kv_dtype =
        config.kv_dtype == KvDtype::f32 ? "" : fmt::format(" kv={}", kv_dtype_info(config.kv_dtype).name);
    return fmt::format("B={} N={} D={} H={}{} G={} L={}{}", config.n_batch, config.seq_len, config.model_dim,
                       config.n_heads, head_dim, config.n_kv_heads, config.n_layers, kv_dtype);
}

}  // namespace kvbench
