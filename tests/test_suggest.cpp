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

TEST_CASE("a name cut short is offered every name it begins, in their order, before any typo's") {
    const std::vector<std::string> profiles{"a100-80gb-sxm", "h100-sxm", "h100-pcie", "h200", "b200"};
    CHECK(suggest_name("h100", profiles) == "h100-sxm or h100-pcie");
    CHECK(suggest_name("h10", profiles) == "h100-sxm or h100-pcie");
    CHECK(suggest_name("b20", profiles) == "b200");
    CHECK(suggest_name("h300", profiles) == "h200");  // no name begins so: the nearest
    CHECK_FALSE(suggest_name("frobnicate", profiles).has_value());
    CHECK_FALSE(suggest_name("", profiles).has_value());
}

TEST_CASE("a prefix of too many names to list falls back to the nearest name") {
    const std::vector<std::string> names{"kv-a", "kv-b", "kv-c", "kv-d", "kx"};
    CHECK(suggest_name("kv-", {"kv-a", "kv-b", "kv-c"}) == "kv-a, kv-b or kv-c");
    CHECK(suggest_name("kv", names) == "kx");
    CHECK(suggest_name("kv-", names) == "kv-a");  // one edit from it, not a list of four
}

TEST_CASE("names are listed as a sentence lists them") {
    CHECK(or_list({"a"}) == "a");
    CHECK(or_list({"a", "b"}) == "a or b");
    CHECK(or_list({"a", "b", "c"}) == "a, b or c");
}

namespace {

const std::vector<std::string> sweep_options{"-h", "--help", "-n", "--seq", "-b", "--batch", "-l", "--layers",
                                             "-t", "--threads", "--format", "--progress", "--reps", "-g",
                                             "--kv-heads", "--verify", "--yes", "-y", "-q", "--quiet", "--export"};

}  // namespace

TEST_CASE("a short option in the wrong case is the one in the right case") {
    CHECK(suggest_option("-L", "sweep", sweep_options) == "-l");
    CHECK(suggest_option("-N", "sweep", sweep_options) == "-n");
}

TEST_CASE("a short option is never matched by distance") {
    CHECK_FALSE(suggest_option("-v", "sweep", sweep_options).has_value());
    CHECK_FALSE(suggest_option("-x", "sweep", sweep_options).has_value());
}

TEST_CASE("a name with the wrong number of dashes is the known one") {
    CHECK(suggest_option("-seq", "sweep", sweep_options) == "--seq");
    CHECK(suggest_option("--n", "sweep", sweep_options) == "-n");
    CHECK(suggest_option("--SEQ", "sweep", sweep_options) == "--seq");
}

TEST_CASE("another tool's spelling is mapped where its intent is clear") {
    CHECK(suggest_option("--csv", "sweep", sweep_options) == "--format csv");
    CHECK(suggest_option("--json", "sweep", sweep_options) == "--format json");
    CHECK(suggest_option("--silent", "sweep", sweep_options) == "-q (--quiet)");
    CHECK(suggest_option("--export-csv", "sweep", sweep_options) == "--export csv:FILE");
    CHECK(suggest_option("-p", "sweep", sweep_options) == "-n (context length)");
    CHECK(suggest_option("--ctx-size", "sweep", sweep_options) == "-n (context length)");
    CHECK(suggest_option("--runs", "sweep", sweep_options) == "--reps");
}

TEST_CASE("an alias is offered only where its target exists") {
    // sweep's -p alias is not generate's (where -p is the prompt); roofline has no --format.
    CHECK_FALSE(suggest_option("-p", "generate", {"--seq", "--new"}).has_value());
    CHECK_FALSE(suggest_option("--csv", "roofline", {"-t", "--threads", "-o", "--output"}).has_value());
    CHECK(suggest_option("-n", "generate", {"-p", "--prompt", "--new"}) == "--new (new tokens)");
}

TEST_CASE("a mistyped long option gets the nearest long name") {
    CHECK(suggest_option("--kvheads", "sweep", sweep_options) == "--kv-heads");
    CHECK(suggest_option("--thread", "sweep", sweep_options) == "--threads");
    CHECK(suggest_option("--re", "sweep", sweep_options) == "--reps");
    CHECK(suggest_option("--ver", "sweep", sweep_options) == "--verify");
    CHECK_FALSE(suggest_option("--frobnicate", "sweep", sweep_options).has_value());
}

TEST_CASE("a command another tool would use is mapped, a typo matched, nonsense left alone") {
    const std::vector<std::string> commands{"sweep", "roofline", "generate"};
    CHECK(suggest_command("run", commands) == "sweep");
    CHECK(suggest_command("bench", commands) == "sweep");
    CHECK(suggest_command("swep", commands) == "sweep");
    CHECK(suggest_command("Sweep", commands) == "sweep");
    CHECK_FALSE(suggest_command("frobnicate", commands).has_value());
}
