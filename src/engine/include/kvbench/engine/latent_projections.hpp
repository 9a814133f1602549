// The per-head products of latent attention's cached step: W_uk absorbed into the query, W_uv
// applied to the output in the latent (docs/model.md, "Latent attention").
#pragma once

#include "kvbench/engine/latent_weights.hpp"

#include <cstddef>
#include <cstdint>

namespace kvbench {

// For every row b and head h: q_latent[b][h] = scale · [q_nope_{b,h} · W_uk_h | q_rope_{b,h}],
// W_uk_h the (d_n, r) rows [h·d_n, (h+1)·d_n) of wuk. Its product with a cached c | k_rope is the
// expanded q·k (times scale), so the cached step attends in the latent.
// q: (n_rows, H·(d_n + d_r)) floats, head h's d_n then d_r at h·(d_n + d_r);
// wuk: (H·d_n, r) floats; q_latent: (n_rows, H·(r + d_r)) floats, head h at h·(r + d_r).
// Returns the FLOPs executed: 2·n_rows·H·d_n·r (the RoPE copy is no product).
std::uint64_t absorb_query(const LatentDims& dims, const float* q, std::size_t n_rows, const float* wuk, float scale,
                           float* q_latent);

// For every row b and head h: out[b][h] = o_{b,h} · W_uv_h^T, o_{b,h} the first r of head h's
// latent output, W_uv_h the (d_v, r) rows [h·d_v, (h+1)·d_v) of wuv.
// latent_out: (n_rows, H·latent_stride) floats, head h at h·latent_stride (r used, latent_stride
// >= r); wuv: (H·d_v, r) floats; out: (n_rows, H·d_v) floats. Returns the FLOPs executed: 2·n_rows·H·r·d_v.
std::uint64_t unabsorb_output(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                              std::size_t n_rows, const float* wuv, float* out);

// The naive twins (src/engine/reference.cpp's habits): plain loops, double accumulators, one
// thread; the FLOPs they executed, one multiply-add at a time.
std::uint64_t absorb_query_naive(const LatentDims& dims, const float* q, std::size_t n_rows, const float* wuk,
                                 float scale, float* q_latent);
std::uint64_t unabsorb_output_naive(const LatentDims& dims, const float* latent_out, std::size_t latent_stride,
                                    std::size_t n_rows, const float* wuv, float* out);

}  // namespace kvbench
