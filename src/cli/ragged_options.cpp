// --seq-lens and --seq-dist: their help, and the ragged batch they lay into the grid's spec.
#include "cli/ragged_options.hpp"

#include "cli/value_list.hpp"

namespace kvbench {

void add_ragged_options(CLI::App& command, RaggedCliOptions& options) {
    CLI::Option* seq = command.get_option("--seq");
    CLI::Option* seq_lens =
        command
            .add_option("--seq-lens", options.seq_lens,
                        "A ragged batch in place of --seq: each sequence's own context, a pattern repeated over "
                        "the batch (--seq-lens 200,30000 -b 8: four of each; B must be a multiple of its length)")
            ->type_name("N1,N2,...")
            ->excludes(seq);
    command
        .add_option("--seq-dist", options.seq_dist,
                    "A ragged batch in place of --seq: each sequence's context drawn from --seed, uniform:LO:HI "
                    "(every length alike) or lognormal:LO:HI (many short, a few long; LO and HI two deviations "
                    "out), for each --batch")
        ->type_name("KIND:LO:HI")
        ->excludes(seq)
        ->excludes(seq_lens);
    command
        .add_option("--query-tokens", options.query_tokens,
                    "Tokens each sequence adds in one cached step, causal among themselves (speculative "
                    "decoding's verification of a draft of Q tokens, chunked decode); a list; rows report "
                    "latency_us_per_token (docs/model.md)")
        ->type_name("Q");
}

void apply_ragged_options(const RaggedCliOptions& options, std::uint64_t seed, SweepSpec& spec) {
    if (options.seq_lens) {
        const std::string& text = *options.seq_lens;
        std::size_t at = 0;
        while (at <= text.size()) {
            const std::size_t end = std::min(text.find(',', at), text.size());
            spec.seq_lens.push_back(static_cast<std::uint32_t>(
                parse_count(std::string_view(text).substr(at, end - at), "--seq-lens", 1, max_ragged_seq_len)));
            at = end + 1;
        }
    }
    if (options.query_tokens) spec.query_tokens = parse_value_list(*options.query_tokens, "--query-tokens", 1024);
    if (options.seq_dist) {
        spec.seq_dist = parse_seq_dist(*options.seq_dist);
        spec.seq_dist_seed = seed;
    }
}

}  // namespace kvbench
