// --kv-lora-rank and the other widths of latent attention: their help, and their values laid into the grid's spec.
#include "cli/latent_options.hpp"

#include "cli/value_list.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace kvbench {

namespace {

// Far past any published width (DeepSeek-V3: r = 512, q_lora_rank = 1536).
constexpr std::size_t max_latent_width = std::size_t{1} << 20;

// The model's width, or the typed one in its place.
std::size_t width_of(const std::optional<std::string>& typed, const char* option, std::size_t model_width) {
    return typed ? parse_count(*typed, option, 1, max_latent_width) : model_width;
}

}  // namespace

void add_latent_options(CLI::App& command, LatentCliOptions& options) {
    command.add_option("--kv-lora-rank", options.kv_lora_rank,
                       "Latent attention (MLA, DeepSeek): each layer caches a latent of r values and a shared "
                       "RoPE key per position for all heads (--kv-heads does not apply); needs --rope-dim, "
                       "--nope-dim and --v-head-dim (DeepSeek-V2/V3: 512, 64, 128, 128)")
        ->type_name("R");
    command.add_option("--rope-dim,--qk-rope-head-dim", options.rope_dim,
                       "Latent attention: d_r, the shared RoPE key cached beside the latent")
        ->type_name("N");
    command.add_option("--nope-dim,--qk-nope-head-dim", options.nope_dim,
                       "Latent attention: d_n, each head's key part expanded from the latent")
        ->type_name("N");
    command.add_option("--v-head-dim", options.v_head_dim,
                       "Latent attention: d_v, each head's value expanded from the latent")
        ->type_name("N");
    command.add_option("--q-lora-rank", options.q_lora_rank,
                       "Latent attention: the rank of q's own down projection (DeepSeek-V3: 1536); unset: q "
                       "projected from x directly")
        ->type_name("N");
    CLI::App* app = &command;
    command.parse_complete_callback([app, &options] {
        const CLI::Option* kv_heads = app->get_option_no_throw("--kv-heads");
        options.kv_heads_typed = kv_heads != nullptr && kv_heads->count() > 0;
    });
}

std::optional<std::string> apply_latent_options(const LatentCliOptions& options, SweepSpec& spec) {
    MlaShape mla;
    mla.kv_lora_rank = width_of(options.kv_lora_rank, "--kv-lora-rank", options.model.kv_lora_rank);
    mla.rope_dim = width_of(options.rope_dim, "--rope-dim", options.model.rope_dim);
    mla.nope_dim = width_of(options.nope_dim, "--nope-dim", options.model.nope_dim);
    mla.v_head_dim = width_of(options.v_head_dim, "--v-head-dim", options.model.v_head_dim);
    mla.q_lora_rank = width_of(options.q_lora_rank, "--q-lora-rank", options.model.q_lora_rank);
    if (mla.kv_lora_rank == 0) {
        for (const auto& [typed, option] : {std::pair{&options.rope_dim, "--rope-dim"}, {&options.nope_dim, "--nope-dim"},
                                            {&options.v_head_dim, "--v-head-dim"}, {&options.q_lora_rank, "--q-lora-rank"}}) {
            if (*typed) {
                throw ConfigError(fmt::format("{} {}: a width of latent attention, which only --kv-lora-rank turns "
                                              "on; add --kv-lora-rank R",
                                              option, **typed));
            }
        }
        return std::nullopt;
    }
    // One latent serves every head, so a list of KV head counts would run as one point and a
    // report would show one row for several asked.
    if (options.kv_heads_typed && std::set<std::size_t>(spec.kv_heads.begin(), spec.kv_heads.end()).size() > 1) {
        throw ConfigError(fmt::format("--kv-heads {}: latent attention (--kv-lora-rank) caches one latent for all "
                                      "heads, so KV head counts do not apply; leave -g out",
                                      fmt::join(spec.kv_heads, ",")));
    }
    spec.base.mla = mla;
    spec.kv_heads = {1};
    // docs/counting.md, "Latent attention (MLA)": the multi-head cache it replaces holds K of d_n + d_r
    // and V of d_v for every head.
    const std::size_t latent_width = mla.kv_lora_rank + mla.rope_dim;
    std::string savings;
    for (const std::size_t heads : spec.heads) {
        const std::size_t replaced_width = heads * (mla.nope_dim + mla.rope_dim + mla.v_head_dim);
        savings += fmt::format("{}{} values at H={} ({:.1f}x)", savings.empty() ? "" : ", ", replaced_width, heads,
                               static_cast<double>(replaced_width) / static_cast<double>(latent_width));
    }
    return fmt::format("latent attention: the cache holds r + d_r = {} values per position and layer (kv_bytes), "
                       "where the multi-head cache it replaces would hold H·(d_n + d_r + d_v) = {}",
                       latent_width, savings);
}

}  // namespace kvbench
