// The planner: presets, config.json reading, and the memory bill's arithmetic and capacity answers.
#include "cli/model_options.hpp"
#include "cli/plan_sheet.hpp"
#include "kvbench/engine/config.hpp"
#include "kvbench/plan/hf_config.hpp"
#include "kvbench/plan/memory_plan.hpp"
#include "kvbench/plan/memory_rows.hpp"
#include "kvbench/plan/model_preset.hpp"
#include "builtin_preset.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace kvbench {

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(KVBENCH_TEST_DATA) + "/hf/" + name);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

using test::preset;

// The message of the ConfigError that parsing `json_text` as a preset file throws.
std::string preset_error(const std::string& json_text) {
    try {
        static_cast<void>(parse_presets(json_text, "my-models.json"));
    } catch (const ConfigError& error) {
        return error.what();
    }
    FAIL("no ConfigError");
    return "";
}

std::string one_record(const std::string& fields) {
    return R"({"models": [{"name": "tiny", "source": {"repo": "me/tiny", "file": "config.json"}, )" + fields + "}]}";
}

const std::string good_fields =
    R"("layers": 2, "hidden_size": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "params": 1000)";

}  // namespace

TEST_CASE("every built-in preset's kv bytes per token are its published config's, computed by hand") {
    // f16 bytes per token = 2 (K and V) x layers x KV heads x head dim x 2 bytes, each figure
    // read from the model's Hugging Face config.json (fields named per model; head dim is
    // hidden_size / num_attention_heads unless the config gives head_dim).
    struct Pinned {
        const char* name;
        std::uint64_t f16_bytes_per_token;
    };
    const Pinned pinned[] = {
        // GPT-2 (MHA): n_layer, n_embd; heads x head dim = n_embd, so 2 x n_layer x n_embd x 2.
        {"gpt2", 36864},          // n_layer 12, n_embd 768 (n_head 12)
        {"gpt2-medium", 98304},   // n_layer 24, n_embd 1024 (n_head 16)
        // gpt2-large's config.json was not found in a public repository; its figures are those
        // of the GPT-2 paper (Radford et al. 2019, table 2: 36 layers, d_model 1280), which the
        // transcriptions of the config agree with (n_head 20).
        {"gpt2-large", 184320},   // n_layer 36, n_embd 1280
        {"gpt2-xl", 307200},      // n_layer 48, n_embd 1600 (n_head 25)
        {"opt-13b", 819200},      // num_hidden_layers 40, hidden_size 5120, num_attention_heads 40 (MHA)
        {"llama-2-7b", 524288},   // num_hidden_layers 32, num_key_value_heads 32, 4096 / 32 heads = 128
        {"llama-2-13b", 819200},  // num_hidden_layers 40, num_key_value_heads 40, 5120 / 40 = 128
        {"llama-2-70b", 327680},  // num_hidden_layers 80, num_key_value_heads 8, 8192 / 64 = 128
        {"llama-3-8b", 131072},   // num_hidden_layers 32, num_key_value_heads 8, 4096 / 32 = 128
        {"llama-3-70b", 327680},  // num_hidden_layers 80, num_key_value_heads 8, 8192 / 64 = 128
        {"mistral-7b", 131072},   // num_hidden_layers 32, num_key_value_heads 8, 4096 / 32 = 128
        {"mixtral-8x7b", 131072}, // num_hidden_layers 32, num_key_value_heads 8, 4096 / 32 = 128
        // Falcon-7B: n_layer 32, multi_query true without new_decoder_architecture: one KV head;
        // hidden_size 4544 / n_head 71 = 64.
        {"falcon-7b", 8192},
        // Falcon-40B: n_layer 60, new_decoder_architecture true, so n_head_kv 8 KV heads;
        // hidden_size 8192 / n_head 128 = 64.
        {"falcon-40b", 122880},
        {"qwen2-7b", 57344},      // num_hidden_layers 28, num_key_value_heads 4, 3584 / 28 = 128
        {"gemma-7b", 458752},     // num_hidden_layers 28, num_key_value_heads 16, head_dim 256 (not 3072 / 16)
        {"phi-3-mini", 393216},   // num_hidden_layers 32, num_key_value_heads 32, 3072 / 32 = 96
        {"llama-3.1-8b", 131072},     // 2 x 32 layers x 8 KV heads x 128 x 2
        {"llama-3.2-1b", 32768},      // 2 x 16 x 8 x head_dim 64 (explicit; 2048 / 32 = 64) x 2
        {"llama-3.2-3b", 114688},     // 2 x 28 x 8 x head_dim 128 (explicit; 3072 / 24) x 2
        {"llama-3.3-70b", 327680},    // 2 x 80 x 8 x 128 x 2
        {"qwen2.5-7b", 57344},        // 2 x 28 x 4 x 128 x 2 (use_sliding_window false: no window)
        {"qwen2.5-72b", 327680},      // 2 x 80 x 8 x 128 x 2
        {"qwen3-8b", 147456},         // 2 x 36 x 8 x head_dim 128 x 2
        {"qwen3-32b", 262144},        // 2 x 64 x 8 x head_dim 128 (not 5120 / 64 = 80) x 2
        {"qwen3-30b-a3b", 98304},     // 2 x 48 x 4 x head_dim 128 x 2 (experts change no cache)
        {"gemma-2b", 18432},          // 2 x 18 x 1 (MQA) x 256 x 2
        {"gemma-2-2b", 106496},       // 2 x 26 x 4 x 256 x 2 (windows cap positions, not bytes per token)
        {"gemma-2-9b", 344064},       // 2 x 42 x 8 x 256 x 2
        {"gemma-2-27b", 376832},      // 2 x 46 x 16 x head_dim 128 x 2
        {"gemma-3-4b", 139264},       // text_config: 2 x 34 x 4 x 256 x 2
        {"gemma-3-12b", 393216},      // text_config: 2 x 48 x 8 x 256 x 2
        {"gemma-3-27b", 507904},      // text_config: 2 x 62 x 16 x head_dim 128 x 2
        {"mistral-nemo-12b", 163840}, // 2 x 40 x 8 x head_dim 128 (not 5120 / 32 = 160) x 2
        {"phi-3.5-mini", 393216},     // 2 x 32 x 32 x 96 x 2
        {"phi-4", 204800},            // 2 x 40 x 10 x 128 x 2
        // Latent attention caches kv_lora_rank + qk_rope_head_dim per layer, whatever the heads.
        {"deepseek-v2-lite", 31104},  // 27 x (512 + 64) x 2
        {"deepseek-v3", 70272},       // 61 x (512 + 64) x 2
        {"gpt-oss-20b", 49152},       // 2 x 24 x 8 x head_dim 64 (not 2880 / 64 = 45) x 2
        {"gpt-oss-120b", 73728},      // 2 x 36 x 8 x 64 x 2
    };
    // Every preset is pinned: one added to data/models.json without a line here fails.
    CHECK(builtin_presets().size() == std::size(pinned));
    for (const Pinned& p : pinned) {
        CAPTURE(p.name);
        CHECK(kv_bytes_per_token(preset(p.name), KvDtype::f16) == p.f16_bytes_per_token);
    }
    for (const ModelPreset& model : builtin_presets()) {
        CAPTURE(model.name);
        CHECK(std::any_of(std::begin(pinned), std::end(pinned), [&](const Pinned& p) { return p.name == model.name; }));
    }
}

TEST_CASE("kv bytes per token scale with the element type; int8 and int4 add one f32 scale per vector") {
    // llama-3-8b: 2 x 32 layers x 8 KV heads = 512 cached vectors of 128 elements per token.
    const ModelPreset& model = preset("llama-3-8b");
    CHECK(kv_bytes_per_token(model, KvDtype::f32) == 262144);
    CHECK(kv_bytes_per_token(model, KvDtype::bf16) == 131072);
    CHECK(kv_bytes_per_token(model, KvDtype::fp8) == 65536);
    CHECK(kv_bytes_per_token(model, KvDtype::int8) == 65536 + 512 * 4);
    CHECK(kv_bytes_per_token(model, KvDtype::int4) == 32768 + 512 * 4);
}

TEST_CASE("the issue's reference figures: llama-2-7b and llama-3-8b at f16") {
    CHECK(kv_bytes_per_token(preset("llama-2-7b"), KvDtype::f16) == 524288);
    CHECK(kv_bytes_per_token(preset("llama-3-8b"), KvDtype::f16) == 131072);
    // Grouping divides the cache by H / G: llama-3-8b's MHA twin is llama-2-7b's size.
    CHECK(kv_bytes_per_token(with_kv_heads(preset("llama-3-8b"), 32), KvDtype::f16) == 524288);
}

TEST_CASE("presets the issue names are present, gemma's head dim is not hidden / heads") {
    for (const char* name : {"gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "opt-13b", "llama-2-7b", "llama-2-13b",
                             "llama-2-70b", "llama-3-8b", "llama-3-70b", "mistral-7b", "mixtral-8x7b", "falcon-7b",
                             "falcon-40b", "qwen2-7b", "gemma-7b", "phi-3-mini"}) {
        CAPTURE(name);
        CHECK(find_preset(builtin_presets(), name) != nullptr);
    }
    CHECK(preset("gemma-7b").head_dim == 256);
    CHECK(preset("gemma-7b").model_dim / preset("gemma-7b").n_heads == 192);
    CHECK(preset("mistral-7b").layer_windows == std::vector<std::uint32_t>(32, 4096));
    CHECK(preset("falcon-7b").n_kv_heads == 1);
}

TEST_CASE("a sliding window caps the cached tokens, blocks round them up") {
    const ModelPreset& windowed = preset("mistral-7b");
    CacheLayout layout;
    const SequenceBill long_context = sequence_bill(windowed, 32768, layout);
    CHECK(long_context.cached_tokens == 4096);
    CHECK(long_context.kv_bytes == 4096 * kv_bytes_per_token(windowed, KvDtype::f16));

    const ModelPreset model = with_window(windowed, std::nullopt);
    layout.block_size = 16;
    const SequenceBill paged = sequence_bill(model, 1000, layout);
    CHECK(paged.cached_tokens == 1000);
    CHECK(paged.allocated_tokens == 1008);
    CHECK(paged.waste_bytes == 8 * kv_bytes_per_token(model, KvDtype::f16));
    CHECK(sequence_bill(model, 1024, layout).waste_bytes == 0);
}

TEST_CASE("capacity answers are exact at the boundary: the answer fits, one more does not") {
    const std::uint64_t gib = std::uint64_t{1} << 30;
    for (const char* name : {"llama-3-8b", "llama-2-7b", "mistral-7b", "falcon-7b", "gemma-7b", "phi-3-mini"}) {
        for (KvDtype dtype : {KvDtype::f16, KvDtype::int8, KvDtype::int4}) {
            for (std::uint64_t block : {std::uint64_t{1}, std::uint64_t{16}}) {
                for (std::uint64_t budget : {gib, 7 * gib + 12345, 40 * gib + 1}) {
                    // Without its window, so that the cache grows without bound.
                    const ModelPreset model = with_window(preset(name), std::nullopt);
                    CacheLayout layout;
                    layout.kv_dtype = dtype;
                    layout.block_size = block;
                    CAPTURE(name);
                    CAPTURE(kv_dtype_info(dtype).name);
                    CAPTURE(block);
                    CAPTURE(budget);
                    const auto fits = [&](std::uint64_t seq, std::uint64_t batch) {
                        return batch * sequence_bill(model, seq, layout).kv_bytes <= budget;
                    };
                    const std::uint64_t batch = max_batch(model, 8192, layout, budget);
                    if (batch > 0) CHECK(fits(8192, batch));
                    CHECK_FALSE(fits(8192, batch + 1));

                    const std::optional<std::uint64_t> seq = max_context(model, 3, layout, budget);
                    REQUIRE(seq.has_value());  // no window here: the cache grows without bound
                    if (*seq > 0) CHECK(fits(*seq, 3));
                    CHECK_FALSE(fits(*seq + 1, 3));
                }
            }
        }
    }
}

TEST_CASE("a window that fits the budget makes every context fit") {
    const ModelPreset& model = preset("mistral-7b");
    CacheLayout layout;
    const std::uint64_t window_bytes = sequence_bill(model, 4096, layout).kv_bytes;
    CHECK_FALSE(max_context(model, 2, layout, 2 * window_bytes).has_value());
    const std::optional<std::uint64_t> short_of_it = max_context(model, 2, layout, 2 * window_bytes - 1);
    REQUIRE(short_of_it.has_value());
    CHECK(*short_of_it == 4095);
}

TEST_CASE("a shared prefix is billed once, each sequence its own tokens after it (by hand)") {
    // llama-3-8b at f16: 32 layers of 8 KV heads of 128, 4096 bytes a layer-position, 128 KiB a
    // token. A 2048-token prompt shared by 16 sequences of 8192: 2048 tokens once, 6144 each.
    const ModelPreset model = with_window(preset("llama-3-8b"), std::nullopt);
    CacheLayout layout;
    layout.shared_prefix = 2048;
    const std::uint64_t per_token = 131072;
    CHECK(prefix_bill(model, layout).kv_bytes == 2048 * per_token);
    CHECK(sequence_bill(model, 8192, layout).kv_bytes == 6144 * per_token);
    CHECK(batch_kv_bytes(model, 8192, 16, layout) == (2048 + 16 * 6144) * per_token);
    CHECK(prefix_bill(model, CacheLayout{}).kv_bytes == 0);
    // Blocks of 16 and a prefix of 2050: the prefix's last block is its own (2 tokens in 16), and
    // each sequence's 6142 own tokens take 384 blocks.
    layout.block_size = 16;
    layout.shared_prefix = 2050;
    CHECK(prefix_bill(model, layout).kv_bytes == 2064 * per_token);
    CHECK(prefix_bill(model, layout).waste_bytes == 14 * per_token);
    CHECK(sequence_bill(model, 8192, layout).kv_bytes == 6144 * per_token);
    // The capacity answers at the boundary: the answer fits, one more does not.
    const std::uint64_t budget = (std::uint64_t{9} << 30) + 12345;
    const auto fits = [&](std::uint64_t seq, std::uint64_t batch) { return batch_kv_bytes(model, seq, batch, layout) <= budget; };
    const std::uint64_t batch = max_batch(model, 8192, layout, budget);
    CHECK(batch == ((std::uint64_t{9} << 30) + 12345 - 2064 * per_token) / (6144 * per_token));
    CHECK(fits(8192, batch));
    CHECK_FALSE(fits(8192, batch + 1));
    const std::optional<std::uint64_t> seq = max_context(model, 16, layout, budget);
    REQUIRE(seq.has_value());
    CHECK(*seq > 2050);
    CHECK(fits(*seq, 16));
    CHECK_FALSE(fits(*seq + 1, 16));
    // A budget below the prefix holds nothing.
    CHECK(max_batch(model, 8192, layout, 2064 * per_token - 1) == 0);
    CHECK(max_context(model, 1, layout, 2064 * per_token - 1) == std::optional<std::uint64_t>(0));
}

TEST_CASE("a window layer's sequences keep their own tokens: only global layers share the prefix") {
    // gemma-3-27b: 62 layers, one global in six; the prefix is billed on its global layers only.
    const ModelPreset& model = preset("gemma-3-27b");
    std::size_t global = 0;
    for (const std::uint32_t window : model.layer_windows) global += window == 0 ? 1 : 0;
    REQUIRE(global > 0);
    CacheLayout layout;
    layout.shared_prefix = 16384;
    const std::uint64_t per_layer_position = kv_bytes_per_token(model, KvDtype::f16) / model.n_layers;
    CHECK(prefix_bill(model, layout).kv_bytes == global * 16384 * per_layer_position);
    CHECK(sequence_bill(model, 32768, layout).kv_bytes ==
          (global * 16384 + (model.n_layers - global) * 1024) * per_layer_position);
    // Mistral's window on every layer: nothing is shared.
    CHECK(prefix_bill(preset("mistral-7b"), layout).kv_bytes == 0);
}

TEST_CASE("weights at each dtype: bits per parameter, int4 rounded up to whole bytes") {
    CHECK(weight_bytes(8030261248, KvDtype::f16) == 16060522496);
    CHECK(weight_bytes(8030261248, KvDtype::f32) == 32121044992);
    CHECK(weight_bytes(3, KvDtype::int4) == 2);
    CHECK(weight_bytes(3, KvDtype::int8) == 3);
}

TEST_CASE("plan_memory answers with weights taken off the budget, and adds the twins") {
    MemoryRequest request;
    request.models = {preset("llama-3-8b")};
    request.seq = {8192};
    request.batch = {16};
    request.kv_dtypes = {KvDtype::f16};
    request.budget_bytes = std::uint64_t{64} << 30;
    const std::vector<MemoryRow> rows = plan_memory(request);
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].grouping == "GQA-8");
    CHECK(rows[1].grouping == "MHA");
    CHECK(rows[2].grouping == "MQA");
    CHECK(rows[0].kv_bytes_total == 16 * std::uint64_t{1 << 30});
    const std::uint64_t kv_budget = *request.budget_bytes - rows[0].weight_bytes;
    CHECK(*rows[0].max_batch == kv_budget / (std::uint64_t{1} << 30));
    CHECK(rows[0].fits);
    CHECK_FALSE(rows[1].fits);  // 64 GiB of MHA cache and 16.5 GiB of weights pass 64 GiB
    // Each twin is billed its own weights: K and V projections G heads wide, 2·L·D·dh a head.
    const std::uint64_t per_kv_head = 2 * 32 * 4096 * 128;
    CHECK(rows[1].n_params == rows[0].n_params + 24 * per_kv_head);
    CHECK(rows[2].n_params == rows[0].n_params - 7 * per_kv_head);
    CHECK(rows[1].weight_bytes == weight_bytes(rows[1].n_params, KvDtype::f16));
    CHECK(rows[1].total_bytes == rows[1].weight_bytes + rows[1].kv_bytes_total);
    const std::uint64_t mha_kv_budget = *request.budget_bytes - rows[1].weight_bytes;
    CHECK(*rows[1].max_batch == mha_kv_budget / (std::uint64_t{4} << 30));
    CHECK(*rows[1].max_batch == 11);  // 12 with the GQA model's weights
}

TEST_CASE("with the parameter count unknown, weights+KV and the capacity answers are unknown too") {
    MemoryRequest request;
    ModelPreset model = preset("llama-3-8b");
    model.n_params = 0;  // a config.json without --params
    request.models = {model};
    request.seq = {8192};
    request.batch = {1};
    request.kv_dtypes = {KvDtype::f16};
    request.budget_bytes = std::uint64_t{64} << 30;
    const std::vector<MemoryRow> rows = plan_memory(request);
    REQUIRE(rows.size() == 3);  // the model and its MHA and MQA twins
    for (const MemoryRow& row : rows) {
        CHECK(row.kv_bytes_total > 0);
        CHECK_FALSE(row.total_bytes.has_value());  // not the cache alone
        CHECK_FALSE(row.budget_bytes.has_value());
        CHECK_FALSE(row.fits);
        CHECK_FALSE(row.max_batch.has_value());
        CHECK_FALSE(row.max_seq.has_value());
        CHECK_FALSE(row.max_seq_unlimited);
    }
}

TEST_CASE("a twin's N* and its weights count the same projections") {
    MemoryRequest request;
    request.models = {preset("llama-3-8b")};
    request.seq = {8192};
    request.batch = {1};
    request.kv_dtypes = {KvDtype::f16};
    const std::vector<MemoryRow> rows = plan_memory(request);
    REQUIRE(rows.size() == 3);
    // N* is where the step's KV bytes meet its decoder weights' bytes (embeddings aside), so
    // between two twins the N* × KV-bytes difference is their weights' difference.
    const auto decoder_weight_bytes = [](const MemoryRow& row) { return *row.n_star * row.kv_bytes_per_token; };
    for (const MemoryRow* twin : {&rows[1], &rows[2]}) {
        REQUIRE(twin->n_star.has_value());
        const double from_n_star = static_cast<double>(decoder_weight_bytes(*twin)) - static_cast<double>(decoder_weight_bytes(rows[0]));
        const double from_weights = static_cast<double>(twin->weight_bytes) - static_cast<double>(rows[0].weight_bytes);
        // N* is a whole number of tokens: within one token's KV bytes of each.
        CHECK(std::abs(from_n_star - from_weights) <= static_cast<double>(twin->kv_bytes_per_token + rows[0].kv_bytes_per_token));
    }
}

TEST_CASE("a broken preset file names the file, the model and the field") {
    CHECK_NOTHROW(parse_presets(one_record(good_fields), "my-models.json"));

    std::string message = preset_error(one_record(R"("layers": 2, "hidden_size": 64, "heads": 4, "head_dim": 16, "params": 1)"));
    CHECK(message.find("my-models.json") != std::string::npos);
    CHECK(message.find("'tiny'") != std::string::npos);
    CHECK(message.find("'kv_heads': missing") != std::string::npos);

    message = preset_error(one_record(R"("layers": "two", "hidden_size": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "params": 1)"));
    CHECK(message.find("'layers': must be a whole number") != std::string::npos);

    message = preset_error(one_record(R"("layers": 2, "hidden_size": 64, "heads": 4, "kv_heads": 3, "head_dim": 16, "params": 1)"));
    CHECK(message.find("'kv_heads': 3 does not divide heads 4") != std::string::npos);

    message = preset_error(one_record(R"("layers": 0, "hidden_size": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "params": 1)"));
    CHECK(message.find("'layers': must be at least 1") != std::string::npos);

    message = preset_error(R"({"models": [{"source": {"repo": "a", "file": "b"}}]})");
    CHECK(message.find("model #1: field 'name': missing") != std::string::npos);

    const std::string record = one_record(good_fields);
    const std::string twice = record.substr(0, record.size() - 2) + "," + record.substr(12, record.size() - 14) + "]}";
    CHECK(preset_error(twice).find("'name': appears twice") != std::string::npos);
    // --model reads a name in any case: tiny and TINY would leave the choice to the order.
    const std::string one_case_apart = record.substr(0, record.size() - 2) + "," +
                                       record.substr(12, record.size() - 14).replace(10, 4, "TINY") + "]}";
    CHECK(preset_error(one_case_apart).find("model 'TINY': field 'name': differs from model 'tiny' only in case") !=
          std::string::npos);
    CHECK(preset_error("{\"models\": [").find("my-models.json: not JSON") != std::string::npos);
}

TEST_CASE("an unknown model suggests the closest preset") {
    try {
        static_cast<void>(find_model(builtin_presets(), "llama3-8b"));
        FAIL("no ConfigError");
    } catch (const ConfigError& error) {
        const std::string message = error.what();
        CHECK(message.find("--model llama3-8b: unknown model (did you mean llama-3-8b?)") != std::string::npos);
    }
}

TEST_CASE("config.json in each family's spelling reads as the preset's shape") {
    struct Case {
        const char* file;
        const char* preset;
    };
    for (const Case& c : {Case{"llama-3-8b.json", "llama-3-8b"}, Case{"llama-2-7b.json", "llama-2-7b"},
                          Case{"gpt2.json", "gpt2"}, Case{"opt-13b.json", "opt-13b"},
                          Case{"falcon-7b.json", "falcon-7b"}, Case{"falcon-40b.json", "falcon-40b"},
                          Case{"falcon-40b-rw.json", "falcon-40b"}, Case{"gemma-7b.json", "gemma-7b"},
                          Case{"mistral-7b.json", "mistral-7b"}, Case{"qwen2-7b.json", "qwen2-7b"}}) {
        CAPTURE(c.file);
        const ModelPreset read = parse_hf_config(fixture(c.file), c.file, c.preset);
        const ModelPreset& expected = preset(c.preset);
        CHECK(read.n_layers == expected.n_layers);
        CHECK(read.model_dim == expected.model_dim);
        CHECK(read.n_heads == expected.n_heads);
        CHECK(read.n_kv_heads == expected.n_kv_heads);
        CHECK(read.head_dim == expected.head_dim);
        CHECK(read.layer_windows == expected.layer_windows);
        CHECK(read.ffn_dim == expected.ffn_dim);
        CHECK(read.max_position_embeddings == expected.max_position_embeddings);
        CHECK(read.n_params == 0);
    }
}

TEST_CASE("rope_theta is read from config.json as the preset carries it, and 10000 where it is absent") {
    struct Case {
        const char* file;
        const char* preset;
        double theta;
    };
    for (const Case& c : {Case{"llama-3-8b.json", "llama-3-8b", 500000.0}, Case{"mistral-7b.json", "mistral-7b", 10000.0},
                          Case{"gpt-oss-120b.json", "gpt-oss-120b", 150000.0}, Case{"gpt2.json", "gpt2", 10000.0}}) {
        CAPTURE(c.file);
        const ModelPreset read = parse_hf_config(fixture(c.file), c.file, c.preset);
        CHECK(read.rope_theta == c.theta);
        CHECK(preset(c.preset).rope_theta == c.theta);
        CHECK(model_config_of(read).rope_theta == c.theta);
    }
    CHECK(preset("llama-3.2-1b").rope_theta == 500000.0);
    CHECK(preset("qwen2.5-7b").rope_theta == 1000000.0);
    CHECK(preset("gemma-3-27b").rope_theta == 1000000.0);  // its global layers'
    CHECK_THROWS_WITH_AS(parse_hf_config(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
                                             "num_attention_heads": 4, "rope_theta": 0})",
                                         "bad.json", "bad"),
                         doctest::Contains("field 'rope_theta': must be a positive number, not 0"), ConfigError);
}

TEST_CASE("falcon's multi_query means one kv head, whatever num_kv_heads says") {
    // The fixture carries num_kv_heads = 71 on purpose: multi_query must win.
    CHECK(parse_hf_config(fixture("falcon-7b.json"), "f", "f").n_kv_heads == 1);
    // Absent multi_query defaults to true for Falcon, as in transformers' FalconConfig.
    CHECK(parse_hf_config(R"({"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1})",
                          "f", "f")
              .n_kv_heads == 1);
    // Elsewhere an absent KV head count means MHA.
    CHECK(parse_hf_config(R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1})",
                          "f", "f")
              .n_kv_heads == 4);
}

TEST_CASE("a broken config.json names the file and the field") {
    try {
        static_cast<void>(parse_hf_config(fixture("broken-heads.json"), "broken-heads.json", "x"));
        FAIL("no ConfigError");
    } catch (const ConfigError& error) {
        CHECK(std::string(error.what()).find("broken-heads.json: field 'num_key_value_heads'") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(parse_hf_config(R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4})",
                                         "c.json", "x"),
                         doctest::Contains("c.json: field 'num_hidden_layers': missing"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_hf_config(R"({"model_type": "llama", "hidden_size": 64.5, "num_attention_heads": 4,
                                             "num_hidden_layers": 1})",
                                         "c.json", "x"),
                         doctest::Contains("'hidden_size': must be a whole number"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_hf_config(R"({"model_type": "llama", "hidden_size": 66, "num_attention_heads": 4,
                                             "num_hidden_layers": 1})",
                                         "c.json", "x"),
                         doctest::Contains("no head_dim"), ConfigError);
}

// The ConfigError message of reading tests/data/hf/<file>.
std::string config_error(const std::string& file) {
    try {
        static_cast<void>(parse_hf_config(fixture(file), file, "x"));
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "no ConfigError";
}

TEST_CASE("per-layer windows from layer_types, sliding_window_pattern or the family, and text_config") {
    // gpt-oss: layer_types alternate, sliding first; a window of 128 and sink logits.
    const ModelPreset oss = parse_hf_config(fixture("gpt-oss-20b.json"), "gpt-oss-20b.json", "oss");
    CHECK(oss.layer_windows == std::vector<std::uint32_t>{128, 0, 128, 0, 128, 0, 128, 0});
    CHECK(oss.attention_sinks);
    // Gemma 3: sliding_window_pattern 6, layer i global when i + 1 is a multiple of 6.
    const ModelPreset gemma3 = parse_hf_config(fixture("gemma-3-1b.json"), "gemma-3-1b.json", "g");
    REQUIRE(gemma3.layer_windows.size() == 26);
    for (std::size_t layer = 0; layer < 26; ++layer) {
        CAPTURE(layer);
        CHECK(gemma3.layer_windows[layer] == ((layer + 1) % 6 == 0 ? 0u : 512u));
    }
    // Gemma 2 states no pattern: its family's, even layers local.
    const ModelPreset gemma2 = parse_hf_config(fixture("gemma-2-9b.json"), "gemma-2-9b.json", "g");
    CHECK(window_label(gemma2) == "4096:LG");
    CHECK(gemma2.layer_windows == preset("gemma-2-9b").layer_windows);
    // Gemma 3's language model nested in text_config, its pattern the family's.
    const ModelPreset nested = parse_hf_config(fixture("gemma-3-27b.json"), "gemma-3-27b.json", "g");
    CHECK(nested.n_layers == 62);
    CHECK(nested.layer_windows == preset("gemma-3-27b").layer_windows);
    // Qwen2: the window on the layers from max_window_layers on.
    const ModelPreset qwen2 = parse_hf_config(fixture("qwen2-half-window.json"), "q.json", "q");
    REQUIRE(qwen2.layer_windows.size() == 28);
    CHECK(qwen2.layer_windows[13] == 0);
    CHECK(qwen2.layer_windows[14] == 4096);
    CHECK(qwen2.layer_windows[27] == 4096);
}

TEST_CASE("the issue's configs written from their published config.json bill their true KV bytes") {
    CacheLayout f16;
    // Gemma-2-9B, N=8192: 21 global layers x 8192 + 21 local x 4096 positions, 8192 bytes each.
    const ModelPreset gemma2 = parse_hf_config(fixture("gemma-2-9b.json"), "gemma-2-9b.json", "g");
    CHECK(sequence_bill(gemma2, 8192, f16).kv_bytes == 2113929216);
    // Gemma-3-27B, N=32768: 10 global layers x 32768 + 52 local x 1024 positions, 8192 bytes each.
    const ModelPreset gemma3 = parse_hf_config(fixture("gemma-3-27b.json"), "gemma-3-27b.json", "g");
    CHECK(sequence_bill(gemma3, 32768, f16).kv_bytes == 3120562176);
    // GPT-OSS-120B, N=32768: 18 full layers x 32768 + 18 sliding x 128 positions, 2048 bytes each.
    const ModelPreset oss = parse_hf_config(fixture("gpt-oss-120b.json"), "gpt-oss-120b.json", "oss");
    CHECK(sequence_bill(oss, 32768, f16).kv_bytes == 1212678144);
    CHECK(oss.moe == MoeShape{.n_experts = 128, .n_active = 4, .n_shared = 0, .expert_dim = 2880, .n_dense_layers = 0});
    // DeepSeek-V3: 61 x (512 + 64) x 2 bytes per token, the latent cache.
    const ModelPreset deepseek = parse_hf_config(fixture("deepseek-v3.json"), "deepseek-v3.json", "d");
    CHECK(kv_bytes_per_token(deepseek, KvDtype::f16) == 70272);
    CHECK(deepseek.mla == MlaShape{.kv_lora_rank = 512, .rope_dim = 64, .nope_dim = 128, .v_head_dim = 128,
                                   .q_lora_rank = 1536});
    CHECK(deepseek.moe == MoeShape{.n_experts = 256, .n_active = 8, .n_shared = 1, .expert_dim = 2048,
                                   .n_dense_layers = 3});
    CHECK(deepseek.ffn_dim == 18432);
}

TEST_CASE("GPT-OSS-120B on an 80 GiB device, weights at 4 bits: the batch at 32K and the longest context") {
    MemoryRequest request;
    request.models = {preset("gpt-oss-120b")};
    request.seq = {32768};
    request.batch = {1};
    request.kv_dtypes = {KvDtype::f16};
    request.weight_dtype = KvDtype::int4;
    request.twins = false;
    request.budget_bytes = std::uint64_t{80} << 30;
    const std::vector<MemoryRow> rows = plan_memory(request);
    REQUIRE(rows.size() == 1);
    // Weights: 116829156672 / 2 bytes. The cache has 85899345920 - 58414578336 = 27484767584 bytes.
    CHECK(rows[0].weight_bytes == 58414578336);
    // A sequence of 32768 is 18 x (32768 + 128) x 2048 = 1212678144 bytes: 22 of them fit.
    CHECK(*rows[0].max_batch == 22);
    // One sequence: 18 x 2048 x (N + 128) <= 27484767584, so N + 128 <= 745572.
    CHECK(*rows[0].max_seq == 745444);
}

TEST_CASE("N* in the plan: llama-3-8b at bf16 weights and an f16 cache, and never for a capped cache") {
    MemoryRequest request;
    request.models = {preset("llama-3-8b"), preset("gpt2")};
    request.seq = {8192};
    request.batch = {1, 8};
    request.kv_dtypes = {KvDtype::f16};
    request.weight_dtype = KvDtype::bf16;
    request.twins = false;
    const std::vector<MemoryRow> rows = plan_memory(request);
    REQUIRE(rows.size() == 4);
    // docs/counting.md: (41943040 + 176160768) x 2 + 2 x 4096 x 4 norm bytes per layer, over
    // 2 x 8 x 128 x 2 = 4096 bytes per position and layer.
    CHECK(rows[0].n_star == std::optional<std::uint64_t>(106504));
    CHECK(rows[1].n_star == std::optional<std::uint64_t>(13313));
    // GPT-2's MLP has two matrices, not the full layer's three: no N* rather than a wrong one.
    CHECK_FALSE(rows[2].n_star.has_value());
    CHECK_FALSE(rows[2].n_star_never);
    // Mistral with a window of 4096 on every layer: its cache stops at 4096 positions.
    request.models = {preset("mistral-7b")};
    request.batch = {1};
    CHECK(plan_memory(request)[0].n_star_never);
}

TEST_CASE("what kvbench does not model is refused naming the field") {
    const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        REQUIRE(text.find(from) != std::string::npos);
        return text.replace(text.find(from), from.size(), to);
    };
    CHECK_THROWS_WITH_AS(parse_hf_config(replaced(fixture("gpt-oss-20b.json"), "\"full_attention\"",
                                                  "\"chunked_attention\""),
                                         "c.json", "x"),
                         doctest::Contains("c.json: field 'layer_types': layer 1 is \"chunked_attention\""),
                         ConfigError);
    CHECK_THROWS_WITH_AS(parse_hf_config(replaced(fixture("gemma-3-1b.json"), "\"gemma3_text\"", "\"llama4_text\""),
                                         "c.json", "x"),
                         doctest::Contains("c.json: field 'model_type': 'llama4_text' attends in chunks"), ConfigError);
    CHECK_THROWS_WITH_AS(parse_hf_config(replaced(fixture("deepseek-v3.json"), "\"v_head_dim\": 128", "\"x\": 1"),
                                         "c.json", "x"),
                         doctest::Contains("c.json: field 'v_head_dim': missing"), ConfigError);
    CHECK(config_error("mamba-2.8b.json").find("mamba-2.8b.json: field 'model_type': 'mamba' is not a type kvbench "
                                               "knows how its layers attend (it reads gpt2, ") == 0);
    CHECK_THROWS_WITH_AS(parse_hf_config(R"({"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1})",
                                         "c.json", "x"),
                         doctest::Contains("c.json: field 'model_type': missing (it reads gpt2, "), ConfigError);
}

TEST_CASE("layers that agree are one model: uniform layer_types, a window on every layer or on none") {
    const ModelPreset qwen3 = parse_hf_config(fixture("qwen3-8b.json"), "qwen3-8b.json", "qwen3-8b");
    CHECK(qwen3.n_kv_heads == 8);
    CHECK(qwen3.head_dim == 128);
    CHECK(qwen3.layer_windows.empty());
    CHECK(qwen3.max_position_embeddings == std::optional<std::uint64_t>(40960));
    const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        REQUIRE(text.find(from) != std::string::npos);
        return text.replace(text.find(from), from.size(), to);
    };
    // Qwen2 with the window switched on but max_window_layers at the layer count: no layer uses
    // it; at 0, every layer does.
    const std::string qwen2 = fixture("qwen2-half-window.json");
    const std::string layers_14 = "\"max_window_layers\": 14";
    CHECK(parse_hf_config(replaced(qwen2, layers_14, "\"max_window_layers\": 28"), "q", "q").layer_windows.empty());
    CHECK(parse_hf_config(replaced(qwen2, layers_14, "\"max_window_layers\": 0"), "q", "q").layer_windows ==
          std::vector<std::uint32_t>(28, 4096));
    // A Gemma-3 pattern of 1 makes every layer global, as transformers reads it.
    const std::string gemma3 = replaced(fixture("gemma-3-1b.json"), "\"sliding_window_pattern\": 6",
                                        "\"sliding_window_pattern\": 1");
    CHECK(parse_hf_config(gemma3, "g.json", "g").layer_windows.empty());
}

TEST_CASE("a sheet in csv keeps exact bytes and every column; table and md only the table's") {
    Sheet sheet;
    sheet.columns = {{"model", "model", Align::left, true}, {"kv_bytes", "KV", Align::right, true},
                     {"hidden", "hidden", Align::right, false}};
    sheet.rows = {{{"a,b", "a,b"}, {131072, "128 KiB"}, {7, "7"}}};
    std::ostringstream csv;
    write_sheet(csv, OutputFormat::csv, sheet);
    CHECK(csv.str() == "model,kv_bytes,hidden\n\"a,b\",131072,7\n");
    std::ostringstream json;
    write_sheet(json, OutputFormat::json, sheet);
    CHECK(nlohmann::json::parse(json.str())[0]["kv_bytes"] == 131072);
    std::ostringstream md;
    write_sheet(md, OutputFormat::md, sheet);
    CHECK(md.str().find("| a,b | 128 KiB |") != std::string::npos);
    CHECK(md.str().find("hidden") == std::string::npos);
}

}  // namespace kvbench
