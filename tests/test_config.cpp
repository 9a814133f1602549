#include "kvbench/engine/config.hpp"

#include "test_support.hpp"

#include <doctest/doctest.h>

using kvbench::ConfigError;
using kvbench::validate;
using kvbench::test::make_config;

TEST_CASE("a valid configuration passes validation") {
    CHECK_NOTHROW(validate(make_config(2, 128, 1024, 16, 4, 2)));
    CHECK_NOTHROW(validate(make_config(1, 1, 64, 64, 1, 1)));
}

TEST_CASE("a zero in any dimension is rejected naming its option") {
    CHECK_THROWS_WITH_AS(validate(make_config(0, 8, 64, 4, 4, 1)), "--batch 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 0, 64, 4, 4, 1)), "--seq 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 0, 4, 4, 1)), "--dim 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 0, 4, 1)), "--heads 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 0, 1)), "--kv-heads 0 must be at least 1", ConfigError);
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 4, 0)), "--layers 0 must be at least 1", ConfigError);
}

TEST_CASE("heads must divide the model dimension") {
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 100, 8, 8, 1)),
                         "--heads 8 must divide --dim 100 (try 1, 2, 4, 5, 10, 20, 25, 50 or 100, or give --head-dim)",
                         ConfigError);
}

TEST_CASE("kv heads must divide the query heads") {
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 8, 3, 1)),
                         "--kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)", ConfigError);
    CHECK_THROWS_AS(validate(make_config(1, 8, 64, 4, 8, 1)), ConfigError);
}

TEST_CASE("groupings are labelled MHA, GQA-g and MQA") {
    CHECK(kvbench::grouping_label(16, 16) == "MHA");
    CHECK(kvbench::grouping_label(16, 4) == "GQA-4");
    CHECK(kvbench::grouping_label(16, 1) == "MQA");
    CHECK(kvbench::grouping_label(1, 1) == "MHA");
}

TEST_CASE("derived widths follow the configuration") {
    const auto config = make_config(1, 8, 1024, 16, 4, 1);
    CHECK(config.head_dim() == 64);
    CHECK(config.kv_dim() == 256);
    CHECK(config.group_size() == 4);
    CHECK(config.qkv_dim() == 1024 + 2 * 256);
}

TEST_CASE("an explicit head dimension sets the widths of q, k and v apart from D") {
    // Gemma-7B: D=3072, 16 heads of 256, so q is 4096 wide.
    const auto config = make_config(1, 8, 3072, 16, 16, 1, 256);
    CHECK_NOTHROW(validate(config));
    CHECK(config.head_dim() == 256);
    CHECK(config.q_dim() == 4096);
    CHECK(config.kv_dim() == 4096);
    CHECK(config.qkv_dim() == 3 * 4096);
    const auto narrow = make_config(1, 8, 96, 4, 2, 1, 16);  // D/H would be 24
    CHECK(narrow.head_dim() == 16);
    CHECK(narrow.q_dim() == 64);
    CHECK(narrow.qkv_dim() == 64 + 2 * 32);
}

TEST_CASE("with --head-dim the heads need not divide the model dimension") {
    CHECK_NOTHROW(validate(make_config(1, 8, 100, 8, 8, 1, 16)));
    // The other rules still hold.
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 100, 8, 3, 1, 16)),
                         "--kv-heads 3 must divide --heads 8 (try 1, 2, 4 or 8)", ConfigError);
}

TEST_CASE("heads times the head dimension is bounded as --dim is") {
    CHECK_NOTHROW(validate(make_config(1, 8, 64, 4, 4, 1, kvbench::max_q_dim / 4)));
    CHECK_THROWS_WITH_AS(validate(make_config(1, 8, 64, 4, 4, 1, kvbench::max_q_dim / 4 + 1)),
                         "--head-dim 268435457: --heads 4 x --head-dim must be at most 1073741824", ConfigError);
}

TEST_CASE("a head dimension equal to D/H is the same configuration as none") {
    const auto implicit = make_config(1, 8, 1024, 16, 4, 1);
    CHECK(implicit == make_config(1, 8, 1024, 16, 4, 1, 64));
    CHECK_FALSE(implicit == make_config(1, 8, 1024, 16, 4, 1, 128));
}

TEST_CASE("describe names an explicit head dimension only") {
    CHECK(kvbench::describe(make_config(1, 8, 64, 4, 4, 1)) == "B=1 N=8 D=64 H=4 G=4 L=1");
    CHECK(kvbench::describe(make_config(1, 8, 64, 4, 4, 1, 48)) == "B=1 N=8 D=64 H=4 dh=48 G=4 L=1");
}
