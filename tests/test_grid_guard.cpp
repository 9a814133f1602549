// The --yes bounds: points and estimated time, and the likely intent in the refusal.
#include "cli/grid_guard.hpp"

#include "kvbench/engine/config.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace kvbench;

namespace {

// The ConfigError message confirm_grid_size throws, or "" when it lets the grid run.
std::string refusal(std::size_t n_points, double estimated_s, const std::optional<std::string>& intent = {},
                    bool confirmed = false, std::optional<double> cached_path_s = std::nullopt) {
    try {
        confirm_grid_size(n_points, estimated_s, intent, confirmed, "kvbench sweep", cached_path_s);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a grid within both bounds runs without --yes") {
    CHECK(refusal(max_unconfirmed_points, max_unconfirmed_seconds) == "");
    CHECK(refusal(1, 1) == "");
}

TEST_CASE("one point over the bound is refused with the count and the way out") {
    const std::string message = refusal(max_unconfirmed_points + 1, 10);
    CHECK(message.find("the grid has 201 points") != std::string::npos);
    CHECK(message.find("give --yes to run it as it is") != std::string::npos);
    CHECK(message.find("list it with kvbench sweep --dry-run") != std::string::npos);
}

TEST_CASE("a few points estimated above an hour are refused, the time in hours") {
    const std::string message = refusal(3, 2 * max_unconfirmed_seconds);
    CHECK(message.find("the grid has 3 points, about 2.0 h to measure") != std::string::npos);
}

TEST_CASE("a long grid's time is given in minutes below an hour") {
    CHECK(refusal(300, 20 * 60).find("the grid has 300 points, about 20 min to measure") != std::string::npos);
}

TEST_CASE("the refusal names the likely intent") {
    CHECK(refusal(3969, 1e5, std::string("-n 128-4096*2")).find("did you mean -n 128-4096*2?") != std::string::npos);
}

TEST_CASE("a grid long for its uncached path is offered --paths cached, with that path's time") {
    const std::string message = refusal(1, 3.1 * 3600, {}, false, 6 * 60);
    CHECK(message.find("about 3.1 h to measure") != std::string::npos);
    CHECK(message.find("--paths cached would take about 6 min, the uncached path being the rest; or give --yes") !=
          std::string::npos);
    CHECK(message.find("list it with kvbench sweep --dry-run") != std::string::npos);
}

TEST_CASE("--paths cached is not offered where the cached path is most of the time, nor without its estimate") {
    CHECK(refusal(1, 2 * 3600, {}, false, 1.5 * 3600).find("--paths cached") == std::string::npos);
    CHECK(refusal(1, 2 * 3600).find("--paths cached") == std::string::npos);
}

TEST_CASE("the likely intent comes first, then --paths cached") {
    const std::string message = refusal(3969, 1e5, std::string("-n 128-4096*2"), false, 100);
    CHECK(message.find("did you mean -n 128-4096*2? Or --paths cached would take about") != std::string::npos);
}

TEST_CASE("--yes runs any grid") {
    CHECK(refusal(100000, 1e9, {}, true) == "");
}

TEST_CASE("the likely intent is the first axis with a long step-1 range") {
    CHECK(likely_grid_intent({{"-n", "128-4096"}, {"-b", "1-64"}}) == "-n 128-4096*2");
    CHECK(likely_grid_intent({{"-n", "128-4096*2"}, {"-b", "1-64"}}) == "-b 1-64*2");
    CHECK_FALSE(likely_grid_intent({{"-n", "128-4096*2"}, {"-t", ""}}).has_value());
}
