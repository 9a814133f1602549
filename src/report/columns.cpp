// The CSV/JSON column list, in one place: name and value of every column.
#include "kvbench/report/columns.hpp"

#include "kvbench/engine/config_variant.hpp"

#include <string>

namespace kvbench {

namespace {

CellValue count(std::size_t n) { return static_cast<std::uint64_t>(n); }
CellValue microseconds(double ns) { return Microseconds{ns / 1000}; }
CellValue optional_real(const std::optional<double>& value) {
    if (!value) return std::monostate{};
    return *value;
}

}  // namespace

const std::vector<RowColumn>& row_columns() {
    static const std::vector<RowColumn> columns{
        // docs/csv.md#contract-columns, in its order.
        {"path", [](const ResultRow& r) -> CellValue { return std::string(path_name(r.path)); }},
        {"batch", [](const ResultRow& r) { return count(r.config.n_batch); }},
        {"seq", [](const ResultRow& r) { return count(r.config.seq_len); }},
        {"dim", [](const ResultRow& r) { return count(r.config.model_dim); }},
        {"heads", [](const ResultRow& r) { return count(r.config.n_heads); }},
        {"kv_heads", [](const ResultRow& r) { return count(r.config.n_kv_heads); }},
        {"head_dim", [](const ResultRow& r) { return count(r.config.head_dim()); }},
        {"layers", [](const ResultRow& r) { return count(r.config.n_layers); }},
        {"threads", [](const ResultRow& r) { return count(r.n_threads); }},
        {"kv_dtype", [](const ResultRow& r) -> CellValue { return r.kv_dtype; }},
        {"flops", [](const ResultRow& r) -> CellValue { return r.cost.flops; }},
        {"bytes", [](const ResultRow& r) -> CellValue { return r.cost.bytes; }},
        {"kv_bytes", [](const ResultRow& r) -> CellValue { return r.cost.kv_bytes; }},
        {"reps", [](const ResultRow& r) { return count(r.stats.n_samples); }},
        {"latency_us_median", [](const ResultRow& r) { return microseconds(r.stats.median_ns); }},
        {"latency_us_min", [](const ResultRow& r) { return microseconds(r.stats.min_ns); }},
        {"latency_us_max", [](const ResultRow& r) { return microseconds(r.stats.max_ns); }},
        {"gflops", [](const ResultRow& r) -> CellValue { return r.gflops; }},
        {"gb_per_s", [](const ResultRow& r) -> CellValue { return r.gbps; }},
        {"roofline_pct", [](const ResultRow& r) { return optional_real(r.roofline_pct); }},
        {"speedup", [](const ResultRow& r) { return optional_real(r.speedup); }},
        // Extras.
        {"grouping",
         [](const ResultRow& r) -> CellValue {
             return grouping_name(r.config);
         }},
        {"variant", [](const ResultRow& r) -> CellValue { return variant_of(r.config); }},
        // A ragged batch's contexts, one per sequence (docs/csv.md); empty for a uniform batch.
        {"seq_lens", [](const ResultRow& r) -> CellValue { return format_seq_lens(r.config.seq_lens); }},
        // Q, the tokens each sequence adds in the cached step, and the step's median over them.
        {"query_tokens", [](const ResultRow& r) { return count(r.config.n_query_tokens); }},
        {"latency_us_per_token",
         [](const ResultRow& r) {
             const double tokens = r.path == DecodePath::cached ? static_cast<double>(r.config.n_query_tokens) : 1.0;
             return microseconds(r.stats.median_ns / tokens);
         }},
        // P, the positions the batch's sequences share (docs/csv.md); 0 for none.
        {"shared_prefix", [](const ResultRow& r) { return count(r.config.shared_prefix); }},
        {"cache_state", [](const ResultRow& r) -> CellValue { return r.cache_state; }},
        {"latency_us_p90", [](const ResultRow& r) { return microseconds(r.stats.p90_ns); }},
        {"latency_us_mean", [](const ResultRow& r) { return microseconds(r.stats.mean_ns); }},
        // docs/csv.md#conventions: a name ending in _pct is a percentage, 0 to 100.
        {"latency_cv_pct", [](const ResultRow& r) -> CellValue { return 100 * r.stats.cv; }},
        {"latency_mdape_pct", [](const ResultRow& r) -> CellValue { return 100 * r.stats.mdape; }},
        {"verify_rel_error", [](const ResultRow& r) { return optional_real(r.verify_rel_error); }},
        {"kv_rel_error", [](const ResultRow& r) { return optional_real(r.kv_rel_error); }},
        {"block",
         [](const ResultRow& r) -> CellValue {
             return std::string(r.config.block == BlockKind::full ? "full" : "attn");
         }},
        {"ffn_dim", [](const ResultRow& r) { return count(r.config.ffn_dim); }},
        {"weight_dtype",
         [](const ResultRow& r) -> CellValue { return std::string(weight_dtype_info(r.config.weight_dtype).name); }},
        {"experts_read",
         [](const ResultRow& r) -> CellValue {
             if (!r.experts_read) return std::monostate{};
             return *r.experts_read;
         }},
        {"weight_rel_error", [](const ResultRow& r) { return optional_real(r.weight_rel_error); }},
        {"fits_in_llc", [](const ResultRow& r) -> CellValue { return r.fits_in_llc; }},
        {"flops_executed",
         [](const ResultRow& r) -> CellValue {
             if (!r.flops_executed) return std::monostate{};
             return *r.flops_executed;
         }},
        {"noisy", [](const ResultRow& r) -> CellValue { return r.noisy; }},
        {"flags", [](const ResultRow& r) -> CellValue { return row_flags(r); }},
        {"reps_policy", [](const ResultRow& r) -> CellValue { return r.reps_policy; }},
        // docs/csv.md#reproducibility-columns.
        {"seed", [](const ResultRow& r) -> CellValue { return r.seed; }},
        {"warmup", [](const ResultRow& r) { return count(r.n_warmup); }},
        {"roofline_peak_gflops", [](const ResultRow& r) { return optional_real(r.roofline_peak_gflops); }},
        {"roofline_peak_gb_per_s", [](const ResultRow& r) { return optional_real(r.roofline_peak_gbps); }},
        {"roofline_source", [](const ResultRow& r) -> CellValue { return r.roofline_source; }},
        // The cache's key and value types apart; kv_dtype names both ("q8_0/q4_0") or their one type.
        {"k_dtype",
         [](const ResultRow& r) -> CellValue { return std::string(kv_dtype_info(r.config.key_dtype()).name); }},
        {"v_dtype",
         [](const ResultRow& r) -> CellValue { return std::string(kv_dtype_info(r.config.value_dtype()).name); }},
        // A paged cache's positions per block, 0 for the contiguous cache (docs/model.md, "Paged caches").
        {"kv_block", [](const ResultRow& r) { return count(r.config.kv_block); }},
    };
    return columns;
}

const std::vector<EnvironmentColumn>& environment_columns() {
    static const std::vector<EnvironmentColumn> columns{
        {"tool_version", [](const Environment& e) { return e.tool_version; }},
        {"git_commit", [](const Environment& e) { return e.git_commit; }},
        {"build_type", [](const Environment& e) { return e.build_type; }},
        {"compiler", [](const Environment& e) { return e.compiler; }},
        {"kernel_isa", [](const Environment& e) { return e.kernel_isa; }},
        {"kernel_tiles", [](const Environment& e) { return e.kernel_tiles; }},
        {"cpu_model", [](const Environment& e) { return e.cpu_model; }},
        {"blas_library", [](const Environment& e) { return e.blas_library; }},
        {"blas_threading", [](const Environment& e) { return e.blas_threading; }},
        {"openblas_coretype", [](const Environment& e) { return e.openblas_coretype; }},
        {"openblas_l2_size", [](const Environment& e) { return e.openblas_l2_size; }},
        {"transparent_hugepage", [](const Environment& e) { return e.transparent_hugepage; }},
        {"schema_version", [](const Environment&) { return std::to_string(report_schema_version); }},
        {"shard", [](const Environment& e) { return e.shard; }},
        {"command_line", [](const Environment& e) { return e.command_line; }},
        {"timestamp", [](const Environment& e) { return e.timestamp; }},
    };
    return columns;
}

std::string provenance_cell(const EnvironmentColumn& column, const ResultRow& row, const Environment& env) {
    const auto own = row.provenance.find(column.name);
    return own == row.provenance.end() ? column.value(env) : own->second;
}

const std::vector<std::string>& csv_columns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> all;
        for (const RowColumn& column : row_columns()) all.emplace_back(column.name);
        for (const EnvironmentColumn& column : environment_columns()) all.emplace_back(column.name);
        return all;
    }();
    return names;
}

}  // namespace kvbench
