// Sweep axis syntax: lists, geometric and arithmetic ranges, and every error message.
#include "cli/value_list.hpp"

#include "cli/byte_units.hpp"
#include "kvbench/engine/config.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

using namespace kvbench;
using Values = std::vector<std::size_t>;

namespace {

// The ConfigError message parse_value_list throws, or "" when it does not throw.
std::string error_of(std::string_view text, std::size_t max_value = std::size_t{1} << 30) {
    try {
        parse_value_list(text, "--seq", max_value);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a single number is a one-value list") {
    CHECK(parse_value_list("16", "--seq") == Values{16});
}

TEST_CASE("a comma list keeps the order written") {
    CHECK(parse_value_list("16,1,4", "--seq") == Values{16, 1, 4});
}

TEST_CASE("a geometric range multiplies up to its end") {
    CHECK(parse_value_list("128-4096*2", "--seq") == Values{128, 256, 512, 1024, 2048, 4096});
}

TEST_CASE("a geometric range stops before passing its end") {
    CHECK(parse_value_list("1-100*10", "--seq") == Values{1, 10, 100});
    CHECK(parse_value_list("3-100*4", "--seq") == Values{3, 12, 48});
}

TEST_CASE("an arithmetic range adds its step up to its end") {
    CHECK(parse_value_list("64-256+64", "--seq") == Values{64, 128, 192, 256});
    CHECK(parse_value_list("1-10+4", "--seq") == Values{1, 5, 9});
}

TEST_CASE("a plain range steps by one") {
    CHECK(parse_value_list("3-6", "--seq") == Values{3, 4, 5, 6});
}

TEST_CASE("a range from a value to itself is that value") {
    CHECK(parse_value_list("8-8*2", "--seq") == Values{8});
}

TEST_CASE("lists and ranges mix") {
    CHECK(parse_value_list("1,8,128-1024*2", "--seq") == Values{1, 8, 128, 256, 512, 1024});
}

TEST_CASE("duplicates are removed keeping the first") {
    CHECK(parse_value_list("4,1-4,2", "--seq") == Values{4, 1, 2, 3});
}

TEST_CASE("a geometric range near the top of size_t does not overflow") {
    const std::size_t top = std::size_t{1} << 62;
    CHECK(parse_value_list("1-4611686018427387904*1073741824", "--seq", top) ==
          Values{1, std::size_t{1} << 30, std::size_t{1} << 60});
}

TEST_CASE("the maximum value itself is allowed") {
    CHECK(parse_value_list("4096", "--seq", 4096) == Values{4096});
}

TEST_CASE("empty text is refused") {
    CHECK(error_of("") == "--seq: the list is empty (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("an empty item is refused with the whole list") {
    CHECK(error_of("1,,2") == "--seq: \"1,,2\" has an empty item (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("1,2,") == "--seq: \"1,2,\" has an empty item (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of(",1") == "--seq: \",1\" has an empty item (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("a non-number is refused with the syntax") {
    CHECK(error_of("abc") == "--seq: \"abc\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("1.5") == "--seq: \"1.5\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of(" 4") == "--seq: \" 4\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("+4") == "--seq: \"+4\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("128*2") == "--seq: \"128*2\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("a non-number inside a range names the part and the item") {
    CHECK(error_of("128-abc") ==
          "--seq: \"abc\" in \"128-abc\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("1-8*x") ==
          "--seq: \"x\" in \"1-8*x\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("1-2-3") ==
          "--seq: \"2-3\" in \"1-2-3\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("a range missing a number is refused") {
    CHECK(error_of("1-") == "--seq: \"1-\" is missing a number (use 1,4,16 or 128-4096*2 or 64-256+64)");
    CHECK(error_of("1-8*") == "--seq: \"1-8*\" is missing a number (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("zero is refused") {
    CHECK(error_of("0") == "--seq: \"0\" must be at least 1");
    CHECK(error_of("0-8*2") == "--seq: \"0\" in \"0-8*2\" must be at least 1");
}

TEST_CASE("a negative number is refused, not read as a range") {
    CHECK(error_of("-5") == "--seq: \"-5\" must be at least 1");
    CHECK(error_of("4,-5") == "--seq: \"-5\" must be at least 1");
    CHECK(error_of("-5-10") == "--seq: \"-5\" in \"-5-10\" must be at least 1");
    CHECK(error_of("5--3") == "--seq: \"-3\" in \"5--3\" must be at least 1");
}

TEST_CASE("a value above the maximum is refused") {
    CHECK(error_of("5000", 4096) == "--seq: \"5000\" must be at most 4096");
    CHECK(error_of("1-8192*2", 4096) == "--seq: \"8192\" in \"1-8192*2\" must be at most 4096");
}

TEST_CASE("a number too big for size_t is refused as above the maximum") {
    CHECK(error_of("99999999999999999999999") ==
          "--seq: \"99999999999999999999999\" must be at most 1073741824");
}

TEST_CASE("a range ending below its start is refused with the fix") {
    CHECK(error_of("4096-128*2") == "--seq: \"4096-128*2\" ends below its start (write 128-4096*2)");
    CHECK(error_of("9-3") == "--seq: \"9-3\" ends below its start (write 3-9)");
}

TEST_CASE("a geometric factor below 2 is refused") {
    CHECK(error_of("128-4096*1") == "--seq: \"128-4096*1\" has factor 1, which must be at least 2");
    CHECK(error_of("128-4096*0") == "--seq: \"128-4096*0\" has factor 0, which must be at least 2");
}

TEST_CASE("a negative geometric factor is refused as below 2") {
    CHECK(error_of("1-8*-2") == "--seq: \"1-8*-2\" has factor -2, which must be at least 2");
}

TEST_CASE("an arithmetic step of 0 is refused") {
    CHECK(error_of("64-256+0") == "--seq: \"64-256+0\" has step 0, which must be at least 1");
    CHECK(error_of("64-256+-1") == "--seq: \"64-256+-1\" has step -1, which must be at least 1");
}

TEST_CASE("a list longer than the cap is refused before it is built") {
    CHECK(error_of("1-1000000") ==
          "--seq: \"1-1000000\" makes the list longer than 10000 values (use a larger step or factor)");
    CHECK(error_of("1-9999,20000-20001") ==
          "--seq: \"20000-20001\" makes the list longer than 10000 values (use a larger step or factor)");
    CHECK(parse_value_list("1-10000", "--seq").size() == max_value_list_size);
}

TEST_CASE("the option name in the message is the one given") {
    CHECK_THROWS_WITH_AS(parse_value_list("0", "--batch"), "--batch: \"0\" must be at least 1", ConfigError);
}

// ---- one whole number (--reps, --warmup, --seed) ----

namespace {

std::string number_error_of(std::string_view text, std::uint64_t min_value = 1, std::uint64_t max_value = 100) {
    try {
        parse_whole_number(text, "--reps", min_value, max_value);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a whole number inside its range is read") {
    CHECK(parse_whole_number("20", "--reps", 1, 100) == 20);
    CHECK(parse_whole_number("0", "--warmup", 0, 100) == 0);
    CHECK(parse_whole_number("18446744073709551615", "--seed", 0, ~std::uint64_t{0}) == ~std::uint64_t{0});
}

TEST_CASE("a whole number outside its range names the bound") {
    CHECK(number_error_of("0") == "--reps: \"0\" must be at least 1");
    CHECK(number_error_of("101") == "--reps: \"101\" must be at most 100");
    CHECK(number_error_of("-3") == "--reps: \"-3\" must be at least 1");
    CHECK(number_error_of("-3", 0) == "--reps: \"-3\" must be at least 0");
}

TEST_CASE("a number too big for 64 bits is above any maximum") {
    CHECK(number_error_of("18446744073709551616", 0, ~std::uint64_t{0}) ==
          "--reps: \"18446744073709551616\" must be at most 18446744073709551615");
}

TEST_CASE("anything but digits is not a whole number") {
    for (const char* text : {"1.5", "abc", "0x10", "+4", " 4", "4 ", "1e3", "-", "--3", "-1.5"}) {
        CAPTURE(text);
        CHECK(number_error_of(text) == fmt::format("--reps: \"{}\" is not a whole number", text));
    }
    CHECK(number_error_of("") == "--reps: the value is empty (give a whole number)");
}

// ---- a parameter count (--params) ----

namespace {

std::string params_error_of(std::string_view text) {
    try {
        parse_parameter_count(text, "--params", 1, std::uint64_t{1} << 50);
    } catch (const ConfigError& error) {
        return error.what();
    }
    return "";
}

std::uint64_t params(std::string_view text) { return parse_parameter_count(text, "--params", 1, std::uint64_t{1} << 50); }

}  // namespace

TEST_CASE("a parameter count reads decimal suffixes, fractions included: 8B, 7.2B, 500M, 1.5T") {
    CHECK(params("8B") == 8'000'000'000);
    CHECK(params("8b") == 8'000'000'000);
    CHECK(params("7.2B") == 7'200'000'000);
    CHECK(params("500M") == 500'000'000);
    CHECK(params("1.5T") == 1'500'000'000'000);
    CHECK(params("124.439808M") == 124'439'808);
    CHECK(params("70K") == 70'000);
    CHECK(params("8030261248") == 8'030'261'248);
    CHECK(params("8.000B") == 8'000'000'000);
}

TEST_CASE("a parameter count that is not a whole number of parameters, or not a count, says why") {
    const std::string hint = "(K = 10^3, M = 10^6, B = 10^9, T = 10^12: 8B, 7.2B, 500M)";
    CHECK(params_error_of("1.5") == "--params: \"1.5\" is not a whole number of parameters " + hint);
    CHECK(params_error_of("1.0000000001B") == "--params: \"1.0000000001B\" is not a whole number of parameters " + hint);
    CHECK(params_error_of("8G") == "--params: \"8G\" has an unknown suffix \"G\" " + hint);
    CHECK(params_error_of("8BB") == "--params: \"8BB\" has an unknown suffix \"BB\" " + hint);
    CHECK(params_error_of("0x10") == "--params: \"0x10\" has an unknown suffix \"x10\" " + hint);
    for (const char* text : {".5B", "8.", "-8B", "eight", "8 B"}) {
        CAPTURE(text);
        CHECK(params_error_of(text) == fmt::format("--params: \"{}\" is not a parameter count {}", text, hint));
    }
    CHECK(params_error_of("") == "--params: the value is empty " + hint);
    CHECK(params_error_of("0") == "--params: \"0\" must be between 1 and 1125899906842624");
    CHECK(params_error_of("2000T") == "--params: \"2000T\" must be between 1 and 1125899906842624");
}

TEST_CASE("a count's binary suffix multiplies it by 1024, 1024^2 or 1024^3") {
    CHECK(parse_value_list("4K", "--seq") == Values{4096});
    CHECK(parse_value_list("1k", "--seq") == Values{1024});
    CHECK(parse_value_list("32Ki", "--seq") == Values{32768});
    CHECK(parse_value_list("1M", "--seq") == Values{std::size_t{1} << 20});
    CHECK(parse_value_list("1Gi", "--seq") == Values{std::size_t{1} << 30});
}

TEST_CASE("suffixes work in ranges, steps and factors") {
    CHECK(parse_value_list("1K-32K*2", "--seq") == Values{1024, 2048, 4096, 8192, 16384, 32768});
    CHECK(parse_value_list("1K-3K+1K", "--seq") == Values{1024, 2048, 3072});
    CHECK(parse_value_list("1-1M*1K", "--seq") == Values{1, 1024, std::size_t{1} << 20});
}

TEST_CASE("an unknown suffix is refused naming it and the known ones") {
    CHECK(error_of("4X") == "--seq: \"4X\" has an unknown suffix (K = 1024, M = 1024^2, G = 1024^3: 4K, 32Ki, 1M)");
    CHECK(error_of("4KB") == "--seq: \"4KB\" has an unknown suffix (K = 1024, M = 1024^2, G = 1024^3: 4K, 32Ki, 1M)");
    CHECK(error_of("K") == "--seq: \"K\" is not a whole number (use 1,4,16 or 128-4096*2 or 64-256+64)");
}

TEST_CASE("a suffixed value above the maximum is refused, overflow included") {
    CHECK(error_of("2G") == "--seq: \"2G\" must be at most 1073741824");
    CHECK(error_of("99999999999999999G") == "--seq: \"99999999999999999G\" must be at most 1073741824");
    CHECK(error_of("5K", 4096) == "--seq: \"5K\" must be at most 4096");
}

TEST_CASE("a long step-1 range is read as a likely geometric range") {
    CHECK(likely_geometric_list("128-4096") == "128-4096*2");
    CHECK(likely_geometric_list("1,8,128-4096") == "1,8,128-4096*2");
    CHECK(likely_geometric_list("1K-32K") == "1K-32K*2");
}

TEST_CASE("short, stepped or broken ranges have no likely geometric form") {
    CHECK_FALSE(likely_geometric_list("1-8").has_value());
    CHECK_FALSE(likely_geometric_list("128-4096*2").has_value());
    CHECK_FALSE(likely_geometric_list("64-4096+64").has_value());
    CHECK_FALSE(likely_geometric_list("16,32").has_value());
    CHECK_FALSE(likely_geometric_list("4096-1").has_value());
}

TEST_CASE("a count is one number, suffixes allowed") {
    CHECK(parse_count("512", "--prompt", 1, 1 << 24) == 512);
    CHECK(parse_count("2K", "--prompt", 1, 1 << 24) == 2048);
}

TEST_CASE("a count refuses a list, a range and values out of bounds") {
    const auto count_error = [](std::string_view text) {
        try {
            parse_count(text, "--prompt", 2, 4096);
        } catch (const ConfigError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    CHECK(count_error("1,2") == "--prompt: \"1,2\" must be one number, not a list or range");
    CHECK(count_error("1-8") == "--prompt: \"1-8\" must be one number, not a list or range");
    CHECK(count_error("1") == "--prompt: \"1\" must be at least 2");
    CHECK(count_error("8K") == "--prompt: \"8K\" must be at most 4096");
    CHECK(count_error("") == "--prompt: the value is empty (give a whole number)");
}

TEST_CASE("a choice is matched in any case") {
    CHECK(parse_choice("warm", "--cache-state", {"cold", "warm"}) == "warm");
    CHECK(parse_choice("WARM", "--cache-state", {"cold", "warm"}) == "warm");
    CHECK(parse_choice("Cold", "--cache-state", {"cold", "warm"}) == "cold");
}

TEST_CASE("an unknown choice lists the choices and the nearest") {
    const auto choice_error = [](std::string_view text) {
        try {
            parse_choice(text, "--progress", {"auto", "bar", "jsonl", "none"});
        } catch (const ConfigError& error) {
            return std::string(error.what());
        }
        return std::string();
    };
    CHECK(choice_error("jsnl") == "--progress: \"jsnl\" is not one of auto, bar, jsonl or none (did you mean jsonl?)");
    CHECK(choice_error("loud") == "--progress: \"loud\" is not one of auto, bar, jsonl or none");
    CHECK(choice_error("") == "--progress: \"\" is not one of auto, bar, jsonl or none");
}

TEST_CASE("counts and byte sizes read K, M and G alike") {
    for (const char* text : {"4K", "32K", "1M", "2G"}) {
        CAPTURE(text);
        CHECK(parse_value_list(text, "--seq", std::size_t{1} << 40).front() == parse_byte_size(text, "--max-memory"));
    }
}
