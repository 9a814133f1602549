#include "cli/suggest.hpp"

#include <doctest/doctest.h>

using namespace kvbench;

TEST_CASE("edit distance counts insertions, deletions, substitutions and swaps") {
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("seq", "seq") == 0);
    CHECK(edit_distance("--sqe", "--seq") == 1);
    CHECK(edit_distance("ab", "ba") == 1);
    CHECK(edit_distance("abc", "") == 3);
    CHECK(edit_distance("--hed", "--heads") == 2);
    CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("a mistyped option is matched to the nearest known one and nonsense to none") {
    const std::vector<std::string> options{"--seq", "--batch", "--dim", "--heads", "--kv-heads", "--layers"};
    CHECK(closest_name("--sqe", options) == "--seq");
    CHECK(closest_name("--kvheads", options) == "--kv-heads");
    CHECK(closest_name("--layer", options) == "--layers");
    CHECK_FALSE(closest_name("--frobnicate", options).has_value());
    CHECK(closest_name("swep", {"sweep", "roofline"}) == "sweep");
}
