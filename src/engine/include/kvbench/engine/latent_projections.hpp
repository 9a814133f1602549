// The per-head products of latent attention: W_uk absorbed into the query and W_uv applied to the
// output in the latent on the cached step, K expanded from the latent on the uncached one
// (docs/model.md, "Latent attention").
#pragma once

#include "kvbench/engine/latent_weights.hpp"
#include "kvbench/engine/weight_matrix.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// For every row b and head h: q_latent[b][h] = scale · [q_nope_{b,h} · W_uk_h^T | q_rope_{b,h}],
// W_uk_h the (r, d_n) rows [h·r, (h+1)·r) of wuk. Its product with a cached c | k_rope is the
// expanded q·k (times scale), so the cached step attends in the latent. Each head is one linear()
// (the small-M kernels, in wuk's element type) over its q_nope gathered into `rows`.
// q: (n_rows, H·(d_n + d_r)) floats, head h's d_n then d_r at h·(d_n + d_r);
// wuk: (H·r, d_n); q_latent: (n_rows, H·(r + d_r)) floats, head h at h·(r + d_r);
// rows: (n_rows, d_n + r) floats of scratch.
// Returns the FLOPs executed: 2·n_rows·H·d_n·r (the RoPE copy is no product).
std::uint64_t absorb_query(const LatentDims& dims, const float* q, std::size_t n_rows, WeightView wuk, float scale,
                           float* q_latent, float* rows);

// For every row b and head h: out[b][h] = o_{b,h} · W_uv_h^T, o_{b,h} the first r of head h's
// latent output, W_uv_h the (d_v, r) rows [h·d_v, (h+1)·d_v) of wuv; one linear() per head.
// latent_out: (n_rows, H·latent_stride) floats, head h at h·latent_stride (r used, latent_stride
// >= r); wuv: (H·d_v, r); out: (n_rows, H·d_v) floats; rows: (n_rows, r + d_v) floats of scratch.
// Returns the FLOPs executed: 2·n_rows·H·r·d_v.
std::uint64_t unabsorb_output(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                              std::size_t n_rows, WeightView wuv, float* out, float* rows);

// The uncached path's keys: k_nope[t][h] = c_t · W_uk_h for every row t and head h, one sgemm per
// head; a reduced type's W_uk_h is converted to f32 into `converted` first, inside the timer.
// latent: (n_rows, r) floats; wuk: (H·r, d_n); k_nope: (n_rows, H·d_n) floats;
// converted: (r, d_n) floats of scratch (unused for f32 weights).
// Returns the FLOPs executed: 2·n_rows·H·r·d_n.
std::uint64_t expand_keys(const LatentDims& dims, const float* latent, std::size_t n_rows, WeightView wuk,
                          float* k_nope, float* converted);

// The naive twins (src/engine/reference.cpp's habits): plain loops, double accumulators, one
// thread, each weight read by WeightView::at; the FLOPs they executed, one multiply-add at a time.
std::uint64_t absorb_query_naive(const LatentDims& dims, const float* q, std::size_t n_rows, WeightView wuk,
                                 float scale, float* q_latent);
std::uint64_t unabsorb_output_naive(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                                    std::size_t n_rows, WeightView wuv, float* out);
std::uint64_t expand_keys_naive(const LatentDims& dims, const float* latent, std::size_t n_rows, WeightView wuk,
                                float* k_nope);

}  // namespace kvbench
