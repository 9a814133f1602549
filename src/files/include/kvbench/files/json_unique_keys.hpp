// Parsing JSON in which no object names a key twice.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvbench {

// nlohmann keeps the last of two values under one key, so which one a file means would depend
// on its order (a roofline of "peak_gbps": 21.02, "peak_gbps": 0.001 put rows at 316,137 % of
// it): a key named twice is refused instead.
class DuplicateJsonKey : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Json::parse(text), throwing DuplicateJsonKey where an object names a key twice, and what
// Json::parse throws otherwise.
template <class Json = nlohmann::json, class Text>
Json parse_json_unique_keys(const Text& text) {
    std::vector<std::set<std::string>> open_objects;
    return Json::parse(text, [&open_objects](int, typename Json::parse_event_t event, Json& parsed) {
        using Event = typename Json::parse_event_t;
        if (event == Event::object_start) {
            open_objects.emplace_back();
        } else if (event == Event::object_end) {
            open_objects.pop_back();
        } else if (event == Event::key) {
            const std::string key = parsed.template get<std::string>();
            if (!open_objects.back().insert(key).second) {
                throw DuplicateJsonKey("the key \"" + key + "\" appears twice in one object");
            }
        }
        return true;
    });
}

}  // namespace kvbench
