// What one device holds when a model is split across devices: tensor parallelism splits the
// heads, pipeline parallelism the layers (docs/planning.md, "Parallelism").
#pragma once

#include "kvbench/engine/config.hpp"

#include <cstdint>

namespace kvbench {

struct Parallelism {
    std::uint64_t tp = 1;  // --tp: tensor-parallel ranks, each with 1/tp of every layer's heads
    std::uint64_t pp = 1;  // --pp: pipeline stages, each with consecutive layers

    bool operator==(const Parallelism&) const = default;
};

// KV heads one tensor-parallel rank stores: G / tp when tp divides G; one when the ranks
// outnumber them, each KV head then stored on tp / G ranks (GQA-8 at tp = 16: twice).
// Requires: tp divides G or G divides tp.
std::uint64_t kv_heads_per_rank(std::uint64_t n_kv_heads, std::uint64_t tp);

// Layers the largest pipeline stage holds: ceil(L / pp).
std::uint64_t layers_per_stage(std::uint64_t n_layers, std::uint64_t pp);

// Throws ConfigError naming --tp or --pp when the split is not whole: tp must divide H and be
// a divisor or multiple of G (of H alone for latent attention, whose cache is per layer, not
// per head), pp at most L.
void check_parallelism(const ModelConfig& whole, const Parallelism& parallelism);

// The shape one device of the largest stage runs: H / tp query heads, kv_heads_per_rank KV
// heads, ceil(L / pp) layers (their windows), everything else as `whole`. A latent-attention
// model keeps its latent on every rank: the cache is one vector per position, not per head, so
// tensor parallelism cannot split it. Requires: check_parallelism(whole, parallelism) passes.
ModelConfig device_config(const ModelConfig& whole, const Parallelism& parallelism);

}  // namespace kvbench
