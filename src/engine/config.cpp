// Validation and naming of a ModelConfig.
#include "kvbench/engine/config.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
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

void validate_layer_parts(const ModelConfig& config) {
    const MoeShape& moe = config.moe;
    if (config.block == BlockKind::attention) {
        if (config.ffn_dim != 0) throw ConfigError(fmt::format("--ffn-dim {} needs --block full", config.ffn_dim));
        if (config.has_experts()) throw ConfigError(fmt::format("--experts {} needs --block full", moe.n_experts));
    }
    if (config.has_experts()) {
        if (moe.n_active == 0 || moe.n_active > moe.n_experts) {
            throw ConfigError(fmt::format("--experts-active {} must be between 1 and --experts {}", moe.n_active,
                                          moe.n_experts));
        }
        if (moe.expert_dim == 0) throw ConfigError("--expert-dim must be given with --experts");
        if (moe.n_dense_layers > config.n_layers) {
            throw ConfigError(fmt::format("{} dense layers before the experts, more than --layers {}",
                                          moe.n_dense_layers, config.n_layers));
        }
    } else if (moe.n_active != 0 || moe.n_shared != 0 || moe.expert_dim != 0 || moe.n_dense_layers != 0) {
        throw ConfigError("--experts-active, --shared-experts and --expert-dim need --experts");
    }
    const bool dense_mlp_somewhere = !config.has_experts() || moe.n_dense_layers != 0;
    if (config.block == BlockKind::full && dense_mlp_somewhere && config.ffn_dim == 0) {
        throw ConfigError("--block full needs --ffn-dim, the width of its MLP");
    }
    if (!config.layer_windows.empty() && config.layer_windows.size() != config.n_layers) {
        throw ConfigError(fmt::format("{} layer windows for --layers {}: give one per layer",
                                      config.layer_windows.size(), config.n_layers));
    }
    if (config.is_latent() && (config.mla.rope_dim == 0 || config.mla.nope_dim == 0 || config.mla.v_head_dim == 0)) {
        throw ConfigError(fmt::format("--kv-lora-rank {} needs --rope-dim, --nope-dim and --v-head-dim",
                                      config.mla.kv_lora_rank));
    }
    if (config.is_latent() && config.block == BlockKind::full && config.mla.rope_dim % 2 != 0) {
        throw ConfigError(fmt::format("--rope-dim {} must be even: RoPE turns pairs of values", config.mla.rope_dim));
    }
}

void validate_seq_lens(const ModelConfig& config) {
    require_positive(config.n_query_tokens, "--query-tokens");
    if (config.is_ragged()) {
        if (config.seq_lens.size() != config.n_batch) {
            throw ConfigError(fmt::format("--seq-lens has {} values for --batch {}: give one context per sequence",
                                          config.seq_lens.size(), config.n_batch));
        }
        if (std::find(config.seq_lens.begin(), config.seq_lens.end(), 0u) != config.seq_lens.end()) {
            throw ConfigError("--seq-lens 0: every sequence's context must be at least 1");
        }
        const std::uint32_t longest = *std::max_element(config.seq_lens.begin(), config.seq_lens.end());
        if (longest != config.seq_len) {
            throw ConfigError(fmt::format("--seq {} must be the longest of --seq-lens, {}", config.seq_len, longest));
        }
    }
    const std::size_t shortest = config.shortest_seq_len();
    if (config.n_query_tokens > shortest) {
        throw ConfigError(fmt::format("--query-tokens {} must be at most the shortest context, {}: the step's tokens "
                                      "are the last Q of each sequence",
                                      config.n_query_tokens, shortest));
    }
}

// docs/model.md, "Shared prefixes": one copy of the first P positions serves every sequence, so
// each must hold them all, the shortest of a ragged batch too, and the step's own tokens come
// after them.
void validate_shared_prefix(const ModelConfig& config) {
    const std::size_t prefix = config.shared_prefix;
    if (prefix == 0) return;
    const std::size_t shortest = config.shortest_seq_len();
    if (prefix + config.n_query_tokens > shortest) {
        const std::string context = config.is_ragged() ? fmt::format("the ragged batch's shortest context {}", shortest)
                                                       : fmt::format("--seq {}", shortest);
        throw ConfigError(fmt::format("--shared-prefix {} must be at most {} less the step's {} new token(s), "
                                      "{}: the new tokens are each sequence's own (try --shared-prefix {})",
                                      prefix, context, config.n_query_tokens, shortest - config.n_query_tokens,
                                      shortest / 2));
    }
}

}  // namespace

void validate(const ModelConfig& config) {
    require_positive(config.n_batch, "--batch");
    require_positive(config.seq_len, "--seq");
    require_positive(config.model_dim, "--dim");
    require_positive(config.n_heads, "--heads");
    require_positive(config.n_kv_heads, "--kv-heads");
    require_positive(config.n_layers, "--layers");
    const auto require_at_most = [](std::size_t value, std::size_t most, const char* option) {
        if (value > most) throw ConfigError(fmt::format("{} {} must be at most {}", option, value, most));
    };
    require_at_most(config.n_layers, max_layers, "--layers");
    require_at_most(config.model_dim, max_q_dim, "--dim");
    require_at_most(config.n_heads, max_q_dim, "--heads");
    require_at_most(config.ffn_dim, max_ffn_dim, "--ffn-dim");
    require_at_most(config.moe.n_experts, max_experts, "--experts");
    require_at_most(config.moe.n_shared, max_experts, "--shared-experts");
    require_at_most(config.moe.expert_dim, max_ffn_dim, "--expert-dim");
    if (config.is_latent()) {
        // Each head's widths as H·dh is bounded: the absorbed and expanded products stay in range.
        const MlaShape& m = config.mla;
        require_at_most(m.kv_lora_rank, max_q_dim, "--kv-lora-rank");
        require_at_most(m.q_lora_rank, max_q_dim, "--q-lora-rank");
        if (std::max(m.rope_dim + m.nope_dim, m.v_head_dim) > max_q_dim / config.n_heads) {
            throw ConfigError(fmt::format("--heads {} x (--rope-dim + --nope-dim) and x --v-head-dim must each be at "
                                          "most {}",
                                          config.n_heads, max_q_dim));
        }
    }
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
    for (const KvDtype dtype : {config.key_dtype(), config.value_dtype()}) {
        if (!kv_dtype_info(dtype).stored_by_engine) {
            throw ConfigError(fmt::format("--kv-dtype {}: kvbench memory plans it, but the engine stores only f32, "
                                          "f16, bf16, int8, e4m3, e5m2, q8_0 or q4_0",
                                          kv_dtype_info(dtype).name));
        }
    }
    if (config.is_latent() && config.key_dtype() != config.value_dtype()) {
        throw ConfigError(fmt::format("--kv-dtype {}/{}: a latent cache's values are part of its keys, so they "
                                      "share one type (give one type)",
                                      kv_dtype_info(config.key_dtype()).name, kv_dtype_info(config.value_dtype()).name));
    }
    if (config.kv_block > max_kv_block) {
        throw ConfigError(fmt::format("--kv-block {}: a block holds at most {} positions (0 for the contiguous cache)",
                                      config.kv_block, max_kv_block));
    }
    if (config.is_paged() && config.is_latent()) {
        throw ConfigError(fmt::format("--kv-block {}: a latent cache is not paged (its step reads the latent "
                                      "through its own kernel); give --kv-block 0",
                                      config.kv_block));
    }
    validate_layer_parts(config);
    validate_seq_lens(config);
    validate_shared_prefix(config);
}

std::vector<std::uint32_t> layer_windows_for(std::uint32_t window, const std::string& pattern, std::size_t n_layers) {
    if (window == 0) return {};
    if (pattern == "all") return std::vector<std::uint32_t>(n_layers, window);
    if (pattern.empty() || pattern.find_first_not_of("LG") != std::string::npos) {
        throw ConfigError(fmt::format("--window-layers {}: give `all` or a unit of L (local) and G (global) "
                                      "layers that repeats over the layers, e.g. LG or LLLLLG",
                                      pattern.empty() ? "''" : pattern));
    }
    std::vector<std::uint32_t> windows(n_layers);
    for (std::size_t layer = 0; layer < n_layers; ++layer) {
        windows[layer] = pattern[layer % pattern.size()] == 'L' ? window : 0;
    }
    return windows;
}

std::string window_pattern(const ModelConfig& config) {
    const std::vector<std::uint32_t>& windows = config.layer_windows;
    if (windows.empty()) return "";
    std::string letters;
    for (const std::uint32_t window : windows) letters += window != 0 ? 'L' : 'G';
    if (letters.find('G') == std::string::npos) return "all";
    if (letters.find('L') == std::string::npos) return "";
    for (std::size_t unit = 1; unit < letters.size(); ++unit) {
        bool repeats = true;
        for (std::size_t i = unit; i < letters.size() && repeats; ++i) repeats = letters[i] == letters[i % unit];
        if (repeats) return letters.substr(0, unit);
    }
    return letters;
}

std::string grouping_name(const ModelConfig& config) {
    return config.is_latent() ? "MLA" : grouping_label(config.n_heads, config.n_kv_heads);
}

std::string grouping_label(std::size_t n_heads, std::size_t n_kv_heads) {
    if (n_kv_heads == n_heads) return "MHA";
    if (n_kv_heads == 1) return "MQA";
    return fmt::format("GQA-{}", n_kv_heads);
}

std::string describe(const ModelConfig& config) {
    const std::string head_dim =
        config.explicit_head_dim == 0 ? "" : fmt::format(" dh={}", config.explicit_head_dim);
    std::string parts;
    if (config.is_ragged()) {
        parts += fmt::format(" ragged={}..{}", *std::min_element(config.seq_lens.begin(), config.seq_lens.end()),
                             config.seq_len);
    }
    if (config.n_query_tokens != 1) parts += fmt::format(" Q={}", config.n_query_tokens);
    if (config.has_shared_prefix()) parts += fmt::format(" P={}", config.shared_prefix);
    if (config.block == BlockKind::full && config.ffn_dim != 0) parts += fmt::format(" full F={}", config.ffn_dim);
    if (config.block == BlockKind::full && config.ffn_dim == 0) parts += " full";
    if (config.has_experts()) {
        parts += fmt::format(" E={}/{} S={} Fe={}", config.moe.n_experts, config.moe.n_active, config.moe.n_shared,
                             config.moe.expert_dim);
    }
    if (config.is_latent()) parts += fmt::format(" mla r={} dr={}", config.mla.kv_lora_rank, config.mla.rope_dim);
    const std::string pattern = window_pattern(config);
    if (!pattern.empty()) {
        std::uint32_t window = 0;
        for (const std::uint32_t w : config.layer_windows) window = std::max(window, w);
        parts += fmt::format(" W={}:{}", window, pattern);
    }
    if (config.attention_sinks) parts += " sinks";
    if (config.weight_dtype != WeightDtype::f32) parts += fmt::format(" w={}", weight_dtype_info(config.weight_dtype).name);
    if (config.has_reduced_cache()) {
        parts += fmt::format(" kv={}", kv_dtype_name(config.key_dtype(), config.value_dtype()));
    }
    if (config.is_paged()) parts += fmt::format(" kv-block={}", config.kv_block);
    return fmt::format("B={} N={} D={} H={}{} G={} L={}{}", config.n_batch, config.seq_len, config.model_dim,
                       config.n_heads, head_dim, config.n_kv_heads, config.n_layers, parts);
}

ModelConfig with_longest_context(const ModelConfig& config, std::size_t seq_len) {
    ModelConfig at = config;
    at.seq_len = seq_len;
    for (std::size_t b = 0; b < at.seq_lens.size(); ++b) {
        const std::size_t lag = config.seq_lag_of(b);
        if (seq_len <= lag) {
            throw std::invalid_argument(fmt::format("a context of {} leaves sequence {}, {} positions behind, none",
                                                    seq_len, b, lag));
        }
        at.seq_lens[b] = static_cast<std::uint32_t>(seq_len - lag);
    }
    return at;
}

std::string format_seq_lens(const std::vector<std::uint32_t>& seq_lens) {
    return fmt::format("{}", fmt::join(seq_lens, " "));
}

std::vector<std::uint32_t> parse_seq_lens(const std::string& text) {
    std::vector<std::uint32_t> seq_lens;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        const std::string token = text.substr(at, end - at);
        if (token.empty() || token.size() > 9 || token.find_first_not_of("0123456789") != std::string::npos) {
            throw ConfigError(fmt::format("seq_lens '{}': expected contexts separated by spaces", text));
        }
        seq_lens.push_back(static_cast<std::uint32_t>(std::stoul(token)));
        at = end + 1;
    }
    return seq_lens;
}

}  // namespace kvbench
