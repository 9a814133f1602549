// The latency planner: hardware profiles, --hardware, the tensor- and pipeline-parallel split,
// the predicted step, the calibration and the searches, against figures computed by hand.
#include "cli/hardware_option.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/engine/cost_model.hpp"
#include "kvbench/plan/calibration.hpp"
#include "kvbench/plan/hardware_profile.hpp"
#include "kvbench/plan/latency_model.hpp"
#include "kvbench/plan/memory_plan.hpp"
#include "kvbench/plan/model_preset.hpp"
#include "kvbench/plan/parallelism.hpp"
#include "kvbench/plan/service_plan.hpp"
#include "builtin_preset.hpp"
#include "scratch_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

namespace kvbench {

namespace {

using test::preset;

const HardwareProfile& profile(std::string_view name) {
    const HardwareProfile* found = find_hardware(builtin_hardware(), name);
    REQUIRE(found != nullptr);
    return *found;
}

std::string error_of(auto&& call) {
    try {
        call();
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "(no error)";
}

// Llama-3-70B on H100 SXM at f16, at the peaks: the issue's reference deployment.
Deployment llama_70b_on_h100(std::uint64_t tp) {
    Deployment deployment;
    deployment.model = preset("llama-3-70b");
    deployment.hardware = profile("h100-sxm");
    deployment.memory_bytes = *deployment.hardware.memory_bytes;
    deployment.parallelism.tp = tp;
    return deployment;
}

}  // namespace

TEST_CASE("every built-in hardware profile parses, with its bandwidth, and the H100 SXM's figures are the research's") {
    REQUIRE(builtin_hardware().size() >= 15);
    for (const HardwareProfile& hardware : builtin_hardware()) {
        CHECK(hardware.bandwidth_bytes_per_s > 0);
        CHECK((hardware.status == "sourced" || hardware.status == "partial"));
    }
    const HardwareProfile& h100 = profile("h100-sxm");
    CHECK(*h100.memory_bytes == 80'000'000'000);
    CHECK(h100.bandwidth_bytes_per_s == doctest::Approx(3.35e12));
    CHECK(*h100.peak_flops_of(ComputeType::bf16) == doctest::Approx(989e12));
    CHECK(*h100.peak_flops_of(ComputeType::fp8) == doctest::Approx(1979e12));
    CHECK_FALSE(profile("a100-80gb-sxm").peak_flops_of(ComputeType::fp8).has_value());  // Ampere has no fp8
    CHECK_FALSE(profile("m4-max").peak_flops_of(ComputeType::bf16).has_value());  // Apple publishes none
    CHECK_FALSE(profile("epyc-9654").memory_bytes.has_value());
}

TEST_CASE("a broken hardware file names the file, the profile and the field") {
    const auto parse = [](const std::string& text) {
        return error_of([&] { static_cast<void>(parse_hardware_profiles(text, "hw.json")); });
    };
    const std::string head = R"({"profiles": [{"name": "x", "description": "d", "kind": "gpu", "status": "sourced", )";
    CHECK(parse(head + R"("memory_gb": 80, "peak_tflops": {"f32": 1, "bf16": 2, "fp8": null, "int8": null}}]})") ==
          "hw.json: profile 'x': field 'bandwidth_gb_per_s': missing");
    CHECK(parse(head + R"("memory_gb": 80, "bandwidth_gb_per_s": -1, "peak_tflops": {}}]})") ==
          "hw.json: profile 'x': field 'bandwidth_gb_per_s': must be a positive number, not -1");
    CHECK(parse(head + R"("memory_gb": 80, "bandwidth_gb_per_s": 1, "peak_tflops": {"f32": 1, "bf16": 2, "fp8": null}}]})") ==
          "hw.json: profile 'x': field 'peak_tflops.int8': missing (null if not published)");
    CHECK(parse("[]") == "hw.json: must be an object with a \"profiles\" array");
    // --hardware reads a name in any case: two profiles one case apart would leave it to the order.
    const std::string record = R"({"name": "NAME", "description": "d", "kind": "gpu", "status": "sourced", )"
                               R"("memory_gb": 80, "bandwidth_gb_per_s": 1, "peak_tflops": {"f32": 1, "bf16": 2, )"
                               R"("fp8": null, "int8": null}})";
    const auto named = [&record](const std::string& name) {
        return std::string(record).replace(record.find("NAME"), 4, name);
    };
    CHECK(parse(R"({"profiles": [)" + named("lab") + "," + named("LAB") + "]}") ==
          "hw.json: profile 'LAB': field 'name': differs from profile 'lab' only in case, and --hardware reads names "
          "in any case");
    CHECK(parse(R"({"profiles": [)" + named("lab") + "," + named("lab") + "]}") ==
          "hw.json: profile 'lab': field 'name': appears twice");
}

TEST_CASE("--hardware reads a name or bw, flops and mem in the project's units") {
    CHECK(parse_hardware_option("h200").bandwidth_bytes_per_s == doctest::Approx(4.8e12));
    const HardwareProfile typed = parse_hardware_option("bw=3.35TB/s,flops=989T,mem=80GB");
    CHECK(typed.name == "custom");
    CHECK(typed.bandwidth_bytes_per_s == doctest::Approx(3.35e12));
    CHECK(*typed.peak_flops_of(ComputeType::f32) == doctest::Approx(989e12));
    CHECK(*typed.peak_flops_of(ComputeType::int8) == doctest::Approx(989e12));
    CHECK(*typed.memory_bytes == 80'000'000'000);
    CHECK(parse_hardware_option("bw=800GiB/s").bandwidth_bytes_per_s == doctest::Approx(800.0 * (1 << 30)));
    CHECK_FALSE(parse_hardware_option("bw=800GB/s").peak_flops_of(ComputeType::bf16).has_value());
    CHECK(parse_hardware_option("mem=24GiB,bw=1008GB/s").memory_bytes == std::uint64_t{24} << 30);

    CHECK(error_of([] { parse_hardware_option("h100"); }).find("--hardware h100: unknown profile (did you mean") == 0);
    CHECK(error_of([] { parse_hardware_option("flops=989T"); }).find("bw= is required") != std::string::npos);
    CHECK(error_of([] { parse_hardware_option("bw=3.35TB"); }).find("--hardware bw=3.35TB: must be a byte rate ending in /s") == 0);
    CHECK(error_of([] { parse_hardware_option("bw=3.35TiB/s"); }).find("takes an SI unit") != std::string::npos);
    CHECK(error_of([] { parse_hardware_option("bw=1TB/s,flops=9X"); }).find("unknown suffix \"X\"") != std::string::npos);
    CHECK(error_of([] { parse_hardware_option("bw=1TB/s,bw=2TB/s"); }).find("bw is given twice") != std::string::npos);
    CHECK(error_of([] { parse_hardware_option("bw=1TB/s,speed=2"); }).find("unknown key \"speed\"") != std::string::npos);
}

TEST_CASE("tensor parallelism splits KV heads, and replicates them once the ranks outnumber them") {
    CHECK(kv_heads_per_rank(8, 1) == 8);
    CHECK(kv_heads_per_rank(8, 4) == 2);
    CHECK(kv_heads_per_rank(8, 8) == 1);
    CHECK(kv_heads_per_rank(8, 16) == 1);  // GQA-8 at TP=16: each head on two ranks
    CHECK(layers_per_stage(80, 3) == 27);

    const ModelConfig whole = model_config_of(preset("llama-3-70b"), 1, 1, KvDtype::f16);
    const ModelConfig at_16 = device_config(whole, {16, 1});
    CHECK(at_16.n_heads == 4);
    CHECK(at_16.n_kv_heads == 1);
    CHECK(at_16.head_dim() == 128);
    const ModelConfig staged = device_config(whole, {2, 4});
    CHECK(staged.n_layers == 20);
    CHECK(staged.n_kv_heads == 4);

    CHECK(error_of([&] { check_parallelism(whole, {3, 1}); }).find("--tp 3: must divide the model's 64 query heads") == 0);
    ModelConfig gqa_8_of_48 = whole;
    gqa_8_of_48.n_heads = 48;
    CHECK(error_of([&] { check_parallelism(gqa_8_of_48, {12, 1}); }).find("--tp 12: must divide the model's 8 KV heads or be a multiple") == 0);
    CHECK(error_of([&] { check_parallelism(whole, {1, 81}); }).find("--pp 81: must be between 1 and the model's 80 layers") == 0);
}

TEST_CASE("a latent-attention model keeps its latent on every tensor-parallel rank") {
    ModelConfig latent;
    latent.model_dim = 1024;
    latent.n_heads = 16;
    latent.n_kv_heads = 16;
    latent.n_layers = 2;
    latent.mla = {512, 64, 128, 128, 0};
    check_parallelism(latent, {16, 1});  // no KV-head rule: the cache is per layer, not per head
    const ModelConfig device = device_config(latent, {16, 1});
    CHECK(device.n_heads == 1);
    CHECK(device.mla == latent.mla);
}

TEST_CASE("llama-3-70b on h100-sxm: per-device bytes and predicted tpot at TP=8 and TP=16, by hand") {
    // Attention parameters per layer: 2·8192·8192 + 2·8192·1024 = 150994944, so
    // 80 layers hold 12079595520 and the rest of the 70553706496 parameters is 58474110976.
    // TP=8: a rank holds 80·(2·8192·1024 + 2·8192·128) = 1509949440 attention parameters and
    // 58474110976 / 8 = 7309263872 others: 8819213312 parameters, 17638426624 bytes at f16.
    // Its cache: one KV head, 2·80·128·2 = 40960 bytes per token; at B=1, N=8192: 335544320.
    const Prediction tp8 = predict_step(llama_70b_on_h100(8), 1, 8192);
    CHECK(tp8.cost.weight_bytes == 17'638'426'624);
    CHECK(tp8.cost.kv_bytes == 335'544'320);
    CHECK(tp8.cost.fits);
    CHECK(tp8.tpot_s == doctest::Approx((17'638'426'624.0 + 335'544'320.0) / 3.35e12));
    CHECK(tp8.limit == Limit::weight_bandwidth);

    // TP=16: 4 query heads, still one KV head (stored twice across the 16 ranks), so the cache
    // per device is the same; weights 80·(2·8192·512 + 2·8192·128) + 58474110976 / 16 =
    // 838860800 + 3654631936 = 4493492736 parameters.
    const Prediction tp16 = predict_step(llama_70b_on_h100(16), 1, 8192);
    CHECK(tp16.cost.weight_bytes == 2 * 4'493'492'736);
    CHECK(tp16.cost.kv_bytes == tp8.cost.kv_bytes);

    // At B=16, N=32768 the cache (16·32768·40960 = 21474836480 bytes) outweighs the weights.
    const Prediction long_context = predict_step(llama_70b_on_h100(8), 16, 32768);
    CHECK(long_context.cost.kv_bytes == 21'474'836'480);
    CHECK(long_context.limit == Limit::kv_bandwidth);
}

TEST_CASE("a mixture of experts holds every expert and reads those its sequences were routed to") {
    const MoeShape qwen_experts = preset("qwen3-30b-a3b").moe;
    CHECK(expected_experts_read(qwen_experts, 1) == doctest::Approx(8));
    // 128 · (1 - (120/128)^8) = 128 · (1 - 0.5967195...) = 51.6199...
    CHECK(expected_experts_read(qwen_experts, 8) == doctest::Approx(51.6199).epsilon(1e-5));
    CHECK(expected_experts_read(qwen_experts, 4096) == doctest::Approx(128));
    CHECK(expected_experts_read(MoeShape{}, 8) == 0);

    Deployment deployment = llama_70b_on_h100(1);
    deployment.model = preset("qwen3-30b-a3b");
    // One expert: 3 · 2048 · 768 = 4718592 parameters. At B=1 each of the 48 layers leaves 120
    // of its 128 experts unread: 48 · 120 · 4718592 = 27179089920 of the 30532122624
    // parameters, so a step reads 3353032704 of them, 6706065408 bytes at f16.
    const Prediction one = predict_step(deployment, 1, 4096);
    CHECK(one.cost.weight_bytes == 2 * std::uint64_t{30'532'122'624});
    CHECK(one.cost.weight_read_bytes == 6'706'065'408);
    // The FLOPs run the K = 8 routed experts a token chose, of the 128.
    const ModelConfig device = device_config(model_config_of(deployment.model, 1, 4096, KvDtype::f16), {1, 1});
    const std::uint64_t attention_params = 48 * weights_per_layer(device);
    CHECK(one.cost.flops == step_flops(device, DecodePath::cached) +
                                2 * (30'532'122'624 - attention_params - 27'179'089'920));
    CHECK(one.bandwidth_time_s ==
          doctest::Approx((6'706'065'408.0 + static_cast<double>(one.cost.kv_bytes)) / 3.35e12));

    // More sequences reach more experts, up to all of them; a dense model reads all it holds.
    const Prediction eight = predict_step(deployment, 8, 4096);
    const Prediction many = predict_step(deployment, 4096, 16);
    CHECK(eight.cost.weight_read_bytes > one.cost.weight_read_bytes);
    CHECK(many.cost.weight_read_bytes > eight.cost.weight_read_bytes);
    CHECK(many.cost.weight_read_bytes <= many.cost.weight_bytes);
    const Prediction dense = predict_step(llama_70b_on_h100(8), 8, 4096);
    CHECK(dense.cost.weight_read_bytes == dense.cost.weight_bytes);
}

TEST_CASE("the compute term takes the weights' element type's peak, times the efficiency") {
    Deployment deployment = llama_70b_on_h100(8);
    deployment.efficiency = {0.5, 0.25, {}};
    const Prediction at_peak = predict_step(llama_70b_on_h100(8), 64, 1024);
    const Prediction derated = predict_step(deployment, 64, 1024);
    CHECK(derated.bandwidth_time_s == doctest::Approx(2 * at_peak.bandwidth_time_s));
    CHECK(*derated.compute_time_s == doctest::Approx(4 * *at_peak.compute_time_s));
    // FLOPs: the cost model's attention FLOPs of the device's shape, plus 2 per other parameter
    // and sequence.
    const ModelConfig device = device_config(model_config_of(deployment.model, 64, 1024, KvDtype::f16), {8, 1});
    CHECK(at_peak.cost.flops == step_flops(device, DecodePath::cached) + 2 * 64 * 7'309'263'872);
    CHECK(*at_peak.compute_time_s == doctest::Approx(static_cast<double>(*at_peak.cost.flops) / 989e12));

    deployment.weight_dtype = KvDtype::fp8;
    CHECK(*predict_step(deployment, 64, 1024).compute_time_s ==
          doctest::Approx(static_cast<double>(*at_peak.cost.flops) / 1979e12 / 0.25));
    deployment.hardware = profile("m4-max");  // no published peak: bandwidth alone
    deployment.memory_bytes = std::uint64_t{1} << 50;
    CHECK_FALSE(predict_step(deployment, 1, 1024).compute_time_s.has_value());
}

TEST_CASE("pipeline stages each hold their layers, and a token passes them in turn") {
    Deployment staged = llama_70b_on_h100(1);
    staged.parallelism.pp = 4;
    const Prediction prediction = predict_step(staged, 1, 8192);
    // A stage: 20 layers' cache (2·20·8·128·2 = 81920 bytes per token) and a quarter of the weights.
    CHECK(prediction.cost.kv_bytes == 81920 * 8192);
    CHECK(prediction.cost.weight_bytes == 2 * (std::uint64_t{20} * 150'994'944 + 58'474'110'976 / 4));
    CHECK(prediction.tpot_s == doctest::Approx(4 * prediction.stage_time_s));
}

TEST_CASE("a point past the device's memory is not timed, and one past 2^64 bytes does not wrap") {
    const Prediction alone = predict_step(llama_70b_on_h100(1), 1, 1);
    CHECK_FALSE(alone.cost.fits);  // 141 GB of f16 weights on one 80 GB device
    CHECK(alone.limit == Limit::memory);
    // It is not timed, but its FLOPs are counted as a fitting point's: the same step on 8 devices
    // does 8 times fewer per device, give or take the unsplit embeddings.
    REQUIRE(alone.cost.flops.has_value());
    const Prediction split = predict_step(llama_70b_on_h100(8), 1, 1);
    REQUIRE(split.cost.fits);
    CHECK(static_cast<double>(*alone.cost.flops) == doctest::Approx(8.0 * static_cast<double>(*split.cost.flops)).epsilon(0.02));
    const Prediction huge = predict_step(llama_70b_on_h100(8), max_planned_batch, max_planned_context);
    CHECK_FALSE(huge.cost.fits);
    CHECK_FALSE(huge.cost.flops.has_value());  // its count could pass 2^64: left out, not wrapped
}

TEST_CASE("the planner's answers are the boundary: the answer meets the target, one more does not") {
    const Deployment deployment = llama_70b_on_h100(8);
    // Memory binds first at 8K: (80e9 - 17638426624) / (8192·40960) = 185.9 sequences.
    const PlanAnswer batch = max_batch_for_target(deployment, 8192, 0.050);
    REQUIRE(batch.value.has_value());
    CHECK(*batch.value == 185);
    CHECK(batch.limit == Limit::memory);

    // A tight target binds before memory: each sequence adds its cache's bandwidth time.
    const double tpot_s = predict_step(deployment, 40, 8192).tpot_s;
    const PlanAnswer tight = max_batch_for_target(deployment, 8192, tpot_s);
    CHECK(*tight.value == 40);
    CHECK(tight.limit == Limit::weight_bandwidth);
    CHECK(tpot_s < 0.050);

    const PlanAnswer context = max_context_for_target(deployment, 16, 0.050);
    REQUIRE(context.value.has_value());
    CHECK(meets_target(predict_step(deployment, 16, *context.value), 0.050));
    CHECK_FALSE(meets_target(predict_step(deployment, 16, *context.value + 1), 0.050));

    const PlanAnswer too_fast = max_batch_for_target(deployment, 8192, 1e-6);
    CHECK(*too_fast.value == 0);
    CHECK(too_fast.limit == Limit::weight_bandwidth);
}

TEST_CASE("a sliding window on every layer makes every context alike: the longest is unlimited") {
    Deployment deployment = llama_70b_on_h100(1);
    deployment.model = preset("mistral-7b");
    deployment.model.layer_windows.assign(deployment.model.n_layers, 4096);  // Mistral 7B v0.1's window
    CHECK_FALSE(max_context_for_target(deployment, 1, 1.0).value.has_value());
    CHECK(predict_step(deployment, 1, 100000).cost.kv_bytes == predict_step(deployment, 1, 4096).cost.kv_bytes);
}

TEST_CASE("a window on some layers caps only theirs: Gemma 2's global layers keep the whole context") {
    Deployment deployment = llama_70b_on_h100(1);
    deployment.model = preset("gemma-2-9b");
    const std::uint64_t n_layers = deployment.model.n_layers;  // 42, every other one local with 4096
    const std::uint64_t per_position = 2 * deployment.model.n_kv_heads * deployment.model.head_dim * 2;  // K and V, f16
    CHECK(predict_step(deployment, 1, 8192).cost.kv_bytes == (n_layers / 2) * per_position * (8192 + 4096));
}

TEST_CASE("a shared prefix is held and read once on the global layers, as kvbench memory bills it") {
    Deployment deployment = llama_70b_on_h100(1);
    const std::uint64_t per_position = 2 * 8 * 128 * 2;  // Llama-3-70B: K and V of 8 heads of 128, f16
    deployment.shared_prefix = 2048;
    // 80 layers of 2048 tokens once and 16 · 6144 of each sequence's own.
    CHECK(predict_step(deployment, 16, 8192).cost.kv_bytes == 80 * per_position * (2048 + 16 * 6144));
    for (const char* name : {"llama-3-70b", "gemma-2-9b", "gemma-3-27b"}) {
        CAPTURE(name);
        deployment.model = preset(name);
        CacheLayout layout;
        layout.shared_prefix = 2048;
        CHECK(predict_step(deployment, 16, 8192).cost.kv_bytes == batch_kv_bytes(deployment.model, 8192, 16, layout));
    }
    // Two pipeline stages hold their own layers' prefix: the two halves of the whole (every
    // layer global, so that the halves are alike).
    deployment.model = preset("llama-3-70b");
    const std::uint64_t whole = predict_step(deployment, 16, 8192).cost.kv_bytes;
    deployment.parallelism.pp = 2;
    CHECK(2 * predict_step(deployment, 16, 8192).cost.kv_bytes == whole);
    // The answers at the boundary, the context's past the prefix: more fit than without it.
    deployment = llama_70b_on_h100(8);
    const PlanAnswer unshared = max_batch_for_target(deployment, 8192, 0.050);
    deployment.shared_prefix = 4096;
    const PlanAnswer batch = max_batch_for_target(deployment, 8192, 0.050);
    REQUIRE(batch.value.has_value());
    CHECK(*batch.value > *unshared.value);
    CHECK(meets_target(predict_step(deployment, *batch.value, 8192), 0.050));
    CHECK_FALSE(meets_target(predict_step(deployment, *batch.value + 1, 8192), 0.050));
    const PlanAnswer context = max_context_for_target(deployment, 16, 0.050);
    REQUIRE(context.value.has_value());
    CHECK(*context.value > 4096);
    CHECK(meets_target(predict_step(deployment, 16, *context.value), 0.050));
    CHECK_FALSE(meets_target(predict_step(deployment, 16, *context.value + 1), 0.050));
    // Not one token of its own meets a target below the weights' time.
    CHECK(*max_context_for_target(deployment, 16, 1e-6).value == 0);
}

TEST_CASE("calibration takes each path's median roofline fraction, and a missing path the other's") {
    const Calibration both = calibrate({{DecodePath::cached, 0.5},
                                        {DecodePath::cached, 0.9},
                                        {DecodePath::cached, 0.7},
                                        {DecodePath::uncached, 0.2},
                                        {DecodePath::uncached, 0.4}});
    CHECK(both.efficiency.bandwidth == doctest::Approx(0.7));
    CHECK(both.efficiency.compute == doctest::Approx(0.3));
    CHECK(both.n_cached == 3);
    CHECK(both.n_uncached == 2);
    const Calibration cached_only = calibrate({{DecodePath::cached, 0.6}});
    CHECK(cached_only.efficiency.compute == doctest::Approx(0.6));
}

TEST_CASE("per batch, the fit recovers the two streams' efficiencies from points made with them") {
    // Times made exactly as the model predicts them: weights at 0.8 of the peak, the cache at 0.5
    // at B = 1; at B = 4 the weights at 0.6 and the cache at 0.4.
    const auto point = [](std::uint64_t batch, double weights_s, double kv_s, double e_weights, double e_kv) {
        return CalibrationPoint{DecodePath::cached, 0.5, batch, weights_s, kv_s, weights_s / e_weights + kv_s / e_kv};
    };
    const Calibration calibration = calibrate({point(1, 1e-3, 1e-4, 0.8, 0.5), point(1, 1e-3, 1e-3, 0.8, 0.5),
                                               point(4, 1e-3, 4e-4, 0.6, 0.4), point(4, 1e-3, 4e-3, 0.6, 0.4),
                                               point(4, 1e-3, 2e-3, 0.6, 0.4)});
    REQUIRE(calibration.efficiency.by_batch.size() == 2);
    CHECK(calibration.efficiency.by_batch[0].batch == 1);
    CHECK(calibration.efficiency.by_batch[0].weights == doctest::Approx(0.8));
    CHECK(calibration.efficiency.by_batch[0].kv == doctest::Approx(0.5));
    CHECK(calibration.efficiency.by_batch[1].weights == doctest::Approx(0.6));
    CHECK(calibration.efficiency.by_batch[1].kv == doctest::Approx(0.4));
    // B = 2 is halfway in log2 B: its seconds per byte are the mean of B = 1's and B = 4's.
    const StreamEfficiency between = calibration.efficiency.at(2);
    CHECK(1 / between.weights == doctest::Approx((1 / 0.8 + 1 / 0.6) / 2));
    CHECK(1 / between.kv == doctest::Approx((1 / 0.5 + 1 / 0.4) / 2));
    CHECK(calibration.efficiency.at(64).weights == doctest::Approx(0.6));
}

TEST_CASE("a fit above the peak is billed at 1 and named with its batch and fitted value") {
    // At B = 1 the cache's rows ran at twice the peak (e_kv = 2), the weights at half of it.
    const auto point = [](double weights_s, double kv_s) {
        return CalibrationPoint{DecodePath::cached, 0.5, 1, weights_s, kv_s, weights_s / 0.5 + kv_s / 2};
    };
    const Calibration calibration =
        calibrate({point(1e-3, 1e-4), point(1e-3, 1e-3), {DecodePath::uncached, 1.25}, {DecodePath::uncached, 1.35}});
    REQUIRE(calibration.efficiency.by_batch.size() == 1);
    CHECK(calibration.efficiency.by_batch[0].weights == doctest::Approx(0.5));
    CHECK(calibration.efficiency.by_batch[0].kv == 1);
    CHECK(calibration.efficiency.compute == 1);
    REQUIRE(calibration.capped.size() == 2);
    CHECK(calibration.capped[0].efficiency == "compute, the uncached rows' median,");
    CHECK(calibration.capped[0].fitted == doctest::Approx(1.3));
    CHECK(calibration.capped[1].efficiency == "the KV stream's fit at B=1");
    CHECK(calibration.capped[1].fitted == doctest::Approx(2));
}

TEST_CASE("the cached rows' median above the peak is reported capped, its value kept") {
    const Calibration calibration = calibrate({{DecodePath::cached, 1.2, 1}, {DecodePath::cached, 1.4, 1}});
    CHECK(calibration.efficiency.bandwidth == 1);
    CHECK(calibration.bandwidth_median == doctest::Approx(1.3));
}

TEST_CASE("a batch measured at one context takes its median fraction for both streams") {
    const Calibration calibration = calibrate({{DecodePath::cached, 0.3, 2, 1e-3, 1e-4, 5e-3},
                                               {DecodePath::cached, 0.5, 2, 1e-3, 1e-4, 4e-3}});
    REQUIRE(calibration.efficiency.by_batch.size() == 1);
    CHECK(calibration.efficiency.by_batch[0].weights == doctest::Approx(0.4));
    CHECK(calibration.efficiency.by_batch[0].kv == doctest::Approx(0.4));
}

TEST_CASE("the step bills each stream at its own efficiency") {
    Deployment deployment = llama_70b_on_h100(8);
    deployment.efficiency = {1, 1, {{1, 0.5, 0.25}}};
    const Prediction prediction = predict_step(deployment, 1, 8192);
    const double bandwidth = deployment.hardware.bandwidth_bytes_per_s;
    CHECK(prediction.bandwidth_time_s ==
          doctest::Approx(static_cast<double>(prediction.cost.weight_bytes) / (0.5 * bandwidth) +
                          static_cast<double>(prediction.cost.kv_bytes) / (0.25 * bandwidth)));
}

TEST_CASE("--hardware FILE reads KEY=VALUE lines or one JSON profile") {
    const test::ScratchDir scratch("hardware_file");
    const std::string lines = (scratch.path / "gpu.txt").string();
    std::ofstream(lines) << "# my accelerator\nname = my-gpu\nbw = 2TB/s\nflops=500T  # dense\n\nmem=64GB\n";
    const HardwareProfile typed = parse_hardware_option(lines);
    CHECK(typed.name == "my-gpu");
    CHECK(typed.bandwidth_bytes_per_s == doctest::Approx(2e12));
    CHECK(typed.peak_flops_of(ComputeType::bf16).value_or(0) == doctest::Approx(500e12));
    CHECK(typed.memory_bytes.value_or(0) == 64'000'000'000);

    const std::string json = (scratch.path / "gpu.json").string();
    std::ofstream(json) << R"({"profiles": [{"name": "lab-gpu", "description": "a lab part", "kind": "gpu",
        "memory_gb": 40, "bandwidth_gb_per_s": 1500,
        "peak_tflops": {"f32": 20, "bf16": 300, "fp8": null, "int8": 600}, "status": "partial"}]})";
    const HardwareProfile from_json = parse_hardware_option(json);
    CHECK(from_json.name == "lab-gpu");
    CHECK(from_json.bandwidth_bytes_per_s == doctest::Approx(1.5e12));
    CHECK_FALSE(from_json.peak_flops_of(ComputeType::fp8).has_value());

    const std::string broken = (scratch.path / "broken.txt").string();
    std::ofstream(broken) << "bw=2TB/s\nfast\n";
    CHECK_THROWS_WITH_AS(parse_hardware_option(broken), doctest::Contains("line 2"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_hardware_option((scratch.path / "none.txt").string()),
                         doctest::Contains("no such file"), ConfigError);
}

}  // namespace kvbench
