#include "kvbench/engine/cost_model.hpp"

#include "kvbench/engine/weights.hpp"
#include "latent_configs.hpp"
#include "test_support.hpp"

#include <doctest/doctest.h>

using namespace kvbench;
using kvbench::test::full_latent_config;
using kvbench::test::latent_config;
using kvbench::test::make_config;

TEST_CASE("cached and uncached flops match hand-computed values") {
    // B=2 N=10 D=8 H=2 G=1 L=3: dh=4, P = 2·64 + 2·8·4 = 192.
    const auto config = make_config(2, 10, 8, 2, 1, 3);
    CHECK(weights_per_layer(config) == 192);
    // L·B·(2P + 4·H·dh·N) = 3·2·(384 + 4·2·4·10) = 3·2·704
    CHECK(step_flops(config, DecodePath::cached) == 4224);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 3·2·(3840 + 2·8·10·11) = 3·2·5600
    CHECK(step_flops(config, DecodePath::uncached) == 33600);
}

TEST_CASE("bytes match hand-computed values") {
    const auto config = make_config(2, 10, 8, 2, 1, 3);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·D·4) = 3·(768 + 640 + 128)
    CHECK(step_bytes(config, DecodePath::cached) == 4608);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·N·D·4) = 3·(768 + 640 + 1280)
    CHECK(step_bytes(config, DecodePath::uncached) == 8064);
    // 2·L·B·N·G·dh·4
    CHECK(kv_cache_bytes(config) == 1920);
}

TEST_CASE("an explicit head dimension: flops and bytes match hand-computed values") {
    // B=2 N=10 D=8 H=2 G=1 L=3 dh=6, so H·dh = 12 != D:
    // P = 2·D·H·dh + 2·D·G·dh = 2·8·12 + 2·8·6 = 288.
    const auto config = make_config(2, 10, 8, 2, 1, 3, 6);
    CHECK(weights_per_layer(config) == 288);
    // L·B·(2P + 4·H·dh·N) = 3·2·(576 + 480)
    CHECK(step_flops(config, DecodePath::cached) == 6336);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 3·2·(5760 + 2640)
    CHECK(step_flops(config, DecodePath::uncached) == 50400);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·D·4) = 3·(1152 + 960 + 128): activations stay D wide
    CHECK(step_bytes(config, DecodePath::cached) == 6720);
    // L·(P·4 + 2·B·N·G·dh·4 + 2·B·N·D·4) = 3·(1152 + 960 + 1280)
    CHECK(step_bytes(config, DecodePath::uncached) == 10176);
    // 2·L·B·N·G·dh·4
    CHECK(kv_cache_bytes(config) == 2880);
}

TEST_CASE("gemma-7b's layer shape: 16 heads of 256 at D=3072") {
    // P = 2·3072·4096 + 2·3072·4096 = 50331648.
    const auto config = make_config(1, 256, 3072, 16, 16, 1, 256);
    CHECK(weights_per_layer(config) == 50331648);
    // 2P + 4·4096·256
    CHECK(step_flops(config, DecodePath::cached) == 104857600);
    // 2·256·P + 2·4096·256·257
    CHECK(step_flops(config, DecodePath::uncached) == 26308771840ull);
    // 2·256·16·256·4
    CHECK(kv_cache_bytes(config) == 8388608);
}

TEST_CASE("a head dimension below D/H shrinks q, Wo and the cache") {
    // D=96 H=4 G=2 dh=16 (D/H = 24): P = 2·96·64 + 2·96·32 = 18432.
    const auto config = make_config(1, 5, 96, 4, 2, 1, 16);
    CHECK(weights_per_layer(config) == 18432);
    CHECK(step_flops(config, DecodePath::cached) == 2 * 18432 + 4 * 64 * 5);
    CHECK(kv_cache_bytes(config) == 2 * 5 * 32 * 4);
}

TEST_CASE("an explicit head dimension equal to D/H counts as none") {
    const auto implicit = make_config(2, 100, 1024, 16, 4, 2);
    const auto explicit_dh = make_config(2, 100, 1024, 16, 4, 2, 64);
    for (const DecodePath path : {DecodePath::cached, DecodePath::uncached}) {
        CHECK(step_cost(implicit, path) == step_cost(explicit_dh, path));
    }
}

TEST_CASE("mqa kv bytes are mha kv bytes divided by the head count") {
    const auto mha = make_config(4, 4096, 4096, 32, 32, 2);
    auto mqa = mha;
    mqa.n_kv_heads = 1;
    auto gqa = mha;
    gqa.n_kv_heads = 8;
    CHECK(kv_cache_bytes(mqa) * 32 == kv_cache_bytes(mha));
    CHECK(kv_cache_bytes(gqa) * 4 == kv_cache_bytes(mha));
}

TEST_CASE("large configurations count without overflow") {
    // B=64 N=131072 D=8192 H=64 G=8 (dh 128) L=80: P = 2·8192² + 2·8192·1024 = 150994944.
    const auto config = make_config(64, 131072, 8192, 64, 8, 80);
    // 2·80·64·131072·1024·4 bytes = 5 TiB, well past 32 bits.
    CHECK(kv_cache_bytes(config) == 2ull * 80 * 64 * 131072 * 1024 * 4);
    // L·B·(2·N·P + 2·H·dh·N·(N+1)) = 1.6e18, within 2^64 by a factor of 11.
    CHECK(step_flops(config, DecodePath::uncached) == 1643824859106508800ull);
    // L·B·(2·P + 4·H·dh·N)
    CHECK(step_flops(config, DecodePath::cached) == 23536420782080ull);
    // L·(4·P + 2·B·N·G·dh·4 + 2·B·D·4), and the uncached path's 2·B·N·D·4 activations
    CHECK(step_bytes(config, DecodePath::cached) == 5546212065280ull);
    CHECK(step_bytes(config, DecodePath::uncached) == 49526341632000ull);
}

TEST_CASE("step_cost bundles the three counts") {
    // B=1 N=100 D=64 H=4 G=2 (dh 16) L=1: P = 2·64·64 + 2·64·32 = 12288 weights.
    const auto config = make_config(1, 100, 64, 4, 2, 1);
    const StepCost cached = step_cost(config, DecodePath::cached);
    CHECK(cached.flops == 2 * 12288 + 4 * 64 * 100);                       // 2·P + 4·H·dh·N
    CHECK(cached.bytes == 12288 * 4 + 2 * 100 * 32 * 4 + 2 * 64 * 4);     // weights, K and V, x in and out
    CHECK(cached.kv_bytes == 2 * 100 * 32 * 4);                           // 2·N·G·dh·4
    const StepCost uncached = step_cost(config, DecodePath::uncached);
    CHECK(uncached.flops == 2 * 100 * 12288 + 2 * 64 * 100 * 101);        // 2·N·P + 2·H·dh·N·(N+1)
    CHECK(uncached.bytes == 12288 * 4 + 2 * 100 * 32 * 4 + 2 * 100 * 64 * 4);
    CHECK(uncached.kv_bytes == cached.kv_bytes);
    CHECK(std::string(path_name(DecodePath::cached)) == "cached");
    CHECK(std::string(path_name(DecodePath::uncached)) == "uncached");
}

namespace {

// B=2 N=10 D=8 H=2 G=1 (dh 4) L=3 as a full layer with an MLP of width 16.
ModelConfig small_full_layer() {
    ModelConfig config = make_config(2, 10, 8, 2, 1, 3);
    config.block = BlockKind::full;
    config.ffn_dim = 16;
    return config;
}

}  // namespace

TEST_CASE("a full layer adds the MLP's 3·D·F weights to the flops and its weights and norms to the bytes") {
    const ModelConfig config = small_full_layer();
    // P = 192, M = 3·8·16 = 384.
    CHECK(mlp_weights_of_layer(config, 0) == 384);
    // L·B·(2·(P + M) + 4·H·dh·N) = 3·2·(1152 + 320)
    CHECK(step_flops(config, DecodePath::cached) == 8832);
    // L·B·(2·N·(P + M) + 2·H·dh·N·(N+1)) = 3·2·(11520 + 1760)
    CHECK(step_flops(config, DecodePath::uncached) == 79680);
    // L·((P + M)·4 + 2·D·4 norms + 2·B·N·G·dh·4 + 2·B·D·4) = 3·(2304 + 64 + 640 + 128)
    CHECK(step_bytes(config, DecodePath::cached) == 9408);
    // L·((P + M)·4 + 2·D·4) = 3·2368
    CHECK(step_weight_bytes(config) == 7104);
}

TEST_CASE("weight bytes follow the weight type, int8 with 4 bytes of scale per output channel") {
    ModelConfig config = small_full_layer();
    // Per layer 576 weights; outputs Wq 8, Wk 4, Wv 4, Wo 8, Wg 16, Wu 16, Wd 8 = 64 channels;
    // the norms' 2·D = 16 weights stay f32 (64 bytes).
    config.weight_dtype = WeightDtype::bf16;
    CHECK(step_weight_bytes(config) == 3 * (576 * 2 + 64));
    config.weight_dtype = WeightDtype::f16;
    CHECK(step_weight_bytes(config) == 3 * (576 * 2 + 64));
    config.weight_dtype = WeightDtype::int8;
    CHECK(step_weight_bytes(config) == 3 * (576 + 64 * 4 + 64));
    // The cache and activations do not change with the weights' type, nor do the flops.
    CHECK(step_bytes(config, DecodePath::cached) == step_weight_bytes(config) + 3 * (640 + 128));
    CHECK(step_flops(config, DecodePath::cached) == 8832);
}

TEST_CASE("a sliding window limits a layer's attention and its cache to min(N, W) positions") {
    // B=1 N=10 D=8 H=2 G=1 (dh 4) L=2, layer 0 local with W=4, layer 1 global; P = 192.
    ModelConfig config = make_config(1, 10, 8, 2, 1, 2);
    config.layer_windows = {4, 0};
    // Σ_l 2·G·dh·4·n_l = 32·(4 + 10)
    CHECK(kv_cache_bytes(config) == 448);
    // Σ_l (2P + 4·H·dh·n_l) = (384 + 32·4) + (384 + 32·10)
    CHECK(step_flops(config, DecodePath::cached) == 1216);
    // Σ_l (2·N·P + 4·H·dh·pairs_l): the window's triangle has 4·5/2 + 6·4 = 34 pairs, the
    // global layer's 10·11/2 = 55: (3840 + 32·34) + (3840 + 32·55)
    CHECK(step_flops(config, DecodePath::uncached) == 10528);
    // L·(P·4 + 2·B·D·4) + kv = 2·(768 + 64) + 448
    CHECK(step_bytes(config, DecodePath::cached) == 2112);
    // Uncached: K and V of all N positions are f32 activations on both layers.
    CHECK(step_bytes(config, DecodePath::uncached) == 2 * (768 + 2 * 10 * 4 * 4 + 2 * 10 * 8 * 4));
    // A window at least N binds nowhere: the counts of no window.
    config.layer_windows = {10, 10};
    CHECK(step_cost(config, DecodePath::uncached) == step_cost(make_config(1, 10, 8, 2, 1, 2), DecodePath::uncached));
}

TEST_CASE("experts: flops of the router and the K + S experts a token runs, bytes of the experts read") {
    // B=2 N=4 D=8 H=2 G=2 (dh 4) L=2; layer 0 dense (F=16), layer 1 E=4 K=2 S=1 Fe=6.
    ModelConfig config = make_config(2, 4, 8, 2, 2, 2);
    config.block = BlockKind::full;
    config.ffn_dim = 16;
    config.moe = {.n_experts = 4, .n_active = 2, .n_shared = 1, .expert_dim = 6, .n_dense_layers = 1};
    // P = 2·8·8 + 2·8·8 = 256. Layer 0: 2·(256 + 384) + 4·2·4·4 = 1408 per sequence.
    // Layer 1: 2·(256 + D·E + (K + S)·3·D·Fe) + 128 = 2·(256 + 32 + 432) + 128 = 1568.
    CHECK(step_flops(config, DecodePath::cached) == 2 * (1408 + 1568));
    CHECK(mlp_weights_of_layer(config, 1) == 32 + 5 * 144);
    // Two tokens of K=2 can reach all four experts: min(E, B·K) = 4.
    CHECK(most_experts_read(config, DecodePath::cached) == 4);
    // Bytes: layer 0 256·4 + 64 norms + 384·4 = 2624; layer 1 1024 + 64 + router 128 + the
    // shared expert 576 = 1792; 4 routed experts 4·576; activations 2·2·B·D·4 = 256;
    // KV B·N·L·2·G·dh·4 = 1024.
    CHECK(step_bytes(config, DecodePath::cached) == 2624 + 1792 + 4 * 576 + 256 + 1024);
    // The router's count, when the decoder reports it, replaces the bound.
    CHECK(step_bytes(config, DecodePath::cached, 3) == 2624 + 1792 + 3 * 576 + 256 + 1024);
    CHECK(step_cost(config, DecodePath::cached, 3).bytes == step_bytes(config, DecodePath::cached, 3));
    // One token reads K experts.
    config.n_batch = 1;
    CHECK(most_experts_read(config, DecodePath::cached) == 2);
    // The uncached forward routes B·N tokens.
    CHECK(most_experts_read(config, DecodePath::uncached) == 4);
}

TEST_CASE("latent attention: absorbed cached step, expanded uncached one, latent cache") {
    // B=1 N=5 D=16 H=2 L=1, r=4 d_r=2 d_n=3 d_v=5, no q_lora.
    ModelConfig config = make_config(1, 5, 16, 2, 2, 1);
    config.mla = {.kv_lora_rank = 4, .rope_dim = 2, .nope_dim = 3, .v_head_dim = 5, .q_lora_rank = 0};
    // Wq D·H·(d_n+d_r) 160, W_dkv D·(r+d_r) 96, W_uk H·d_n·r 24, W_uv H·d_v·r 40, Wo H·d_v·D 160.
    CHECK(weights_per_layer(config) == 480);
    // q 320 + kv down 192 + absorb q 2·H·d_n·r 48 + scores 2·H·N·(r+d_r) 120 + values 2·H·N·r 80
    // + un-absorb 2·H·r·d_v 80 + output 320
    CHECK(step_flops(config, DecodePath::cached) == 1160);
    // 2·N·480 (K_nope and V expanded for N rows among them) + 2·H·(d_n+d_r+d_v)·N·(N+1)/2
    CHECK(step_flops(config, DecodePath::uncached) == 4800 + 2 * 2 * 10 * 15);
    // B·N·(r + d_r)·4, whatever H is
    CHECK(kv_cache_bytes(config) == 120);
    CHECK(step_bytes(config, DecodePath::cached) == 480 * 4 + 120 + 2 * 16 * 4);
    // Uncached: the expanded K (d_n + d_r) and V (d_v) of every head, f32, for N rows.
    CHECK(step_bytes(config, DecodePath::uncached) == 480 * 4 + 5 * 2 * 10 * 4 + 2 * 5 * 16 * 4);
    config.kv_dtype = KvDtype::f16;
    CHECK(kv_cache_bytes(config) == 60);
    // A q_lora of 3: D·3 + 3·H·(d_n + d_r) = 48 + 30 in place of 160.
    config.mla.q_lora_rank = 3;
    CHECK(weights_per_layer(config) == 480 - 160 + 78);
}

TEST_CASE("DeepSeek's full layer around latent attention: norms, dense first layer, then experts") {
    // B=1 N=5 D=16 H=2 L=2, r=4 d_r=2 d_n=3 d_v=5, q_lora 3; layer 0 a dense MLP of F=8, layer 1
    // E=4 experts of Fe=6, K=2 per token, S=1 shared.
    ModelConfig config = make_config(1, 5, 16, 2, 2, 2);
    config.mla = {.kv_lora_rank = 4, .rope_dim = 2, .nope_dim = 3, .v_head_dim = 5, .q_lora_rank = 3};
    config.block = BlockKind::full;
    config.ffn_dim = 8;
    config.moe = {.n_experts = 4, .n_active = 2, .n_shared = 1, .expert_dim = 6, .n_dense_layers = 1};
    // W_dq 16·3 48 + W_uq 3·2·5 30 + W_dkv 16·6 96 + W_uk 2·4·3 24 + W_uv 2·5·4 40 + Wo 2·5·16 160
    CHECK(weights_per_layer(config) == 398);
    CHECK(mlp_weights_of_layer(config, 0) == 3 * 16 * 8);               // 384
    CHECK(mlp_weights_of_layer(config, 1) == 16 * 4 + 5 * 3 * 16 * 6);  // router 64 + 5 experts of 288
    // Cached, per layer 2·(398 + MLP per token) + 2·H·(2r + d_r)·N = 200 of attention:
    // layer 0: 2·(398 + 384) + 200 = 1764; layer 1: 2·(398 + 64 + 3·288) + 200 = 2852.
    CHECK(step_flops(config, DecodePath::cached) == 1764 + 2852);
    // Uncached, per layer 2·N·(398 + MLP per token) + 2·H·(d_n + d_r + d_v)·N·(N+1)/2 = 600:
    // layer 0: 10·782 + 600 = 8420; layer 1: 10·1326 + 600 = 13860.
    CHECK(step_flops(config, DecodePath::uncached) == 8420 + 13860);
    // Weights apart from the routed experts, f32: layer 0 398·4 + 2·D·4 norms 128 + (q_lora +
    // r)·4 latent norms 28 + 384·4 = 3284; layer 1 1592 + 128 + 28 + router 256 + shared 288·4 = 3156.
    // Cached: + 2 experts read (min(E, B·K)) · 1152 + activations 2·L·B·D·4 256 + KV L·B·N·(r + d_r)·4 240.
    CHECK(step_bytes(config, DecodePath::cached) == 3284 + 3156 + 2 * 1152 + 256 + 240);
    CHECK(step_bytes(config, DecodePath::cached, 1) == 3284 + 3156 + 1152 + 256 + 240);
    CHECK(step_weight_bytes(config) == 3284 + 3156 + 2 * 1152);
    // Uncached: every expert (min(E, B·N·K) = 4), activations 2·L·B·N·D·4 1280, and the expanded
    // K (d_n + d_r) and V (d_v) of every head, f32: L·B·N·H·10·4 = 800.
    CHECK(step_bytes(config, DecodePath::uncached) == 3284 + 3156 + 4 * 1152 + 1280 + 800);
    CHECK(kv_cache_bytes(config) == 240);
    // bf16 weights halve every matrix; the norms stay f32: (3284 - 156)/2 + 156 and (3156 - 156)/2 + 156.
    config.weight_dtype = WeightDtype::bf16;
    CHECK(step_weight_bytes(config) == 1720 + 1656 + 2 * 576);
}

TEST_CASE("published per-token KV bytes: Llama-3-8B and DeepSeek-V3 at 2 bytes per element") {
    ModelConfig llama = make_config(1, 1, 4096, 32, 8, 32);
    llama.kv_dtype = KvDtype::f16;
    CHECK(kv_bytes_per_position(llama) == 131072);  // 2·32·8·128·2
    ModelConfig deepseek = make_config(1, 1, 7168, 128, 128, 61);
    deepseek.kv_dtype = KvDtype::f16;
    deepseek.mla = {.kv_lora_rank = 512, .rope_dim = 64, .nope_dim = 128, .v_head_dim = 128, .q_lora_rank = 1536};
    CHECK(kv_bytes_per_position(deepseek) == 70272);  // 61·(512 + 64)·2
    deepseek.seq_len = 1000;
    CHECK(kv_cache_bytes(deepseek) == 70272000);
}

TEST_CASE("N*: Llama-3-8B's context where the step's KV bytes reach its weight bytes (issue 36's table)") {
    ModelConfig block = make_config(1, 1, 4096, 32, 8, 32);
    // Attention block, f32 weights and cache: P·4 = 41943040·4 bytes against 2·1024·4 per
    // position and layer: 20480 at B=1, 2560 at B=8.
    CHECK(kv_weight_crossover(block) == 20480);
    block.n_batch = 8;
    CHECK(kv_weight_crossover(block) == 2560);

    ModelConfig layer = make_config(1, 1, 4096, 32, 8, 32);
    layer.block = BlockKind::full;
    layer.ffn_dim = 14336;
    layer.kv_dtype = KvDtype::f16;
    layer.weight_dtype = WeightDtype::bf16;
    // The matrices alone, (P + M)·2 = 218103808·2 bytes over 4096 per position: the 106496.
    CHECK((weights_per_layer(layer) + mlp_weights_of_layer(layer, 0)) * 2 / 4096 == 106496);
    // Its two f32 norms (32 KiB) add 8 positions: 436240384 / 4096.
    CHECK(kv_weight_crossover(layer) == 106504);
    layer.n_batch = 8;
    CHECK(kv_weight_crossover(layer) == 13313);
    // int8: 218103808 bytes + 43008 channels' scales·4 + 32768 of norms = 218308608, over 4096 is
    // 53298 (the 53248 leaves out the scales and norms); at B=8, 6662.25 rounds up.
    layer.weight_dtype = WeightDtype::int8;
    layer.n_batch = 1;
    CHECK(kv_weight_crossover(layer) == 53298);
    layer.n_batch = 8;
    CHECK(kv_weight_crossover(layer) == 6663);
}

TEST_CASE("N* past the windows: only the global layers grow, and with none the cache is capped") {
    ModelConfig config = make_config(1, 1, 8, 2, 1, 2);  // P·4 = 768 bytes per layer, 1536 in all
    config.layer_windows = {4, 4};
    // 2·32·4 = 256 bytes at most: never 1536.
    CHECK_FALSE(kv_weight_crossover(config).has_value());
    config.layer_windows = {4, 0};
    // 32·4 + 32·N >= 1536 from N = 44.
    CHECK(kv_weight_crossover(config) == 44);
}

TEST_CASE("the step's weight bytes are the bytes the engine stores, for every layer shape and weight type") {
    // Every expert reachable (B·K >= E), so the step reads every stored weight once: the cost
    // model's count and the engine's storage must agree to the byte, int8 scales included,
    // whatever layout each stores a matrix in (the fused q, k, v; the latent's W_uk head by
    // head; the shared experts as one MLP).
    std::vector<ModelConfig> shapes;
    shapes.push_back(make_config(3, 8, 32, 4, 2, 2));  // the attention block
    ModelConfig dense = make_config(3, 8, 32, 4, 2, 2);
    dense.block = BlockKind::full;
    dense.ffn_dim = 40;
    shapes.push_back(dense);
    ModelConfig experts = dense;
    experts.moe = {.n_experts = 4, .n_active = 2, .n_shared = 2, .expert_dim = 12, .n_dense_layers = 1};
    shapes.push_back(experts);
    ModelConfig sinks = experts;
    sinks.attention_sinks = true;
    shapes.push_back(sinks);
    shapes.push_back(latent_config(3, 8, 2));
    ModelConfig latent_q = latent_config(3, 8, 2);
    latent_q.mla.q_lora_rank = 10;
    shapes.push_back(latent_q);
    ModelConfig full_latent = full_latent_config(3, 8, 2);
    full_latent.moe.n_shared = 2;
    shapes.push_back(full_latent);
    for (ModelConfig config : shapes) {
        for (const WeightDtype dtype : {WeightDtype::f32, WeightDtype::bf16, WeightDtype::f16, WeightDtype::int8}) {
            config.weight_dtype = dtype;
            INFO(describe(config));
            validate(config);
            CHECK(step_weight_bytes(config) == ModelWeights::bytes_for(config));
        }
    }
}


TEST_CASE("N* is the context of a step of one token per sequence: query tokens do not reach more experts") {
    ModelConfig config = make_config(1, 8, 32, 4, 2, 2);
    config.block = BlockKind::full;
    config.ffn_dim = 40;
    config.moe = {.n_experts = 8, .n_active = 2, .n_shared = 1, .expert_dim = 12, .n_dense_layers = 0};
    const std::optional<std::uint64_t> one_token = kv_weight_crossover(config);
    REQUIRE(one_token.has_value());
    config.n_query_tokens = 4;  // a step of 4 tokens would reach all 8 experts, one token 2
    CHECK(kv_weight_crossover(config) == one_token);
}

TEST_CASE("a point whose counts could wrap 64 bits is refused, and the bound holds every real count") {
    // Llama-3-70B's shape as the sweep runs it: 80 layers of D = 8192, 64 heads, 8 KV heads.
    ModelConfig config;
    config.block = BlockKind::full;
    config.model_dim = 8192;
    config.n_heads = 64;
    config.n_kv_heads = 8;
    config.ffn_dim = 28672;
    config.n_layers = 80;
    config.seq_len = 131072;
    config.n_batch = 1;
    validate(config);
    CHECK_NOTHROW(require_countable(config));
    // The bound is above the true count: the uncached FLOPs of an accepted point, recomputed in
    // long double, are below 2^64, so its u64 count did not wrap.
    const long double per_token = 8192.0L * (8192 + 8192 + 1024 + 1024) + 3.0L * 8192 * 28672;  // Wq Wo Wk Wv, the MLP
    const long double n = 131072;
    const long double flops = 80 * (2 * n * per_token + 4.0L * 64 * 128 * n * (n + 1) / 2);
    CHECK(static_cast<long double>(step_flops(config, DecodePath::uncached)) == doctest::Approx(static_cast<double>(flops)).epsilon(1e-9));
    config.seq_len = std::size_t{1} << 20;
    config.n_batch = 64;  // its uncached FLOPs are 1.01e20, 5·2^64 more than a u64 holds
    CHECK_THROWS_WITH_AS(require_countable(config), doctest::Contains("could pass what 64 bits hold"), ConfigError);
}
