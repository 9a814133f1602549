// Parsing JSON in which no object names a key twice and every number is one a double holds.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench {

// JSON that parse_json_unique_keys refuses, with the key to blame: what nlohmann would take
// silently (a key named twice) or report without a key (a number past the range of a double).
class RefusedJson : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// nlohmann keeps the last of two values under one key, so which one a file means would depend
// on its order (a roofline of "peak_gbps": 21.02, "peak_gbps": 0.001 put rows at 316,137 % of
// it): a key named twice is refused instead.
class DuplicateJsonKey : public RefusedJson {
public:
    using RefusedJson::RefusedJson;
};

// A number such as 1e400, which no double holds: nlohmann's "number overflow parsing '1e400'"
// names neither the key nor the rule.
class JsonNumberOutOfRange : public RefusedJson {
public:
    using RefusedJson::RefusedJson;
};

// Json::parse(text), throwing DuplicateJsonKey where an object names a key twice,
// JsonNumberOutOfRange for a number past a double, and what Json::parse throws otherwise.
template <class Json = nlohmann::json, class Text>
Json parse_json_unique_keys(const Text& text) {
    std::vector<std::set<std::string>> open_objects;
    std::string last_key;  // the key whose value is being read when the parser stops
    try {
        return Json::parse(text, [&open_objects, &last_key](int, typename Json::parse_event_t event, Json& parsed) {
            using Event = typename Json::parse_event_t;
            if (event == Event::object_start) {
                open_objects.emplace_back();
            } else if (event == Event::object_end) {
                open_objects.pop_back();
            } else if (event == Event::key) {
                last_key = parsed.template get<std::string>();
                if (!open_objects.back().insert(last_key).second) {
                    throw DuplicateJsonKey("the key \"" + last_key + "\" appears twice in one object");
                }
            }
            return true;
        });
    } catch (const typename Json::out_of_range& error) {
        constexpr int number_overflow = 406;  // nlohmann: "number overflow parsing '1e400'"
        if (error.id != number_overflow) throw;
        const std::string what = error.what();
        const std::size_t open = what.find('\'');
        const std::size_t close = what.rfind('\'');
        const std::string number = open < close ? what.substr(open + 1, close - open - 1) : "a number";
        throw JsonNumberOutOfRange(
            (last_key.empty() ? "the number " + number + " is" : "the key \"" + last_key + "\" holds " + number + ",") +
            " past the largest number a double holds (about 1.8e308)");
    }
}

}  // namespace kvbench
